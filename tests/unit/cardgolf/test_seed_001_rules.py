"""Six-card with jokers as its text (seed 001) plays it: the top two cards are turned up at the deal, not chosen, and
once a player has turned up every card the others look at their face-down cards before their last turn. Both are
options any table may switch on; rules that do not use them keep the canonical text (and commitment) they had."""

from __future__ import annotations

from dataclasses import replace

from golf.engine.cardgolf import DrawStock, GolfRules, Phase, StartMode, Swap, deal, preset, view
from golf.engine.cardgolf.rules import ADDED_OPTIONS

JOKERS = preset("six-card-jokers")


def test_the_top_two_cards_are_turned_up_at_the_deal() -> None:
    s = deal(JOKERS, 3, "seed-001")
    assert s.phase is Phase.DRAW and all(s.ready)
    assert all(up == (True, True, False, False, False, False) for up in s.face_up)
    seen = view(s, 1)
    assert all(seen.grids[seat][p] == s.grids[seat][p] for seat in range(3) for p in (0, 1))
    assert all(seen.grids[seat][p] is None for seat in range(3) for p in range(2, 6))


def test_fixed_start_cards_of_a_peek_game_are_known_to_their_owner_only() -> None:
    rules = replace(preset("four-card"), start_fixed=True)
    assert rules.start_mode is StartMode.PEEK
    s = deal(rules, 2, "peek")
    assert s.phase is Phase.DRAW and not any(any(up) for up in s.face_up)
    assert s.known == (frozenset({(0, 0), (0, 1)}), frozenset({(1, 0), (1, 1)}))
    assert view(s, 0).grids[0][0] == s.grids[0][0] and view(s, 1).grids[0][0] is None


def test_the_others_look_at_their_face_down_cards_once_a_player_is_out() -> None:
    s = deal(JOKERS, 2, "out")
    s = replace(s, face_up=((True,) * 5 + (False,), s.face_up[1]))
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
