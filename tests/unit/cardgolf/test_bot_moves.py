"""Every bot returns a legal move whatever it is given: random playouts of each level and personality on every
preset and on house-rule options (flip as a turn, going out early, speed golf, the new powers), and views whose
legal moves are cut down to arbitrary subsets, including move kinds a bot does not value."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from golf.engine.cardgolf.bots import LEVELS, PERSONALITIES, Bot, make_bot, parse_bot_name
from golf.engine.cardgolf.bots.base import PERSONALITY_TUNING
from golf.engine.cardgolf.bots.greedy import fallback_move
from golf.engine.cardgolf.bots.strong import StrongBot
from golf.engine.cardgolf.match import deal_hole
from golf.engine.cardgolf.moves import (
    Discard,
    DrawDiscard,
    DrawStock,
    Flip,
    FlipAll,
    Keep,
    Knock,
    Move,
    Pass,
    PeekStroke,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.options import FlipRule, Power
from golf.engine.cardgolf.play import play_hole
from golf.engine.cardgolf.presets import PRESETS, SIX_CARD
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.state import HoleState, Phase
from golf.engine.cardgolf.view import SeatView, view

LEVEL_NAMES = [lv.name for lv in LEVELS]
STYLED = [f"{lv.name}+{p.name}" for lv in LEVELS if lv.rank > 0 for p in PERSONALITIES]
SEARCHING = {"advanced", "strong"}

OPTIONS: dict[str, GolfRules] = {
    "flip-as-turn": replace(SIX_CARD, flip_as_turn=True),
    "early-out": replace(SIX_CARD, early_out=True),
    "speed-golf": replace(SIX_CARD, flip_after_discard=FlipRule.COMPULSORY),
    "endgame-flip": replace(SIX_CARD, flip_after_discard=FlipRule.ENDGAME),
    "nine-card-early-out-flip-turn": replace(PRESETS["nine-card"], flip_as_turn=True, early_out=True),
    "powers-all": replace(
        PRESETS["powers"],
        powers=(
            *PRESETS["powers"].powers,
            ("8", Power.DRAW_TWO),
            ("5", Power.SHIELD),
            ("2", Power.TWO_POWERS),
            ("A", Power.ADD_OR_REMOVE),
        ),
    ),
}


def _light(name: str, seed: int) -> Bot:
    """``make_bot(name)``, but a search level with few playouts: the moves it may choose are the same kinds, found
    faster (these tests check legality, the bench measures strength)."""
    spec = parse_bot_name(name)
    if spec.level.name not in SEARCHING:
        return make_bot(name, seed)
    tuning = PERSONALITY_TUNING[spec.personality.name] if spec.personality is not None else None
    return StrongBot(seed, rollouts=16, max_candidates=3, step_budget=600, tuning=tuning, name=spec.name)


def _play_checked(
    rules: GolfRules, names: list[str], seed: str, *, light: bool = False, seen: Counter[str] | None = None
) -> HoleState:
    """Play one hole, asserting before each move that the bot chose one of its view's legal moves (counted in
    ``seen`` by phase and kind)."""
    names = names + ["greedy"] * (rules.min_players - len(names))  # six-card with jokers seats four or more
    bots = [(_light if light else make_bot)(name, i + 7) for i, name in enumerate(names)]

    def check(state: HoleState, seat: int, move: Move) -> None:
        legal = view(state, seat).legal_moves
        assert move in legal, f"{names[seat]} chose {move} in {state.phase}; legal: {legal}"
        if seen is not None:
            seen[f"{state.phase.value} {type(move).__name__}"] += 1

    final = play_hole(deal_hole(rules, len(names), seed, 0), bots, check)
    assert final.over and final.phase is Phase.OVER
    return final


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_level_plays_a_whole_hole_of_every_preset_with_legal_moves(preset: str) -> None:
    for i, name in enumerate(LEVEL_NAMES):
        _play_checked(PRESETS[preset], [name, LEVEL_NAMES[(i + 2) % len(LEVEL_NAMES)]], f"levels:{preset}:{i}")


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_personality_plays_a_whole_hole_of_every_preset_with_legal_moves(preset: str) -> None:
    for i, name in enumerate(STYLED):
        _play_checked(PRESETS[preset], [name, "random", "greedy"], f"styles:{preset}:{i}", light=True)


EXPECTED: dict[str, set[str]] = {
    "flip-as-turn": {"draw Flip"},
    "early-out": {"draw FlipAll"},
    "speed-golf": {"flip Flip"},
    "endgame-flip": set(),
    "nine-card-early-out-flip-turn": {"draw Flip", "draw FlipAll"},
    "powers-all": {"place UsePower", "choose Keep"},
}
"""Moves the bots choose under each option (not only fall back on): the option's own move kinds."""


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_every_level_plays_house_rule_options_with_legal_moves(option: str) -> None:
    seen: Counter[str] = Counter()
    for i, name in enumerate(LEVEL_NAMES):
        for hole in range(2):
            seed = f"options:{option}:{i}:{hole}"
            _play_checked(OPTIONS[option], [name, "greedy+racer", "advanced+gambler"], seed, light=hole > 0, seen=seen)
    assert EXPECTED[option] <= set(seen), seen


def _views(rules: GolfRules, holes: int) -> list[SeatView]:
    """Views of the seat to move at every step of a few holes of greedy play (setup excluded)."""
    out: list[SeatView] = []

    def keep(state: HoleState, seat: int, _move: Move) -> None:
        if state.phase is not Phase.SETUP:
            out.append(view(state, seat))

    for hole in range(holes):
        play_hole(deal_hole(rules, 2, "subsets", hole), [make_bot("greedy", 1), make_bot("random", 2)], keep)
    return out


FOREIGN: list[Move] = [
    FlipAll(),
    Flip(0),
    Flip(5),
    Keep(0, 1),
    Keep(2, 3),
    UsePower(power=Power.PEEK_OWN.value, position=1),
    UsePower(power="no_such_power", seat=1, position=0),
    UsePower(1, 2, 3),
    UsePower(),
    Pass(),
    PeekStroke(2),
    Knock(),
    Swap(17),
]
"""Moves of every kind, some a bot cannot value (an unknown power, a position off the grid)."""


@pytest.mark.parametrize("name", [*LEVEL_NAMES, "greedy+racer", "beginner+cautious", "strong+pair-hunter"])
def test_a_bot_returns_one_of_any_legal_moves_it_is_given(name: str) -> None:
    rng = random.Random(name)
    bot = make_bot(name, 3)
    views = _views(PRESETS["six-card"], 2) + _views(PRESETS["powers"], 1)
    for v in views[:: 3 if name in SEARCHING else 1]:
        pool = list(v.legal_moves) + FOREIGN + [DrawStock(), DrawDiscard(), Discard()]
        for _ in range(3):
            subset = tuple(rng.sample(pool, rng.randint(1, min(6, len(pool)))))
            given = replace(v, legal_moves=subset)
            assert bot.choose(given) in subset


def test_the_fallback_prefers_the_phases_plain_move_and_never_ends_the_hole_needlessly() -> None:
    v = _views(PRESETS["six-card"], 1)[0]
    assert fallback_move(replace(v, phase=Phase.DRAW, legal_moves=(Knock(), FlipAll(), DrawStock()))) == DrawStock()
    assert fallback_move(replace(v, phase=Phase.DRAW, legal_moves=(Knock(), Flip(2)))) == Flip(2)
    assert fallback_move(replace(v, phase=Phase.PLACE, legal_moves=(Swap(1), Discard()))) == Discard()
    assert fallback_move(replace(v, phase=Phase.POWER, legal_moves=(UsePower(1, 2), Pass()))) == Pass()
    assert fallback_move(replace(v, phase=Phase.DRAW, legal_moves=(Knock(),))) == Knock()
