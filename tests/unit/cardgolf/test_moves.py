"""Turns, refusals, the end of a hole, knocker scoring, powers, the reshuffled stock."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from golf.engine.cardgolf import (
    Discard,
    DrawDiscard,
    DrawStock,
    EndReason,
    Flip,
    GolfRules,
    HoleState,
    IllegalMove,
    Knock,
    KnockerBonus,
    KnockerPenalty,
    Pass,
    PeekStroke,
    Phase,
    Power,
    Refusal,
    Reveal,
    Swap,
    UsePower,
    deal,
    hole_result,
    parse_card,
    parse_cards,
    parse_move,
    preset,
    view,
)
from golf.engine.cardgolf.options import FlipRule, StockOut

SIX = preset("six-card")


def started(rules: GolfRules = SIX, players: int = 2, seed: str = "t") -> HoleState:
    state = deal(rules, players, seed)
    for seat in range(players):
        if not state.ready[seat]:
            state = state.apply(seat, Reveal(tuple(range(rules.start_cards))))
    return state


def refused(state: HoleState, seat: int, move: object, reason: Refusal) -> None:
    with pytest.raises(IllegalMove) as info:
        state.apply(seat, move)  # type: ignore[arg-type]
    assert info.value.reason is reason


def test_deal_shapes_and_determinism() -> None:
    a, b = deal(SIX, 3, "x"), deal(SIX, 3, "x")
    assert a == b
    assert [len(g) for g in a.grids] == [6, 6, 6]
    assert len(a.all_cards()) == 52 and len(a.discard) == 1
    assert deal(SIX, 5, "x").rules.decks_for(5) == 2
    assert len(deal(preset("nine-card"), 2, "x").all_cards()) == 104


def test_setup_refusals() -> None:
    s = deal(SIX, 2, "t")
    assert s.phase is Phase.SETUP
    refused(s, 0, DrawStock(), Refusal.WRONG_PHASE)
    refused(s, 0, Reveal((0,)), Refusal.WRONG_REVEAL_COUNT)
    refused(s, 0, Reveal((1, 1)), Refusal.DUPLICATE_POSITION)
    refused(s, 0, Reveal((0, 9)), Refusal.NO_SUCH_POSITION)
    s1 = s.apply(1, Reveal((0, 3)))  # setup in any order
    refused(s1, 1, Reveal((1, 2)), Refusal.ALREADY_REVEALED)
    s2 = s1.apply(0, Reveal((2, 5)))
    assert s2.phase is Phase.DRAW and s2.turn == 0
    assert s2.face_up[1] == (True, False, False, True, False, False)


def test_turn_refusals() -> None:
    s = started()
    refused(s, 1, DrawStock(), Refusal.NOT_YOUR_TURN)
    refused(s, 0, Swap(0), Refusal.WRONG_PHASE)
    refused(s, 0, Knock(), Refusal.KNOCK_NOT_ALLOWED)
    refused(s, 0, PeekStroke(2), Refusal.PEEK_NOT_ALLOWED)
    refused(s, 5, DrawStock(), Refusal.NO_SUCH_SEAT)
    taken = s.apply(0, DrawDiscard())
    refused(taken, 0, Discard(), Refusal.MUST_SWAP_TAKEN_DISCARD)
    refused(taken, 0, Swap(6), Refusal.NO_SUCH_POSITION)
    refused(taken, 0, DrawStock(), Refusal.WRONG_PHASE)
    refused(taken, 0, UsePower(), Refusal.NO_POWER)
    assert Discard() not in taken.legal_moves()


def test_swap_and_discard() -> None:
    s = started()
    top = s.discard_top
    after = s.apply(0, DrawDiscard()).apply(0, Swap(4))
    assert after.grids[0][4] == top and after.face_up[0][4]
    assert after.discard_top == s.grids[0][4]
    assert after.turn == 1 and after.phase is Phase.DRAW
    drawn = after.apply(1, DrawStock())
    assert drawn.held == s.stock[-1]
    thrown = drawn.apply(1, Discard())
    assert thrown.discard_top == s.stock[-1] and thrown.turn == 0


def test_flip_after_discard_optional_and_compulsory() -> None:
    opt = started(replace(SIX, flip_after_discard=FlipRule.OPTIONAL))
    s = opt.apply(0, DrawStock()).apply(0, Discard())
    assert s.phase is Phase.FLIP and Pass() in s.legal_moves()
    refused(s, 0, Flip(0), Refusal.ALREADY_FACE_UP)
    assert s.apply(0, Pass()).turn == 1
    assert s.apply(0, Flip(2)).face_up[0][2]
    comp = started(replace(SIX, flip_after_discard=FlipRule.COMPULSORY))
    c = comp.apply(0, DrawStock()).apply(0, Discard())
    refused(c, 0, Pass(), Refusal.FLIP_REQUIRED)
    assert Pass() not in c.legal_moves()


def _go_out(state: HoleState, seat: int) -> HoleState:
    """Swap into every face-down position of ``seat`` on its turns, the others discarding."""
    while state.ender is None:
        s = state.turn
        state = state.apply(s, DrawStock())
        down = [p for p, up in enumerate(state.face_up[s]) if not up]
        state = state.apply(s, Swap(down[0]) if s == seat else Discard())
    return state


def test_final_turns_then_reveal() -> None:
    s = _go_out(started(), 0)
    assert s.ender == 0 and s.end_reason is EndReason.ALL_FACE_UP and s.turn == 1 and not s.over
    v = view(s, None)
    assert v.ender == 0
    s = s.apply(1, DrawStock()).apply(1, Discard())
    assert s.over and all(all(row) for row in s.face_up)
    result = hole_result(s)
    assert result.ender == 0 and len(result.scores) == 2
    refused(s, 0, DrawStock(), Refusal.HOLE_OVER)


def test_end_at_once() -> None:
    s = _go_out(started(replace(SIX, final_turns=False)), 0)
    assert s.over and s.end_reason is EndReason.ALL_FACE_UP


def test_knock_gives_one_more_turn_each() -> None:
    s = started(preset("four-card"), players=3)
    s = s.apply(0, Knock())
    assert s.ender == 0 and s.turn == 1
    refused(s, 1, Knock(), Refusal.ALREADY_KNOCKED)
    s = s.apply(1, DrawStock()).apply(1, Discard())
    s = s.apply(2, DrawStock()).apply(2, Discard())
    assert s.over and s.end_reason is EndReason.KNOCK


def test_peek_stroke_costs_a_point() -> None:
    rules = replace(preset("four-card"), peek_stroke=1)
    s = started(rules)
    s = s.apply(0, PeekStroke(3))
    assert (0, 3) in s.known[0] and s.strokes == (1, 0) and s.turn == 1
    s = s.apply(1, Knock()).apply(0, DrawStock()).apply(0, Discard())
    result = hole_result(s)
    assert any(line.rule == "peek-stroke" and line.points == 1 for line in result.seats[0].lines)


def test_jack_discard_skips_next_player() -> None:
    rules = replace(SIX, jack_discard_skips_next=True)
    s = started(rules, players=3)
    jack = parse_card("JS")
    s = replace(s, stock=(*s.stock, jack))
    s = s.apply(0, DrawStock()).apply(0, Discard())
    assert s.turn == 2


def test_stock_reshuffled_from_discards() -> None:
    s = started()
    s = replace(s, stock=s.stock[-1:], discard=(*s.discard, *s.stock[:-1][:10]))
    total = Counter(s.all_cards())
    after = s.apply(0, DrawStock()).apply(0, Discard())
    assert after.reshuffles == 1 and len(after.discard) == 1 and len(after.stock) == 11
    assert Counter(after.all_cards()) == total
    ends = started(replace(SIX, stock_out=StockOut.END_HOLE))
    ends = replace(ends, stock=ends.stock[-1:])
    done = ends.apply(0, DrawStock()).apply(0, Discard())
    assert done.over and done.end_reason is EndReason.STOCK_OUT


def _finished(rules: GolfRules, grids: list[str], ender: int) -> HoleState:
    s = started(rules, players=len(grids))
    return replace(
        s,
        grids=tuple(tuple(parse_cards(g)) for g in grids),
        phase=Phase.OVER,
        ender=ender,
        end_reason=EndReason.ALL_FACE_UP,
    )


HIGH = "TS 9C 8D 7H 6S 5C"  # 45
LOW = "AS 2C 3D 4H 5S 6C"  # 17


@pytest.mark.parametrize(
    ("penalty", "expected"),
    [
        (KnockerPenalty.NONE, 45),
        (KnockerPenalty.PLUS_10, 55),
        (KnockerPenalty.PLUS_20, 65),
        (KnockerPenalty.DOUBLE_PLUS_5, 95),
        (KnockerPenalty.PLUS_TWICE_PLAYERS, 49),
    ],
)
def test_knocker_penalties(penalty: KnockerPenalty, expected: int) -> None:
    result = hole_result(_finished(replace(SIX, knocker_penalty=penalty), [HIGH, LOW], ender=0))
    assert result.scores == (expected, 17)


def test_knocker_takes_highest() -> None:
    rules = replace(SIX, knocker_penalty=KnockerPenalty.TAKE_HIGHEST)
    result = hole_result(_finished(rules, [LOW, "AS 2C 3D 4H 5S 5C", HIGH], ender=0))
    assert result.scores == (45, 16, 45)


@pytest.mark.parametrize(("bonus", "expected"), [(KnockerBonus.ZERO_IF_POSITIVE, 0), (KnockerBonus.MINUS_PLAYERS, 15)])
def test_knocker_bonuses(bonus: KnockerBonus, expected: int) -> None:
    result = hole_result(_finished(replace(SIX, knocker_bonus=bonus), [LOW, HIGH], ender=0))
    assert result.scores == (expected, 45)
    assert result.seats[0].lines[-1].rule == "knocker-bonus"


def test_four_alike_charges_each_opponent() -> None:
    rules = preset("six-card-jokers")  # four or more players; a two is 2, so LOW scores 21
    result = hole_result(_finished(rules, ["7S 7C 7D 7H 3S 4C", LOW, LOW, LOW], ender=1))
    assert result.scores[0] == 7
    assert result.scores[1:] == (21 + 10,) * 3
    assert result.winners == (0,)


def test_rules_round_trip_and_validation() -> None:
    for rules in (preset(n) for n in ("six-card", "powers", "six-card-jokers")):
        assert GolfRules.from_canonical(rules.canonical()) == rules
    assert SIX.with_options(flip_after_discard="optional").flip_after_discard is FlipRule.OPTIONAL
    with pytest.raises(ValueError):
        SIX.with_options(no_such_option=1)
    with pytest.raises(ValueError):
        replace(SIX, rows=5).validate()
    with pytest.raises(ValueError):
        SIX.validate(9)
    with pytest.raises(ValueError):
        replace(SIX, end_on_all_face_up=False).validate()
    with pytest.raises(KeyError):
        preset("no-such")


def test_move_codes_round_trip() -> None:
    moves = [
        Reveal((0, 3)),
        DrawStock(),
        DrawDiscard(),
        Swap(2),
        Discard(),
        Flip(1),
        Pass(),
        Knock(),
        PeekStroke(2),
        UsePower(1, 2, 3),
        UsePower(position=4),
    ]
    for m in moves:
        assert parse_move(m.code) == m


# -- powers ---------------------------------------------------------------------------------------------------
def powered(power: Power, card: str = "JS", players: int = 2) -> HoleState:
    rules = replace(preset("powers"), powers=((card[0], power),))
    s = started(rules, players=players)
    s = replace(s, stock=(*s.stock, parse_card(card)))
    return s.apply(0, DrawStock())


def test_power_peek_own_is_private() -> None:
    s = powered(Power.PEEK_OWN)
    assert UsePower(position=2) in s.legal_moves()
    after = s.apply(0, UsePower(position=2))
    assert (0, 2) in after.known[0] and (0, 2) not in after.known[1]
    assert view(after, 0).grids[0][2] == after.grids[0][2]
    assert view(after, 1).grids[0][2] is None
    assert after.discard_top == parse_card("JS")


def test_power_peek_opponent() -> None:
    s = powered(Power.PEEK_OPPONENT)
    refused(s, 0, UsePower(0, 2), Refusal.BAD_TARGET)
    after = s.apply(0, UsePower(1, 2))
    assert view(after, 0).grids[1][2] == after.grids[1][2]
    assert view(after, 1).grids[1][2] is None


def test_power_blind_swap_moves_knowledge() -> None:
    s = powered(Power.BLIND_SWAP)
    mine, theirs = s.grids[0][0], s.grids[1][5]
    after = s.apply(0, UsePower(1, 5, 0))
    assert after.grids[0][0] == theirs and after.grids[1][5] == mine
    assert (1, 5) in after.known[0]  # seat 0 had peeked its position 0
    assert (0, 0) not in after.known[0]


def test_power_shuffle_forgets() -> None:
    s = powered(Power.SHUFFLE_OPPONENT)
    after = s.apply(0, UsePower(1))
    assert Counter(after.grids[1]) == Counter(s.grids[1])
    assert not any(slot[0] == 1 for slot in after.known[1])


def test_power_give_and_lines_and_turn_up() -> None:
    s = powered(Power.GIVE_TO_OPPONENT, "9S")
    old = s.grids[1][3]
    after = s.apply(0, UsePower(1, 3))
    assert after.grids[1][3] == parse_card("9S") and after.discard_top == old
    lines = powered(Power.SWAP_LINES, "7S")
    refused(lines, 0, UsePower(1, 0, 2), Refusal.BAD_TARGET)  # a row with a column
    swapped = lines.apply(0, UsePower(1, 0, 1))
    assert swapped.grids[1][:3] == lines.grids[1][3:]
    up = powered(Power.TURN_UP_OR_DOWN, "4S")
    turned = up.apply(0, UsePower(1, 4))
    assert turned.face_up[1][4]
    assert view(turned, 0).grids[1][4] == turned.grids[1][4]


def test_power_only_from_stock_and_with_power() -> None:
    rules = replace(preset("powers"), powers=(("J", Power.PEEK_OWN),))
    s = started(rules)
    s = replace(s, stock=(*s.stock, parse_card("5S")))
    refused(s.apply(0, DrawStock()), 0, UsePower(position=2), Refusal.NO_POWER)


def test_cambio_swap_stays_face_down_known_to_owner() -> None:
    s = started(preset("cambio"))
    s = s.apply(0, DrawStock())
    card = s.held
    after = s.apply(0, Swap(3))
    assert not after.face_up[0][3]
    assert view(after, 0).grids[0][3] == card
    assert view(after, 1).grids[0][3] is None
    assert view(after, 1).held is None


@pytest.mark.parametrize("reason", [EndReason.STOCK_OUT, EndReason.ROUND_LIMIT])
def test_the_knocker_is_scored_however_the_hole_then_ends(reason: EndReason) -> None:
    """The texts penalise (or reward) the player who knocked, whether the hole then ends by the last turns, by the
    stock running out or by the safety limit on rounds."""
    penalised = replace(
        _finished(replace(SIX, knocker_penalty=KnockerPenalty.PLUS_10), [HIGH, LOW], 0), end_reason=reason
    )
    assert hole_result(penalised).seats[0].total == 55
    assert hole_result(penalised).seats[0].lines[-1].rule == "knocker-penalty"
    rewarded = replace(
        _finished(replace(SIX, knocker_bonus=KnockerBonus.MINUS_PLAYERS), [LOW, HIGH], 0), end_reason=reason
    )
    assert hole_result(rewarded).seats[0].total == 17 - 2
    # Nobody knocked: nobody is the knocker.
    assert hole_result(replace(penalised, ender=None)).seats[0].total == 45


@pytest.mark.parametrize(
    ("power", "move"),
    [
        (Power.PEEK_OWN, UsePower(position=2, own=1)),
        (Power.PEEK_OPPONENT, UsePower(1, 2, 0)),
        (Power.SHUFFLE_OPPONENT, UsePower(1, 2)),
        (Power.SHUFFLE_OPPONENT, UsePower(1, own=0)),
        (Power.GIVE_TO_OPPONENT, UsePower(1, 2, 3)),
        (Power.TURN_UP_OR_DOWN, UsePower(1, 2, 3)),
    ],
)
def test_a_power_move_with_arguments_its_power_does_not_use_is_malformed(power: Power, move: UsePower) -> None:
    """A move naming what its power does not take (a shuffle's position, a peek's second card) is refused as
    malformed, not done with the extra argument ignored; the same move without it is legal."""
    s = powered(power)
    refused(s, 0, move, Refusal.MALFORMED_MOVE)
    trimmed = {
        Power.PEEK_OWN: UsePower(position=2),
        Power.PEEK_OPPONENT: UsePower(1, 2),
        Power.SHUFFLE_OPPONENT: UsePower(1),
        Power.GIVE_TO_OPPONENT: UsePower(1, 2),
        Power.TURN_UP_OR_DOWN: UsePower(1, 2),
    }[power]
    assert trimmed in s.legal_moves()
    s.apply(0, trimmed)


def test_four_card_holes_end_by_knocking_not_by_four_cards_face_up() -> None:
    """The four-card text ends a hole by knocking: a player whose four cards are all face up must still choose to
    knock (the hole goes on until someone does)."""
    s = started(preset("four-card"))
    s = replace(s, face_up=((True, True, True, False), s.face_up[1]))
    after = s.apply(0, DrawStock()).apply(0, Swap(3))
    assert all(after.face_up[0]) and not after.over and after.ender is None
    after = after.apply(1, DrawStock()).apply(1, Discard())
    assert Knock() in after.legal_moves()
    knocked = after.apply(0, Knock())
    assert knocked.ender == 0 and knocked.end_reason is EndReason.KNOCK
