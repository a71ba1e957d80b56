"""Bot levels and personalities: the catalogue, the names ``make_bot`` takes (old stored names included), seeded
determinism, and that personalities really play differently."""

from __future__ import annotations

from collections import Counter

import pytest

from golf.engine.cardgolf.bots import (
    BOT_NAMES,
    LEVELS,
    PERSONALITIES,
    bot_cost,
    bot_name,
    canonical_name,
    catalogue,
    is_bot_name,
    make_bot,
    parse_bot_name,
)
from golf.engine.cardgolf.bots.base import PERSONALITY_TUNING
from golf.engine.cardgolf.match import deal_hole
from golf.engine.cardgolf.moves import Move, Swap
from golf.engine.cardgolf.outcome import hole_result
from golf.engine.cardgolf.play import play_hole
from golf.engine.cardgolf.presets import PRESETS
from golf.engine.cardgolf.state import HoleState, Phase, Source


def test_there_are_at_least_four_levels_from_beginner_to_expert() -> None:
    ranks = [lv.rank for lv in LEVELS]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)
    assert {"beginner", "greedy", "advanced", "strong"} <= set(BOT_NAMES)
    assert parse_bot_name("beginner").level.rank < parse_bot_name("expert").level.rank
    assert sum(1 for lv in LEVELS if lv.rank >= 1) >= 4


@pytest.mark.parametrize("stored", ["random", "greedy", "strong"])
def test_the_names_stored_with_old_tables_still_make_their_bots(stored: str) -> None:
    assert stored in BOT_NAMES
    assert canonical_name(stored) == stored
    assert make_bot(stored, 1).name == stored


def test_aliases_are_stored_by_their_levels_name() -> None:
    assert canonical_name("intermediate") == "greedy"
    assert canonical_name("Expert") == "strong"
    assert canonical_name("expert+racer") == "strong+racer"
    assert bot_name("intermediate", "pair-hunter") == "greedy+pair-hunter"
    assert bot_name("advanced") == "advanced"
    assert make_bot("expert", 3).name == "strong"


@pytest.mark.parametrize("bad", ["", "grandmaster", "strong+reckless", "random+racer", "greedy+"])
def test_unknown_names_are_refused(bad: str) -> None:
    assert not is_bot_name(bad)
    with pytest.raises(ValueError):
        make_bot(bad)


def test_the_catalogue_lists_every_level_and_every_personality_of_each_level_but_random() -> None:
    entries = catalogue()
    names = [name for name, _, _ in entries]
    assert len(names) == len(set(names))
    assert set(BOT_NAMES) <= set(names)
    with_style = [n for n in names if "+" in n]
    assert len(with_style) == (len(LEVELS) - 1) * len(PERSONALITIES)
    for name, rank, description in entries:
        assert is_bot_name(name) and canonical_name(name) == name
        assert parse_bot_name(name).level.rank == rank
        assert description
        assert make_bot(name, 0).name == name
    assert set(PERSONALITY_TUNING) == {p.name for p in PERSONALITIES}


def test_search_levels_cost_more_than_one_step_levels() -> None:
    assert bot_cost("random") == bot_cost("greedy") == 1
    assert 1 < bot_cost("advanced") < bot_cost("strong") == bot_cost("strong+gambler")
    assert bot_cost("nonsense") == 1


def _moves(name: str, seed: int, holes: int, preset: str = "six-card") -> list[tuple[int, Move]]:
    rules = PRESETS[preset]
    out: list[tuple[int, Move]] = []

    def record(_state: HoleState, seat: int, move: Move) -> None:
        out.append((seat, move))

    for hole in range(holes):
        play_hole(deal_hole(rules, 2, "levels", hole), [make_bot(name, seed), make_bot("greedy", 9)], record)
    return out


@pytest.mark.parametrize("name", ["random", "beginner", "greedy+gambler", "advanced+racer", "strong"])
def test_a_bot_is_deterministic_for_its_seed(name: str) -> None:
    holes = 1 if parse_bot_name(name).level.rank >= 3 else 3
    assert _moves(name, 5, holes) == _moves(name, 5, holes)


def test_the_beginners_hunches_depend_on_its_seed() -> None:
    assert _moves("beginner", 1, 3) != _moves("beginner", 2, 3)


def _style(name: str, holes: int) -> tuple[float, float, float]:
    """(share of the cards drawn from the stock it kept, holes the bot ended, matched columns per hole)."""
    rules = PRESETS["six-card"]
    kept = Counter[bool]()
    ended = pairs = 0
    for hole in range(holes):

        def watch(state: HoleState, seat: int, move: Move) -> None:
            if seat == 0 and state.phase is Phase.PLACE and state.held_from is Source.STOCK:
                kept[isinstance(move, Swap)] += 1

        final = play_hole(deal_hole(rules, 2, "style", hole), [make_bot(name, 1), make_bot("greedy", 2)], watch)
        ended += final.ender == 0
        pairs += sum(1 for line in hole_result(final).seats[0].grid.lines if line.rule == "column")
    return kept[True] / max(1, sum(kept.values())), ended / holes, pairs / holes


def test_personalities_feel_different_at_the_table() -> None:
    holes = 30
    plain = _style("greedy", holes)
    racer = _style("greedy+racer", holes)
    cautious = _style("greedy+cautious", holes)
    hunter = _style("greedy+pair-hunter", holes)
    gambler = _style("greedy+gambler", holes)
    # The racer goes out more often than the cautious bot; the gambler keeps more of its draws than the cautious
    # one; the pair hunter makes more matched columns than the plain level.
    assert racer[1] > cautious[1]
    assert gambler[0] > cautious[0]
    assert hunter[2] > plain[2]
