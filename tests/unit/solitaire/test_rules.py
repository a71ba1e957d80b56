"""Every solitaire rule option, on hand-made positions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from golf.engine.cards import Card, parse_cards
from golf.engine.solitaire.moves import Draw, IllegalMove, PlayColumn, Refusal, parse_move
from golf.engine.solitaire.rules import PRESETS, SolitaireRules
from golf.engine.solitaire.state import Layout, State, Status
from golf.engine.solitaire.view import view

STANDARD = PRESETS["standard"]


def position(columns: list[str], start: str, stock: str = "", rules: SolitaireRules = STANDARD) -> State:
    layout = Layout(tuple(tuple(parse_cards(c)) for c in columns), Card.parse(start), tuple(parse_cards(stock)))
    return State.initial(
        replace(rules, columns=len(columns), column_height=max(len(c.split()) for c in columns)), layout
    )


def codes(state: State) -> list[str]:
    return [m.code for m in state.legal_moves()]


def test_plays_one_rank_up_or_down_suits_ignored() -> None:
    s = position(["4C", "6H", "5D", "3S"], "5S", "9C")
    assert codes(s) == ["0:4C", "1:6H", "T:9C"]


def test_ace_is_low_without_wrap() -> None:
    s = position(["KC", "2H"], "AS", "9C")
    assert codes(s) == ["1:2H", "T:9C"]
    with pytest.raises(IllegalMove) as err:
        s.apply(PlayColumn(0))
    assert err.value.reason is Refusal.NOT_ADJACENT_RANK


def test_nothing_on_a_king_by_default() -> None:
    s = position(["QC", "AH"], "KS", "9C")
    assert codes(s) == ["T:9C"]
    with pytest.raises(IllegalMove) as err:
        s.apply(PlayColumn(0))
    assert err.value.reason is Refusal.NOTHING_ON_KING


def test_a_king_may_go_on_a_queen() -> None:
    assert codes(position(["KC"], "QS", "9C")) == ["0:KC", "T:9C"]


def test_queens_on_kings() -> None:
    s = position(["QC", "AH"], "KS", "9C", PRESETS["queens-on-kings"])
    assert codes(s) == ["0:QC", "T:9C"]


def test_wrap_joins_king_and_ace_both_ways() -> None:
    wrap = PRESETS["wrap"]
    assert codes(position(["AC", "QH", "JD"], "KS", "", wrap)) == ["0:AC", "1:QH"]
    assert codes(position(["KC", "2H", "3D"], "AS", "", wrap)) == ["0:KC", "1:2H"]


def test_draw_whenever_by_default_and_only_when_stuck_as_option() -> None:
    stuck = replace(STANDARD, draw_only_when_stuck=True)
    s = position(["4C", "9D"], "5S", "8C", stuck)
    assert codes(s) == ["0:4C"]
    with pytest.raises(IllegalMove) as err:
        s.apply(Draw())
    assert err.value.reason is Refusal.DRAW_NOT_ALLOWED
    s = s.apply(PlayColumn(0))
    assert codes(s) == ["T:8C"]
    assert codes(s.apply(Draw())) == ["1:9D"]


def test_stock_empty_and_lost() -> None:
    s = position(["9C", "2D"], "5S", "JC")
    s = s.apply(Draw())
    assert s.status is Status.LOST
    assert s.legal_moves() == []
    with pytest.raises(IllegalMove) as err:
        s.apply(Draw())
    assert err.value.reason is Refusal.GAME_OVER


def test_won_score_is_minus_stock_left() -> None:
    s = position(["3D 4C", "2H"], "5S", "9C 9D 9H")
    for code in ("0", "0", "1"):
        s = s.apply(parse_move(code))
    assert s.status is Status.WON
    assert s.score == -3


def test_lost_score_is_cards_left() -> None:
    s = position(["KC QD", "2H 4S"], "9S", "TH")
    s = s.apply(Draw())
    assert s.status is Status.LOST
    assert s.score == 4


def test_refusals_are_typed_and_leave_the_state_unchanged() -> None:
    s = position(["4C", ""], "5S", "")
    cases = {
        PlayColumn(7): Refusal.NO_SUCH_COLUMN,
        PlayColumn(-1): Refusal.NO_SUCH_COLUMN,
        PlayColumn(1): Refusal.COLUMN_EMPTY,
        PlayColumn(0, Card.parse("4D")): Refusal.CARD_MISMATCH,
        Draw(): Refusal.STOCK_EMPTY,
    }
    before = s
    for move, reason in cases.items():
        with pytest.raises(IllegalMove) as err:
            s.apply(move)
        assert err.value.reason is reason
        assert s == before


def test_draw_naming_the_wrong_card_is_refused() -> None:
    s = position(["9C"], "5S", "8C 7C")
    with pytest.raises(IllegalMove) as err:
        s.apply(Draw(Card.parse("7C")))
    assert err.value.reason is Refusal.CARD_MISMATCH
    assert s.apply(Draw(Card.parse("8C"))).top.code == "8C"


def test_two_decks_layout_and_stock() -> None:
    rules = PRESETS["two-decks"]
    layout = Layout.from_seed(rules, "two")
    assert [len(c) for c in layout.columns] == [7] * 9
    assert len(layout.stock) == 40 == rules.stock_size
    assert sorted(layout.all_cards()) == sorted(Card(r, s) for _ in range(2) for s in range(4) for r in range(1, 14))


def test_other_layouts() -> None:
    rules = replace(STANDARD, columns=5, column_height=4)
    layout = Layout.from_seed(rules, "x")
    assert [len(c) for c in layout.columns] == [4] * 5
    assert len(layout.stock) == 52 - 20 - 1
    assert State.initial(rules, layout).score == 20


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"decks": 0}, "decks"),
        ({"columns": 0}, "columns"),
        ({"column_height": 30}, "column_height"),
        ({"columns": 11, "column_height": 5}, "columns"),
        ({"undo_limit": -1}, "undo_limit"),
    ],
)
def test_impossible_rules_name_the_field(change: dict[str, int], field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}:"):
        replace(STANDARD, **change).validate()


def test_rules_round_trip_through_their_canonical_text() -> None:
    for rules in PRESETS.values():
        assert SolitaireRules.from_canonical(rules.canonical()) == rules


def test_view_hides_the_stock_and_seed_until_the_end() -> None:
    s = position(["9C", "2D"], "5S", "JC")
    seen = view(s, seed="secret")
    assert seen.revealed_stock is None and seen.revealed_seed is None
    assert seen.stock_count == 1
    assert all(m.card is None for m in seen.legal_moves if isinstance(m, Draw))
    over = view(s.apply(Draw()), seed="secret")
    assert over.revealed_seed == "secret"
    assert [c.code for c in over.revealed_stock or ()] == ["JC"]


def test_move_codes_round_trip() -> None:
    for code in ("3", "3:AH", "T", "T:TD", "12:KS"):
        assert parse_move(code).code == code
    for bad in ("", "X", "3:ZZ", "-1"):
        with pytest.raises(ValueError):
            parse_move(bad)
