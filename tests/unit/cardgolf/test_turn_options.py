"""House rules of the turn: a flip as a whole turn, going out early by turning up the last one or two cards, the
flip after a discard only in the endgame; and who went out first."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from golf.engine.cardgolf import (
    Discard,
    DrawStock,
    EndReason,
    Flip,
    FlipRule,
    GolfRules,
    HoleState,
    IllegalMove,
    Pass,
    Phase,
    Refusal,
    Reveal,
    Swap,
    deal,
    parse_move,
    preset,
)
from golf.engine.cardgolf.moves import FlipAll

SIX = preset("six-card")


def started(rules: GolfRules, players: int = 2) -> HoleState:
    state = deal(rules, players, "turns")
    for seat in range(players):
        state = state.apply(seat, Reveal((0, 1)))
    return state


def refused(state: HoleState, seat: int, move: object, reason: Refusal) -> None:
    with pytest.raises(IllegalMove) as info:
        state.apply(seat, move)  # type: ignore[arg-type]
    assert info.value.reason is reason


def down_to(state: HoleState, seat: int, left: int) -> HoleState:
    """``seat``'s grid with only its last ``left`` cards face down."""
    n = len(state.face_up[seat])
    row = tuple(p < n - left for p in range(n))
    return replace(state, face_up=tuple(row if s == seat else f for s, f in enumerate(state.face_up)))


def test_a_flip_as_a_whole_turn() -> None:
    s = started(replace(SIX, flip_as_turn=True))
    assert Flip(3) in s.legal_moves() and Flip(0) not in s.legal_moves()
    after = s.apply(0, Flip(3))
    assert after.face_up[0][3] and after.turn == 1 and after.phase is Phase.DRAW and after.turns == 1
    refused(s, 0, Flip(0), Refusal.ALREADY_FACE_UP)
    plain = started(SIX)
    assert not any(isinstance(m, Flip) for m in plain.legal_moves())
    refused(plain, 0, Flip(3), Refusal.WRONG_PHASE)


def test_a_flip_as_a_turn_that_turns_up_the_last_card_goes_out() -> None:
    s = down_to(started(replace(SIX, flip_as_turn=True)), 0, 1)
    after = s.apply(0, Flip(5))
    assert after.ender == 0 and after.went_out == 0 and after.end_reason is EndReason.ALL_FACE_UP


@pytest.mark.parametrize("left", [1, 2])
def test_going_out_early_turns_up_the_last_cards(left: int) -> None:
    s = down_to(started(replace(SIX, early_out=True)), 0, left)
    assert FlipAll() in s.legal_moves()
    out = s.apply(0, FlipAll())
    assert all(out.face_up[0]) and out.ender == 0 and out.went_out == 0 and out.turn == 1
    assert Counter(out.all_cards()) == Counter(s.all_cards())
    finished = out.apply(1, DrawStock()).apply(1, Discard())
    assert finished.over and finished.end_reason is EndReason.ALL_FACE_UP


def test_going_out_early_needs_the_rule_one_or_two_cards_and_nobody_out() -> None:
    three = down_to(started(replace(SIX, early_out=True)), 0, 3)
    assert FlipAll() not in three.legal_moves()
    refused(three, 0, FlipAll(), Refusal.EARLY_OUT_NOT_ALLOWED)
    refused(down_to(started(SIX), 0, 2), 0, FlipAll(), Refusal.EARLY_OUT_NOT_ALLOWED)
    after_out = replace(down_to(started(replace(SIX, early_out=True)), 0, 2), ender=1)
    refused(after_out, 0, FlipAll(), Refusal.EARLY_OUT_NOT_ALLOWED)
    with pytest.raises(ValueError, match="early_out"):
        replace(SIX, early_out=True, end_on_all_face_up=False, knocking=True).validate()
    assert parse_move("flip-all") == FlipAll()


def test_the_endgame_flip_comes_only_once_someone_has_one_card_down() -> None:
    rules = replace(SIX, flip_after_discard=FlipRule.ENDGAME)
    early = started(rules).apply(0, DrawStock()).apply(0, Discard())
    assert early.phase is Phase.DRAW and early.turn == 1  # four cards down each: no flip yet
    late = down_to(started(rules), 1, 1)  # the opponent has one card left face down
    flip = late.apply(0, DrawStock()).apply(0, Discard())
    assert flip.phase is Phase.FLIP and Pass() in flip.legal_moves()
    assert flip.apply(0, Pass()).turn == 1
    assert flip.apply(0, Flip(2)).face_up[0][2]


def test_the_first_to_turn_up_every_card_is_remembered() -> None:
    s = down_to(started(SIX), 0, 1)
    out = s.apply(0, DrawStock()).apply(0, Swap(5))
    assert out.went_out == 0
    later = down_to(out, 1, 1).apply(1, DrawStock()).apply(1, Swap(5))
    assert later.over and later.went_out == 0
