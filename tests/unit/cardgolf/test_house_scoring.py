"""Hand-made scoring cases for the house and alternative scoring options (``docs/card-golf-rules.md``): each grid
option with its total and breakdown, the hole-level rules and their order, the open cases and the choices made,
grids with empty and extra places, and four alike winning the match."""

from __future__ import annotations

from dataclasses import replace

import pytest

from golf.engine.cardgolf import GolfRules, HoleState, parse_cards, preset, score_grid
from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.match import ScoreSheet, match_over
from golf.engine.cardgolf.options import FourAlikeScope, KnockerBonus, KnockerPenalty
from golf.engine.cardgolf.outcome import HOLE_RULES, hole_result
from golf.engine.cardgolf.scoring import UNKNOWN, card_key, moon_value, scorer
from golf.engine.cardgolf.state import EndReason, Phase, deal
from tests.unit.cardgolf.grid_cases import check_grid_case
from tests.unit.cardgolf.recount import recount, recount_hole

SIX = preset("six-card")
EIGHT = preset("eight-card")
NINE = preset("nine-card")
FOUR_BY_TWO = replace(SIX, rows=4, cols=2)

BY_VALUE = replace(SIX, pairs_by_value=True)
BY_VALUE_JOKERS = replace(SIX, pairs_by_value=True, jokers=2, joker_pair_value=-4)
BY_VALUE_WILD = replace(BY_VALUE, wild_one_eyed_jacks=True)
KEEP = replace(SIX, negative_pairs_keep_value=True)
KEEP_JOKERS = replace(KEEP, jokers=2, joker_pair_value=-6)
WOLFPACK = replace(SIX, four_jacks_value=-20)
TWO_COLUMNS = replace(SIX, four_in_two_columns_value=-20)
BOTH = replace(SIX, four_jacks_value=-20, four_in_two_columns_value=-20)
KINGS_2X4 = replace(EIGHT, four_kings_line_value=-16)
KINGS_4X2 = replace(FOUR_BY_TWO, four_kings_line_value=-16)
STRAIGHT = replace(NINE, straight_value=-12)
STRAIGHT_WILD = replace(STRAIGHT, wild_one_eyed_jacks=True)
NINE_BLOCK = replace(NINE, block_of_four_value=-25, match_columns=False)
NINE_BLOCK_WILD = replace(NINE_BLOCK, wild_one_eyed_jacks=True)
EIGHT_BLOCK = replace(EIGHT, block_of_four_value=-25, match_columns=False)
NINE_ROWS_COLS_JOKERS = replace(NINE, match_rows=True, jokers=4, joker_pair_value=-4)
FOUR_ROWS_COLS_JOKERS = replace(preset("four-card"), match_rows=True, jokers=4, joker_pair_value=-4)
NINE_WILD_ROWS = replace(NINE, match_rows=True, wild_one_eyed_jacks=True)
EIGHT_ANYWHERE = replace(EIGHT, four_alike_self=-20, four_alike_scope=FourAlikeScope.ANYWHERE)
EIGHT_IN_BLOCKS = replace(EIGHT, four_alike_self=-20, four_alike_scope=FourAlikeScope.BLOCK)
NINE_BLOCK_FOURS = replace(NINE, four_alike_self=-20, four_alike_scope=FourAlikeScope.BLOCK)
BY_VALUE_FOURS = replace(EIGHT_ANYWHERE, pairs_by_value=True)

# (id, rules, grid row by row, total, {rule: points of the non-card lines}, matched positions)
CASES: list[tuple[str, GolfRules, str, int, dict[str, int], set[int]]] = [
    # pairs_by_value: a jack and a queen (both 10) match; so do a ten and a king under other values.
    ("like-value-jack-queen", BY_VALUE, "JS 3C 4D QH 5S 6C", 18, {"column": -20}, {0, 3}),
    ("like-value-ten-jack", BY_VALUE, "TS 3C 4D JH 5S 6C", 18, {"column": -20}, {0, 3}),
    ("rank-reading-jack-queen", SIX, "JS 3C 4D QH 5S 6C", 38, {}, set()),
    ("like-value-joker-not-two", BY_VALUE_JOKERS, "XB 3C 4D 2H 5S 6C", 14, {}, set()),
    ("like-value-jokers-pair", BY_VALUE_JOKERS, "XB 3C 4D XR 5S 6C", 14, {"column": 0}, {0, 3}),
    ("like-value-wild-jack", BY_VALUE_WILD, "JH 3C 4D 7H 5S 6C", 18, {"column": -17}, {0, 3}),
    (
        "like-value-eights-zero-kings",
        replace(BY_VALUE, values=(1, -2, 3, 4, 5, 6, 7, 0, 9, 10, 10, 10, 0)),
        "8S 3C 4D KH 5S 6C",
        18,
        {"column": 0},
        {0, 3},
    ),
    # negative_pairs_keep_value: twos keep -2 each inside a pair; jokers with joker_pair_value score that value.
    ("keep-twos", KEEP, "2S 3C 4D 2H 5S 6C", 14, {"column": 0}, {0, 3}),
    ("keep-twos-off", SIX, "2S 3C 4D 2H 5S 6C", 18, {"column": 4}, {0, 3}),
    ("keep-positive-pair-cancelled", KEEP, "9S 3C 4D 9H 5S 6C", 18, {"column": -18}, {0, 3}),
    ("keep-jokers-pair-value", KEEP_JOKERS, "XB 3C 4D XR 5S 6C", 12, {"column": -2}, {0, 3}),
    # four_jacks_value (wolfpack): four jacks anywhere, matched or not.
    ("wolfpack-columns", WOLFPACK, "JS JC 4D JH JD 6C", -10, {"column": -40, "four-jacks": -20}, {0, 1, 3, 4}),
    ("three-jacks-no-pack", WOLFPACK, "JS JC 4D 3H 5D JH", 42, {}, set()),
    # four_in_two_columns_value: two matched columns of one rank; stacks with wolfpack.
    (
        "two-columns-sevens",
        TWO_COLUMNS,
        "7S 7C 4D 7H 7D 6C",
        -10,
        {"column": -28, "four-in-two-columns": -20},
        {0, 1, 3, 4},
    ),
    ("two-columns-different", TWO_COLUMNS, "7S 8C 4D 7H 8D 6C", 10, {"column": -30}, {0, 1, 3, 4}),
    (
        "two-columns-jacks-stack",
        BOTH,
        "JS JC 4D JH JD 6C",
        -30,
        {"column": -40, "four-jacks": -20, "four-in-two-columns": -20},
        {0, 1, 3, 4},
    ),
    # four_kings_line_value: a side of four kings in 2x4 or 4x2.
    ("kings-row-2x4", KINGS_2X4, "KS KC KD KH 3S 4C 5D 6H", 2, {"four-kings-line": -16}, set()),
    ("kings-column-4x2", KINGS_4X2, "KS 3C KD 4H KH 5S KC 6D", 2, {"column": 0, "four-kings-line": -16}, {0, 2, 4, 6}),
    ("kings-broken-row", KINGS_2X4, "KS KC KD QH 3S 4C 5D 6H", 28, {}, set()),
    # straight_value: a nine-card straight scores -12 in all.
    ("straight-ace-to-nine", STRAIGHT, "AS 5C 9D 2H 6S 8C 3D 7H 4S", -12, {"straight": -53}, set()),
    ("straight-five-to-king", STRAIGHT, "5S 6C 7D 8H 9S TC JD QH KS", -12, {"straight": -77}, set()),
    ("straight-gap", STRAIGHT, "AS 5C 9D 2H 6S 8C 3D 7H TS", 47, {}, set()),
    ("straight-no-wrap", STRAIGHT, "JS QC KD AH 2S 3C 4D 5H 6S", 37, {}, set()),
    ("straight-wild-jack-is-a-jack", STRAIGHT_WILD, "5S 6C 7D 8H 9S TC JH QH KS", -12, {"straight": -77}, set()),
]


def _cards(text: str) -> list[GCard | None]:
    return [None if part == "--" else parse_cards(part)[0] for part in text.split()]


@pytest.mark.parametrize(
    ("rules", "grid", "total", "by_rule", "matched"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_hand_made_case(rules: GolfRules, grid: str, total: int, by_rule: dict[str, int], matched: set[int]) -> None:
    cards = _cards(grid)
    check_grid_case(cards, rules, total, by_rule, matched)
    keys = [card_key(c, rules) for c in cards]
    assert scorer(rules).total(keys, [float(rules.card_value(c)) if c else 0.0 for c in cards]) == total


def test_case_count() -> None:
    assert len(CASES) >= 20


def test_wolfpack_counts_jacks_in_extra_places() -> None:
    """Four jacks anywhere in the grid, extra places included (the ace of Powers added two cards here)."""
    cards = parse_cards("JS JC 4D 3H 5D 6C JH JD")
    result = score_grid(cards, WOLFPACK)
    assert result.total == 10 + 10 + 4 + 3 + 5 + 6 + 10 + 10 - 20
    assert [line.rule for line in result.lines if line.rule != "card"] == ["four-jacks"]
    assert recount(cards, WOLFPACK)[0] == result.total


def test_notes_name_the_rule() -> None:
    lines = {line.rule: line.note for line in score_grid(_cards("JS JC 4D JH JD 6C"), BOTH).lines}
    assert "wolfpack" in lines["four-jacks"] and "two matched columns" in lines["four-in-two-columns"]
    kept = score_grid(_cards("2S 3C 4D 2H 5S 6C"), KEEP).lines[-1]
    assert kept.note == "column 2S 2H matches and scores 0; 2S 2H keep their points"
    straight = score_grid(_cards("AS 5C 9D 2H 6S 8C 3D 7H 4S"), STRAIGHT).lines[-1]
    assert straight.rule == "straight" and "-12" in straight.note


# -- open cases ---------------------------------------------------------------------------------------------------
def test_overlapping_blocks_score_once_per_card() -> None:
    """Blocks of four may not share a card: in 3x3 every block holds the centre, so six (or more) equal cards
    make one block; the cards outside it score on their own unless another match takes them."""
    six_sevens = _cards("7S 7C 7D 7H 7S 7C 2D 3H 4S")
    result = score_grid(six_sevens, NINE_BLOCK)
    assert [line.rule for line in result.lines if line.rule != "card"] == ["block-of-four"]
    assert result.total == -25 + 7 + 7 - 2 + 3 + 4  # a two is -2
    assert result.matched == {0, 1, 3, 4}
    nine_wild = _cards("7S 7C 7D 7H JH 7C 7D 7H 7S")  # eight sevens and a wild jack: still one block
    assert [line.rule for line in score_grid(nine_wild, NINE_BLOCK_WILD).lines].count("block-of-four") == 1
    # In 2x4 two blocks share no card: eight equal cards make two.
    eight = _cards("7S 7C 7D 7H 7S 7C 7D 7H")
    assert score_grid(eight, EIGHT_BLOCK).total == -50
    for cards, rules in ((six_sevens, NINE_BLOCK), (nine_wild, NINE_BLOCK_WILD), (eight, EIGHT_BLOCK)):
        assert recount(cards, rules)[0] == score_grid(cards, rules).total


def test_eight_alike_is_twice_four_alike() -> None:
    eight = _cards("7S 7C 7D 7H 7S 7C 7D 7H")
    assert score_grid(eight, EIGHT_ANYWHERE).four_alikes == 2
    assert score_grid(eight, EIGHT_IN_BLOCKS).four_alikes == 2  # blocks 1 and 3; block 2 shares their cards
    assert score_grid(eight, EIGHT_ANYWHERE).total == 0 - 40
    # In 3x3 the blocks all share the centre: six sevens in two overlapping blocks are four alike once.
    six = _cards("7S 7C 7D 7H 7S 7C 2D 3H 4S")
    assert score_grid(six, NINE_BLOCK_FOURS).four_alikes == 1
    # Seven of a kind anywhere: four alike once.
    seven = _cards("7S 7C 7D 7H 7S 7C 7D 2H")
    assert score_grid(seven, EIGHT_ANYWHERE).four_alikes == 1
    for cards, rules in ((eight, EIGHT_ANYWHERE), (eight, EIGHT_IN_BLOCKS), (six, NINE_BLOCK_FOURS)):
        assert recount(cards, rules) == (score_grid(cards, rules).total, score_grid(cards, rules).four_alikes)


def test_four_alike_by_value_under_the_like_value_reading() -> None:
    """Seed 001 says "4 like value cards": under pairs_by_value a ten, a jack and two queens are four alike."""
    cards = _cards("TS JC 3D 4H QS QC 5D 6H")
    assert score_grid(cards, BY_VALUE_FOURS).four_alikes == 1
    assert score_grid(cards, EIGHT_ANYWHERE).four_alikes == 0


def test_jokers_in_overlapping_lines_each_line_scores_the_pair_value() -> None:
    """A joker in a matched row and a matched column of jokers: each line of jokers scores ``joker_pair_value``,
    the jokers' own points count (are cancelled) once."""
    cards = _cards("XB XR XB XR")  # four-card, rows and columns: two rows and two columns of jokers
    result = score_grid(cards, FOUR_ROWS_COLS_JOKERS)
    assert result.total == 4 * -4
    assert [line.points for line in result.lines if line.rule in ("row", "column")] == [0, 0, -4, -4]
    three = _cards("XB XR XB XR 3S 4S XB 5S 6S")  # a row and a column of three jokers sharing the corner
    result = score_grid(three, NINE_ROWS_COLS_JOKERS)
    assert result.total == -4 + -4 + 3 + 4 + 5 + 6
    assert [line.points for line in result.lines if line.rule in ("row", "column")] == [2, 0]
    for grid, rules in ((cards, FOUR_ROWS_COLS_JOKERS), (three, NINE_ROWS_COLS_JOKERS)):
        assert recount(grid, rules)[0] == score_grid(grid, rules).total


def test_a_wild_jack_matches_in_every_line_it_lies_in() -> None:
    """A one-eyed jack completes a row of fives and a column of sevens at once."""
    cards = _cards("7S 2C 3D 7H 4S 6C JH 5C 5D")
    result = score_grid(cards, NINE_WILD_ROWS)
    assert {line.rule for line in result.lines if line.rule != "card"} == {"column", "row"}
    assert result.matched == {0, 3, 6, 7, 8}
    assert result.total == -2 + 3 + 4 + 6
    assert recount(cards, NINE_WILD_ROWS)[0] == result.total


# -- empty and extra places ---------------------------------------------------------------------------------------
def test_empty_places_score_nothing_and_match_nothing() -> None:
    cards = _cards("-- 3C 4D 5H 5S 6C")
    result = score_grid(cards, SIX)
    assert result.total == 23 and result.lines[0].rule == "empty" and result.lines[0].points == 0
    both = _cards("-- 3C 4D -- 5S 6C")
    assert score_grid(both, SIX).total == 18 and not score_grid(both, SIX).matched
    assert recount(both, SIX)[0] == 18
    keys = [card_key(c, SIX) for c in both]
    assert all(k >= UNKNOWN for k in (keys[0], keys[3]))
    assert scorer(SIX).total(keys, [0.0, 3.0, 4.0, 0.0, 5.0, 6.0]) == 18


def test_extra_places_are_single_cards_in_no_line() -> None:
    cards = _cards("5S 3C 4D 5H 9S 6C 9D 3H")  # the 9D and 3H lie in extra places: they pair with nothing
    result = score_grid(cards, SIX)
    assert result.total == 3 + 4 + 9 + 6 + 9 + 3
    assert result.matched == {0, 3}
    assert "extra place" in result.lines[7].note
    assert recount(cards, SIX)[0] == result.total
    assert scorer(SIX).total([card_key(c, SIX) for c in cards], [5, 3, 4, 5, 9, 6, 9, 3]) == result.total


def test_a_straight_needs_exactly_its_nine_cards() -> None:
    straight = _cards("AS 5C 9D 2H 6S 8C 3D 7H 4S")
    assert score_grid([*straight, parse_cards("TS")[0]], STRAIGHT).total == 41 + 10
    gap = [*straight[:8], None]
    assert score_grid(gap, STRAIGHT).total == 41 - 4


def test_short_grids_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 6"):
        score_grid(_cards("AS 2S 3S 4S 5S"), SIX)


def test_unknown_cards_never_match_and_block_a_straight() -> None:
    straight = _cards("AS 5C 9D 2H 6S 8C 3D 7H 4S")
    keys = [card_key(c, STRAIGHT) for c in straight]
    keys[8] = UNKNOWN + 8
    assert scorer(STRAIGHT).total(keys, [1, 5, 9, -2, 6, 8, 3, 7, 4.5]) == 41.5


# -- hole-level rules ---------------------------------------------------------------------------------------------
def finished(
    rules: GolfRules,
    grids: list[str],
    ender: int | None = None,
    went_out: int | None = None,
    strokes: tuple[int, ...] | None = None,
) -> HoleState:
    """A hole over with these grids (every card face up)."""
    state = deal(rules, len(grids), "house-scoring")
    cards = tuple(tuple(_cards(g)) for g in grids)
    return replace(
        state,
        grids=cards,  # grids may hold empty places (the powers to come)
        face_up=tuple(tuple(True for _ in g) for g in cards),
        phase=Phase.OVER,
        end_reason=EndReason.KNOCK if ender is not None else EndReason.STOCK_OUT,
        ender=ender,
        went_out=went_out,
        strokes=strokes or tuple(0 for _ in grids),
    )


def lines_of(state: HoleState, seat: int) -> list[tuple[str, int]]:
    return [(line.rule, line.points) for line in hole_result(state).seats[seat].lines if line.rule in HOLE_RULES]


def check_recount(state: HoleState) -> None:
    result = hole_result(state)
    scores, wins = recount_hole(state.grids, state.rules, state.strokes, state.ender, state.went_out)
    assert list(result.scores) == scores and list(result.wins_match) == wins
    for seat in result.seats:
        assert sum(line.points for line in seat.lines) == seat.total


LOW = "KS KC 3D 4H 5S 6C"  # 18
MID = "9S 8C 3D 7H 5S 6C"  # 38
HIGH = "TS JC QD JH QS TC"  # 60: the most a six-card grid scores


def test_shoot_the_moon() -> None:
    rules = replace(SIX, shoot_the_moon=True)
    assert moon_value(rules) == 60
    state = finished(rules, [HIGH, LOW, MID])
    assert hole_result(state).scores == (0, 60, 60)
    assert lines_of(state, 0) == [("shoot-the-moon", -60)]
    assert lines_of(state, 1) == [("shoot-the-moon", 42)]
    check_recount(state)
    assert hole_result(finished(SIX, [HIGH, LOW, MID])).scores == (60, 18, 38)
    assert moon_value(replace(SIX, jokers=2, joker_value=15)) == 90
    assert moon_value(replace(SIX, special_values=(("QS", 40),))) == 240


def test_blackjack() -> None:
    rules = replace(SIX, blackjack=True)
    state = finished(rules, ["TS 3C 4D 4H 5S 5C", MID])  # 10+3+4+4+5+5 = 31 ... columns unmatched
    assert hole_result(state).scores == (31, 38)
    state = finished(rules, ["TS 3C 4D AH KS 3C", MID])  # 21
    assert hole_result(state).scores == (0, 38)
    assert lines_of(state, 0) == [("blackjack", -21)]
    check_recount(state)


def test_first_out_bonus_goes_to_the_seat_that_went_out() -> None:
    rules = replace(SIX, first_out_bonus=-5)
    state = finished(rules, [MID, LOW], went_out=1)
    assert hole_result(state).scores == (38, 13)
    assert lines_of(state, 1) == [("first-out", -5)]
    assert hole_result(finished(rules, [MID, LOW])).scores == (38, 18)
    check_recount(state)


def test_underdog_to_every_lowest_seat() -> None:
    rules = replace(SIX, underdog_bonus=-3)
    state = finished(rules, [LOW, MID, LOW])
    assert hole_result(state).scores == (15, 38, 15)
    assert lines_of(state, 2) == [("underdog", -3)]
    check_recount(state)


def test_tied_shame() -> None:
    rules = replace(SIX, tied_penalty=5)
    state = finished(rules, [LOW, MID, LOW, HIGH])
    assert hole_result(state).scores == (23, 38, 23, 60)
    assert lines_of(state, 0) == [("tied-shame", 5)]
    check_recount(state)


def test_the_order_of_the_hole_rules() -> None:
    """grid, peek strokes, four alike against the opponents, shooting the moon, blackjack, the knocker, the first
    out, underdog, tied shame: each applies to the score the ones before it left."""
    rules = replace(
        SIX,
        peek_stroke=1,
        four_alike_opponents=10,
        four_alike_scope=FourAlikeScope.ANYWHERE,
        shoot_the_moon=True,
        blackjack=True,
        knocker_penalty=KnockerPenalty.PLUS_10,
        knocker_bonus=KnockerBonus.MINUS_PLAYERS,
        first_out_bonus=-5,
        underdog_bonus=-3,
        tied_penalty=5,
    )
    # Seat 0: 10 on the grid, +1 stroke, +10 for seat 2's four sevens = 21 -> blackjack 0 -> knocked with the
    #   lowest (ties count): -3 players -> first out -5 = -8 -> underdog -3 = -11.
    # Seat 1: 8, +3 strokes, +10 = 21 -> blackjack 0 -> tied with seat 2: +5. Seat 2: four sevens, 0 -> tied: +5.
    grids = ["AS 3C 3D 2H KS 5C", "AS 3C 8D 2H 2S KC", "7S 7C 3D 7H 7D 3C"]
    state = finished(rules, grids, ender=0, went_out=0, strokes=(1, 3, 0))
    result = hole_result(state)
    assert [g.grid.total for g in result.seats] == [10, 8, 0]
    assert lines_of(state, 0) == [
        ("peek-stroke", 1),
        ("four-alike-opponent", 10),
        ("blackjack", -21),
        ("knocker-bonus", -3),
        ("first-out", -5),
        ("underdog", -3),
    ]
    assert result.scores == (-11, 5, 5)
    assert lines_of(state, 1) == [
        ("peek-stroke", 3),
        ("four-alike-opponent", 10),
        ("blackjack", -21),
        ("tied-shame", 5),
    ]
    assert lines_of(state, 2) == [("tied-shame", 5)]
    check_recount(state)
    # The moon comes after the strokes and four alike and wipes them; blackjack and the rest apply after it.
    moon = finished(rules, [HIGH, "7S 7C 3D 7H 7D 3C", LOW], ender=2, strokes=(2, 0, 0))
    assert hole_result(moon).scores == (0 - 3, 60, 60 + 10)
    assert [rule for rule, _ in lines_of(moon, 0)] == [
        "peek-stroke",
        "four-alike-opponent",
        "shoot-the-moon",
        "underdog",
    ]
    check_recount(moon)


def test_every_hole_rule_line_has_a_note() -> None:
    rules = replace(SIX, blackjack=True, underdog_bonus=-3, tied_penalty=5, first_out_bonus=-5)
    state = finished(rules, ["TS 3C 4D AH KS 3C", LOW, LOW], went_out=0)
    for seat in hole_result(state).seats:
        for line in seat.lines:
            assert line.note and line.rule


# -- four alike wins the match ------------------------------------------------------------------------------------
WINS = replace(SIX, four_alike_wins_match=True, four_alike_scope=FourAlikeScope.ANYWHERE)
FOUR_SEVENS = "7S 7C 3D 7H 7D 3C"


def test_four_alike_wins_the_match_at_once() -> None:
    state = finished(WINS, [MID, FOUR_SEVENS, LOW])
    result = hole_result(state)
    assert result.wins_match == (1,)
    assert lines_of(state, 1) == [("four-alike-wins-match", 0)]
    sheet = ScoreSheet(3, ((0, 40, 0),)).add(result)
    assert sheet.won_by == (1,) and sheet.leaders == (1,)
    assert sheet.totals == (38, 40, 18) and sheet.places == (3, 1, 2)
    assert match_over(WINS, sheet) and not match_over(WINS, ScoreSheet(3, ((0, 40, 0),)))
    check_recount(state)
    # Without the option four alike is just cards.
    plain = hole_result(finished(SIX, [MID, FOUR_SEVENS, LOW]))
    assert plain.wins_match == () and not match_over(SIX, ScoreSheet(3).add(plain))


def test_of_several_holders_the_lowest_total_wins() -> None:
    result = hole_result(finished(WINS, [FOUR_SEVENS, MID, "8S 8C 3D 8H 8D 3C"]))
    assert result.wins_match == (0, 2)
    assert ScoreSheet(3, ((5, 0, 1),)).add(result).won_by == (2,)
    tied = ScoreSheet(3, ((1, 0, 1),)).add(result)
    assert tied.won_by == (0, 2) and tied.places == (1, 3, 1)
    # A later hole does not change the outright winner.
    assert tied.add(result).won_by == (0, 2)


def test_four_alike_in_a_block_under_block_scope() -> None:
    rules = replace(EIGHT, four_alike_wins_match=True, four_alike_scope=FourAlikeScope.BLOCK)
    scattered = "7S 2C 7H 3C 4D 7D 5D 7C"
    assert hole_result(finished(rules, [scattered, "AS 2S 3S 4S 5S 6S 8S 9S"])).wins_match == ()
    block = "7S 7H 2C 3C 7D 7C 4C 5C"
    assert hole_result(finished(rules, [block, "AS 2S 3S 4S 5S 6S 8S 9S"])).wins_match == (0,)


# -- the rules page -----------------------------------------------------------------------------------------------
def test_the_rules_page_names_every_scoring_option_and_the_hole_order() -> None:
    from pathlib import Path

    page = (Path(__file__).parents[3] / "docs" / "card-golf-rules.md").read_text()
    options = [
        "values",
        "joker_value",
        "special_values",
        "wild_one_eyed_jacks",
        "pairs_by_value",
        "negative_pairs_keep_value",
        "match_columns",
        "match_rows",
        "match_diagonals",
        "match_adjacent_pairs",
        "joker_pair_value",
        "block_of_four_value",
        "four_alike_scope",
        "four_alike_self",
        "four_alike_opponents",
        "four_jacks_value",
        "four_in_two_columns_value",
        "four_kings_line_value",
        "straight_value",
        "shoot_the_moon",
        "blackjack",
        "four_alike_wins_match",
        "first_out_bonus",
        "underdog_bonus",
        "tied_penalty",
        "knocker_penalty",
        "knocker_bonus",
        "peek_stroke",
    ]
    for name in options:
        assert f"`{name}`" in page, name
    hole_table = page[page.index("## The hole") : page.index("**Shooting the moon.**")]
    where = [hole_table.index(f"`{rule}`") for rule in HOLE_RULES]
    assert where == sorted(where), "the page lists the hole rules in the order the code applies them"
