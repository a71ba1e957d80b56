"""The power cards of Powers and Cutthroat: the 8 (draw two, keep one), the 5 (shield), the 2 (two powers), the ace
(add a card to an opponent's grid, remove one of yours), the black king (cancels a knock by being seen) and
Cutthroat's king (trade for a face-up card); and the shape of the modules (the state does not import the powers)."""

from __future__ import annotations

import ast
import random
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from golf.engine.cardgolf import (
    Discard,
    DrawStock,
    GolfRules,
    HoleState,
    IllegalMove,
    Knock,
    Pass,
    Phase,
    Power,
    Refusal,
    Reveal,
    Swap,
    UsePower,
    deal,
    hole_result,
    parse_card,
    parse_move,
    preset,
    view,
)
from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.moves import Keep
from golf.engine.cardgolf.presets import HISTORY, PRESETS, preset_version

POWERS = preset("powers")


def started(rules: GolfRules, players: int = 2, seed: str = "p") -> HoleState:
    state = deal(rules, players, seed)
    for seat in range(players):
        if not state.ready[seat]:
            state = state.apply(seat, Reveal(tuple(range(rules.start_cards))))
    return state


def on_top(state: HoleState, card: GCard) -> HoleState:
    """The same cards, with ``card`` (taken from wherever it lies in the stock or a grid) on top of the stock."""
    stock = list(state.stock)
    if card in stock:
        stock.remove(card)
        return replace(state, stock=(*stock, card))
    for seat, grid in enumerate(state.grids):
        if card in grid:
            top = stock.pop()
            cells = [top if c == card else c for c in grid]
            grids = tuple(tuple(cells) if s == seat else g for s, g in enumerate(state.grids))
            return replace(state, grids=grids, stock=(*stock, card))
    raise AssertionError(f"{card} is not in the stock or a grid")


def holding(code: str, rules: GolfRules = POWERS, players: int = 2) -> HoleState:
    """Seat 0 to move, holding ``code`` drawn from the stock."""
    state = on_top(started(rules, players), parse_card(code))
    return state.apply(0, DrawStock())


def refused(state: HoleState, seat: int, move: object, reason: Refusal) -> None:
    with pytest.raises(IllegalMove) as info:
        state.apply(seat, move)  # type: ignore[arg-type]
    assert info.value.reason is reason


def same_cards(before: HoleState, after: HoleState) -> None:
    assert Counter(before.all_cards()) == Counter(after.all_cards())


# -- the 8: draw two, keep one -------------------------------------------------------------------------------------
def test_the_eight_offers_itself_and_the_next_two_cards_to_the_mover_only() -> None:
    s = holding("8H")
    next_two = (s.stock[-1], s.stock[-2])
    assert UsePower() in s.legal_moves()
    chosen = s.apply(0, UsePower())
    same_cards(s, chosen)
    assert chosen.phase is Phase.CHOOSE and chosen.offered == (parse_card("8H"), *next_two)
    assert view(chosen, 0).offered == chosen.offered
    assert view(chosen, 1).offered == () and view(chosen, None).offered == ()
    assert set(chosen.legal_moves(0)) == {Keep(c, p) for c in range(3) for p in range(6)}
    refused(chosen, 0, Swap(0), Refusal.WRONG_PHASE)
    refused(chosen, 0, Keep(3, 0), Refusal.BAD_TARGET)
    old = chosen.grids[0][4]
    kept = chosen.apply(0, Keep(1, 4))
    same_cards(s, kept)
    assert kept.grids[0][4] == next_two[0] and (0, 4) in kept.known[0] and (0, 4) not in kept.known[1]
    assert kept.discard[-3:] == (parse_card("8H"), next_two[1], old)
    assert kept.phase is Phase.DRAW and kept.turn == 1 and kept.offered == ()


def test_the_eight_with_one_card_left_offers_two_and_with_none_has_no_power() -> None:
    s = holding("8H")
    one = replace(s, stock=s.stock[-1:])
    chosen = one.apply(0, UsePower())
    assert len(chosen.offered) == 2 and chosen.stock == ()
    empty = replace(s, stock=())
    assert UsePower() not in empty.legal_moves()
    refused(empty, 0, UsePower(), Refusal.BAD_TARGET)


# -- the 5: shield ------------------------------------------------------------------------------------------------
def test_a_shield_keeps_opponents_powers_off_a_place() -> None:
    s = holding("5H")
    shielded = s.apply(0, UsePower(position=2))
    same_cards(s, shielded)
    assert shielded.shields[0] == frozenset({2}) and shielded.aside[0] == (parse_card("5H"),)
    assert view(shielded, 1).shields[0] == frozenset({2}) and view(shielded, None).aside[0] == (parse_card("5H"),)
    # Seat 1 holds each attacking power in turn: none may name seat 0's place 2.
    for power in (Power.PEEK_OPPONENT, Power.BLIND_SWAP, Power.GIVE_TO_OPPONENT, Power.TURN_UP_OR_DOWN):
        rules = replace(POWERS, powers=(("Q", power),))
        t = replace(shielded, rules=rules, stock=(*shielded.stock[:-1], parse_card("QC")))
        t = t.apply(1, DrawStock())
        legal = t.legal_moves(1)
        assert not any(isinstance(m, UsePower) and m.seat == 0 and m.position == 2 for m in legal), power
        move = UsePower(0, 2, 0) if power is Power.BLIND_SWAP else UsePower(0, 2)
        refused(t, 1, move, Refusal.SHIELDED)
    lines = replace(shielded, rules=replace(POWERS, powers=(("Q", Power.SWAP_LINES),)))
    lines = replace(lines, stock=(*lines.stock[:-1], parse_card("QC"))).apply(1, DrawStock())
    refused(lines, 1, UsePower(0, 2, 4), Refusal.SHIELDED)  # the 1st and 3rd columns: place 2 is in the 3rd
    refused(lines, 1, UsePower(0, 0, 1), Refusal.SHIELDED)  # the two rows
    legal = lines.legal_moves(1)
    assert UsePower(0, 2, 4) not in legal and UsePower(0, 0, 1) not in legal and UsePower(0, 2, 3) in legal


def test_a_shuffle_leaves_shielded_places_where_they_are() -> None:
    s = holding("5H").apply(0, UsePower(position=2))
    rules = replace(POWERS, powers=(("Q", Power.SHUFFLE_OPPONENT),))
    t = replace(s, rules=rules, stock=(*s.stock[:-1], parse_card("QC"))).apply(1, DrawStock())
    for n in range(10):
        after = replace(t, powers_used=n).apply(1, UsePower(0))
        assert after.grids[0][2] == t.grids[0][2]
        assert sorted(map(str, after.grids[0])) == sorted(map(str, t.grids[0]))


# -- the 2: two powers ------------------------------------------------------------------------------------------
def test_the_two_lends_two_different_powers() -> None:
    s = holding("2H")
    assert all(isinstance(m, UsePower) and m.power is not None for m in s.legal_moves() if isinstance(m, UsePower))
    refused(s, 0, UsePower(position=2), Refusal.BAD_TARGET)  # which power?
    refused(s, 0, UsePower(position=2, power="give_to_opponent"), Refusal.POWER_USED)  # moves its own card
    refused(s, 0, UsePower(power="two_powers"), Refusal.POWER_USED)
    first = s.apply(0, UsePower(position=2, power="peek_own"))
    same_cards(s, first)
    assert first.phase is Phase.POWER and first.charges == 1 and (0, 2) in first.known[0]
    assert first.discard_top == parse_card("2H")
    assert Pass() in first.legal_moves()
    refused(first, 0, UsePower(position=3, power="peek_own"), Refusal.POWER_USED)
    refused(first, 0, DrawStock(), Refusal.WRONG_PHASE)
    second = first.apply(0, UsePower(1, 3, power="peek_opponent"))
    assert (1, 3) in second.known[0] and second.turn == 1 and second.phase is Phase.DRAW
    assert second.charges == 0 and second.used_powers == ()
    passed = first.apply(0, Pass())
    assert passed.turn == 1 and passed.phase is Phase.DRAW


def test_the_two_can_lend_the_eight_and_then_another_power() -> None:
    s = holding("2H")
    chosen = s.apply(0, UsePower(power="draw_two"))
    assert chosen.phase is Phase.CHOOSE and len(chosen.offered) == 2  # the 2 itself is on the discard pile
    kept = chosen.apply(0, Keep(0, 5))
    assert kept.phase is Phase.POWER and kept.turn == 0
    assert not any(m.power == "draw_two" for m in kept.legal_moves() if isinstance(m, UsePower))
    same_cards(s, kept.apply(0, Pass()))


def test_the_two_lends_only_powers_of_the_cards_three_to_king() -> None:
    # Seed 004: the 2 "can use any combination (without repeats) of two powers from 3 - Black King": not the ace's.
    s = holding("2H")
    named = {m.power for m in s.legal_moves() if isinstance(m, UsePower)}
    assert "add_or_remove" not in named and {"peek_own", "shuffle_opponent", "draw_two"} <= named
    refused(s, 0, UsePower(1, power="add_or_remove"), Refusal.POWER_USED)
    first = s.apply(0, UsePower(position=2, power="peek_own"))
    assert not any(m.power == "add_or_remove" for m in first.legal_moves() if isinstance(m, UsePower))
    refused(first, 0, UsePower(position=3, power="add_or_remove"), Refusal.POWER_USED)
    assert "add_or_remove" not in {m.power for m in view(s, 0).legal_moves if isinstance(m, UsePower)}
    # Rules keyed by card code count by rank too; a joker's power is not lent either.
    coded = replace(POWERS, powers=(("2", Power.TWO_POWERS), ("AS", Power.PEEK_OWN), ("X", Power.SHUFFLE_OPPONENT)))
    assert not any(isinstance(m, UsePower) for m in holding("2H", coded).legal_moves())


def test_a_table_stored_with_powers_version_2_still_lends_the_ace() -> None:
    # Its stored rules lack ``two_powers_from_three``: the 2 lends the ace's power, as when the table was played.
    stored = GolfRules.from_canonical(preset("powers", 2).canonical())
    assert '"two_powers_from_three"' not in preset("powers", 2).canonical() and not stored.two_powers_from_three
    s = holding("2H", stored)
    added = s.apply(0, UsePower(1, power="add_or_remove"))
    assert len(added.grids[1]) == 7 and added.phase is Phase.POWER


# -- the ace: add or remove ------------------------------------------------------------------------------------------
def test_the_ace_adds_the_top_of_the_stock_to_an_opponent_unseen() -> None:
    s = holding("AH")
    top = s.stock[-1]
    added = s.apply(0, UsePower(1))
    same_cards(s, added)
    assert len(added.grids[1]) == 7 and added.grids[1][6] == top and not added.face_up[1][6]
    assert all((1, 6) not in k for k in added.known)
    assert view(added, 1).grids[1][6] is None and view(added, 0).grids[1][6] is None
    refused(s, 0, UsePower(1, 2), Refusal.MALFORMED_MOVE)


def test_the_ace_removes_one_of_your_cards_and_leaves_the_place_empty() -> None:
    s = holding("AH")
    card = s.grids[0][3]
    removed = s.apply(0, UsePower(position=3))
    same_cards(s, removed)
    assert removed.grids[0][3] is None and removed.face_up[0][3]
    assert removed.discard[-2:] == (card, parse_card("AH"))
    v = view(removed, 1)
    assert v.grids[0][3] is None and v.face_up[0][3]  # face up and no card: an empty place
    # Nobody swaps into, flips or targets an empty place; an ace fills it again before adding a new place.
    again = removed.apply(1, DrawStock()).apply(1, Discard()).apply(0, DrawStock())
    assert Swap(3) not in again.legal_moves(0) and Swap(2) in again.legal_moves(0)
    refused(again, 0, Swap(3), Refusal.NO_SUCH_POSITION)
    theirs = replace(removed, turn=1, phase=Phase.PLACE, held=parse_card("AD"), held_from=s.held_from)
    theirs = replace(theirs, stock=tuple(c for c in theirs.stock if c != parse_card("AD")))
    filled = theirs.apply(1, UsePower(0))
    assert filled.grids[0][3] is not None and len(filled.grids[0]) == 6 and not filled.face_up[0][3]


def test_the_ace_adds_no_place_past_sixteen() -> None:
    s = holding("AH")
    full = replace(
        s, grids=(s.grids[0], s.grids[1] + s.stock[:10]), face_up=(s.face_up[0], s.face_up[1] + (False,) * 10)
    )
    full = replace(full, stock=s.stock[10:])
    assert len(full.grids[1]) == 16 and UsePower(1) not in full.legal_moves()
    refused(full, 0, UsePower(1), Refusal.BAD_TARGET)
    assert Counter(full.all_cards()) == Counter(s.all_cards())


def test_the_ace_leaves_at_least_one_card() -> None:
    s = holding("AH")
    grid = (s.grids[0][0], None, None, None, None, None)
    lone = replace(s, grids=(grid, s.grids[1]), face_up=((False, True, True, True, True, True), s.face_up[1]))
    assert not any(isinstance(m, UsePower) and m.seat is None for m in lone.legal_moves())
    refused(lone, 0, UsePower(position=0), Refusal.BAD_TARGET)


# -- the black king ----------------------------------------------------------------------------------------------
def test_a_black_king_drawn_from_the_stock_cancels_a_knock() -> None:
    s = started(POWERS, players=3)
    knocked = s.apply(0, Knock())
    assert knocked.ender == 0
    drawn = on_top(knocked, parse_card("KS")).apply(1, DrawStock())
    assert drawn.ender is None and drawn.end_reason is None
    assert not any(isinstance(m, UsePower) for m in drawn.legal_moves())  # it works by being seen only
    refused(drawn, 1, UsePower(), Refusal.NO_POWER)
    red = on_top(knocked, parse_card("KH")).apply(1, DrawStock())
    assert red.ender == 0
    # The hole goes on past the knocker's seat, and anyone may knock again.
    on = drawn.apply(1, Discard()).apply(2, DrawStock()).apply(2, Discard())
    assert not on.over and on.turn == 0 and Knock() in on.legal_moves()


def put(state: HoleState, owner: int, position: int, card: GCard) -> HoleState:
    """The same cards, with ``card`` at ``owner``'s ``position`` (it changes places with the card there)."""
    here = state.grids[owner][position]
    assert here is not None
    grids = [list(g) for g in state.grids]
    stock = list(state.stock)
    if card in stock:
        stock[stock.index(card)] = here
    else:
        o, p = next((o, p) for o, g in enumerate(grids) for p, c in enumerate(g) if c == card)
        grids[o][p] = here
    grids[owner][position] = card
    return replace(state, grids=tuple(tuple(g) for g in grids), stock=tuple(stock))


def test_a_black_king_turned_up_in_an_opponents_grid_cancels_a_knock() -> None:
    s = started(POWERS, players=2)
    down = next(p for p, up in enumerate(s.face_up[0]) if not up)
    for king, cancels in (("KC", True), ("KD", False)):
        staged = on_top(put(s, 0, down, parse_card(king)), parse_card("4H"))
        holding_four = staged.apply(0, Knock()).apply(1, DrawStock())
        assert holding_four.ender == 0
        turned = holding_four.apply(1, UsePower(0, down))
        assert (turned.ender is None) is cancels, king
        same_cards(staged, turned)


# -- Cutthroat --------------------------------------------------------------------------------------------------
def test_cutthroat_kings_trade_for_an_opponents_face_up_card() -> None:
    rules = PRESETS["cutthroat"]
    s = holding("KH", rules)
    assert rules.card_value(parse_card("KD")) == 15
    up = next(p for p, u in enumerate(s.face_up[1]) if u)
    down = next(p for p, u in enumerate(s.face_up[1]) if not u)
    taken, old = s.grids[1][up], s.grids[0][5]
    traded = s.apply(0, UsePower(1, up, 5))
    same_cards(s, traded)
    assert traded.grids[1][up] == parse_card("KH") and traded.face_up[1][up]
    assert traded.grids[0][5] == taken and traded.face_up[0][5]
    assert traded.discard_top == old and traded.turn == 1
    refused(s, 0, UsePower(1, down, 5), Refusal.BAD_TARGET)
    refused(s, 0, UsePower(1, up), Refusal.BAD_TARGET)


# -- moves as text, malformed moves ----------------------------------------------------------------------------------
def test_new_moves_round_trip_as_text() -> None:
    for move in (Keep(2, 5), UsePower(1, 2, power="peek_opponent"), UsePower(power="draw_two")):
        assert parse_move(move.code) == move


def test_a_power_named_on_a_card_that_does_not_lend_powers_is_malformed() -> None:
    s = holding("JH")
    refused(s, 0, UsePower(position=2, power="peek_opponent"), Refusal.MALFORMED_MOVE)
    assert s.apply(0, UsePower(position=2, power="peek_own")).known[0] >= {(0, 2)}


# -- random playouts ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("players", [2, 3, 5])
def test_random_powers_playouts_conserve_cards_and_end(players: int) -> None:
    kinds: Counter[str] = Counter()
    for hole in range(40):
        state = deal(POWERS, players, f"rp-{players}-{hole}", hole % players)
        deck = Counter(state.all_cards())
        rng = random.Random(hole)
        while not state.over:
            seat = state.to_move
            assert seat is not None
            moves = state.legal_moves(seat)
            kind = rng.choice(sorted({type(m).__name__ for m in moves}))  # every kind of move gets its chance
            move = rng.choice([m for m in moves if type(m).__name__ == kind])
            kinds[type(move).__name__] += 1
            state = state.apply(seat, move)
            assert Counter(state.all_cards()) == deck
            for viewer in range(players):  # the offered cards and shields are shown as the rules say
                v = view(state, viewer)
                assert v.offered == (state.offered if viewer == state.turn else ())
        result = hole_result(state)
        assert len(result.scores) == players
    assert kinds["Keep"] and kinds["UsePower"]


# -- presets and structure -----------------------------------------------------------------------------------------
def test_every_preset_keeps_its_old_versions() -> None:
    for name, rules in PRESETS.items():
        assert preset(name) == rules == preset(name, preset_version(name)) == HISTORY[name][-1]
    assert preset("four-card", 1).end_on_all_face_up and not preset("four-card", 2).end_on_all_face_up
    assert not preset("six-card-jokers", 1).start_fixed and preset("six-card-jokers", 2).start_fixed
    assert Power.DRAW_TWO not in dict(preset("powers", 1).powers).values()
    assert Power.DRAW_TWO in dict(preset("powers", 2).powers).values()
    # Version 3 of each follows its text: a two is 2 and four or more play (seed 001); the 2 does not lend the ace's
    # power (seed 004). The versions before keep what tables made with them played.
    old_jokers, jokers = preset("six-card-jokers", 2), preset("six-card-jokers", 3)
    assert (old_jokers.values[1], old_jokers.min_players) == (-2, 2)
    assert (jokers.values[1], jokers.min_players) == (2, 4)
    assert not preset("powers", 2).two_powers_from_three and preset("powers", 3).two_powers_from_three
    with pytest.raises(KeyError, match="versions 1 to 3"):
        preset("powers", 4)
    with pytest.raises(KeyError, match="unknown preset"):
        preset("no-such", 1)


def test_the_state_does_not_import_the_powers() -> None:
    root = Path(__file__).resolve().parents[3] / "service" / "golf" / "engine" / "cardgolf"
    tree = ast.parse((root / "state.py").read_text())
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert "golf.engine.cardgolf.powers" not in imported
    powers = ast.parse((root / "powers.py").read_text())
    assert any(isinstance(n, ast.ImportFrom) and n.module == "golf.engine.cardgolf.state" for n in ast.walk(powers))
