"""Six-card with jokers as its text (seed 001) plays it: four or more players, a two is worth 2 ("all other cards are
face value"), the top two cards are turned up at the deal, not chosen, and once a player has turned up every card the
others look at their face-down cards before their last turn. The options are open to any table; rules that do not
use them keep the canonical text (and commitment) they had."""

from __future__ import annotations

from dataclasses import replace

import pytest

from golf.engine.cardgolf import (
    DrawStock,
    GolfRules,
    Phase,
    StartMode,
    Swap,
    deal,
    parse_cards,
    preset,
    score_grid,
    view,
)
from golf.engine.cardgolf.rules import ADDED_OPTIONS

JOKERS = preset("six-card-jokers")


def test_a_two_is_worth_its_face_value() -> None:
    # "All Kings are 0 points, all Jokers are -2 points, all Aces are 1 point, all Queens & Jacks are 10 points, and
    # all other cards are face value": 2 + 3 + 0 + 4 + 5 + 6, no pair side by side.
    assert score_grid(parse_cards("2C 3D KC 4H 5D 6S"), JOKERS).total == 20
    assert score_grid(parse_cards("2C 2D XB XR 5D 6S"), JOKERS).total == 0 - 4 + 11  # a pair of twos is 0 still
    assert score_grid(parse_cards("2C 3D KC 4H 5D 6S"), preset("six-card-jokers", 2)).total == 16  # stored tables


def test_four_or_more_players() -> None:
    assert JOKERS.min_players == 4
    for players in (2, 3):
        with pytest.raises(ValueError, match="players: these rules are for 4 or more players"):
            deal(JOKERS, players, "few")
    assert deal(JOKERS, 4, "four").players == 4 and deal(JOKERS, 8, "eight").players == 8
    assert deal(preset("six-card-jokers", 2), 2, "stored").players == 2  # a table stored at version 2 still deals


def test_the_top_two_cards_are_turned_up_at_the_deal() -> None:
    s = deal(JOKERS, 4, "seed-001")
    assert s.phase is Phase.DRAW and all(s.ready)
    assert all(up == (True, True, False, False, False, False) for up in s.face_up)
    seen = view(s, 1)
    assert all(seen.grids[seat][p] == s.grids[seat][p] for seat in range(4) for p in (0, 1))
    assert all(seen.grids[seat][p] is None for seat in range(4) for p in range(2, 6))


def test_fixed_start_cards_of_a_peek_game_are_known_to_their_owner_only() -> None:
    rules = replace(preset("four-card"), start_fixed=True)
    assert rules.start_mode is StartMode.PEEK
    s = deal(rules, 2, "peek")
    assert s.phase is Phase.DRAW and not any(any(up) for up in s.face_up)
    assert s.known == (frozenset({(0, 0), (0, 1)}), frozenset({(1, 0), (1, 1)}))
    assert view(s, 0).grids[0][0] == s.grids[0][0] and view(s, 1).grids[0][0] is None


def test_the_others_look_at_their_face_down_cards_once_a_player_is_out() -> None:
    s = deal(JOKERS, 4, "out")
    s = replace(s, face_up=((True,) * 5 + (False,), *s.face_up[1:]))
    out = s.apply(0, DrawStock()).apply(0, Swap(5))
    assert out.ender == 0 and out.turn == 1 and not out.over
    down = {(1, p) for p, up in enumerate(out.face_up[1]) if not up}
    assert down and down <= out.known[1]
    assert all(view(out, 1).grids[1][p] == out.grids[1][p] for _, p in down)
    assert all(view(out, 0).grids[1][p] is None for _, p in down), "only their owner looks"
    plain = replace(s, rules=replace(JOKERS, look_before_last_turn=False))
    assert not plain.apply(0, DrawStock()).apply(0, Swap(5)).known[1]


def test_rules_without_the_added_options_keep_their_canonical_text() -> None:
    text = GolfRules().canonical()
    assert not any(f'"{name}"' in text for name in ADDED_OPTIONS)
    assert GolfRules.from_canonical(text) == GolfRules()
    assert GolfRules.from_canonical(JOKERS.canonical()) == JOKERS
    assert '"start_fixed":true' in JOKERS.canonical() and '"look_before_last_turn":true' in JOKERS.canonical()
