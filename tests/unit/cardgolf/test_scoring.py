"""Hand-made scoring cases across the presets and options, each with its total and breakdown, plus properties."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golf.engine.cardgolf import GolfRules, build_deck, parse_cards, preset, score_grid
from golf.engine.cardgolf.options import FourAlikeScope
from golf.engine.cardgolf.scoring import card_key, scorer
from tests.unit.cardgolf.grid_cases import check_grid_case
from tests.unit.cardgolf.recount import recount

SIX = preset("six-card")
JOK = preset("six-card-jokers")
FOUR = preset("four-card")
EIGHT = preset("eight-card")
NINE = preset("nine-card")
NINE_ROWS = replace(NINE, match_rows=True)
NINE_DIAG = replace(NINE, match_diagonals=True)
NINE_ADJ = replace(NINE, match_adjacent_pairs=True)
NINE_BLOCK = replace(NINE, block_of_four_value=-25)
NINE_BLOCK_ADJ = replace(NINE_BLOCK, match_adjacent_pairs=True)
FOUR_BY_TWO = replace(SIX, rows=4, cols=2)
THREE_BY_TWO = replace(SIX, rows=3, cols=2)
JQK = replace(SIX, values=(1, -2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 12, 13))
QS40 = replace(SIX, special_values=(("QS", 40),), values=(1, -2, 3, 4, 5, 6, 7, 0, 9, 10, 10, 10, 0))
TWOS_PLUS = replace(SIX, values=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 0))
JOKER_15 = replace(JOK, joker_value=15, joker_pair_value=-5, four_alike_opponents=0)
JOKER_M5 = replace(SIX, jokers=2, joker_value=-5)
JOKERS_PLAIN = replace(SIX, jokers=2)
WILD = replace(SIX, wild_one_eyed_jacks=True)
FOUR_SELF = replace(EIGHT, four_alike_self=-20, four_alike_scope=FourAlikeScope.ANYWHERE)
FOUR_SELF_BLOCK = replace(EIGHT, four_alike_self=-20, four_alike_scope=FourAlikeScope.BLOCK)
ROWS_TOO = replace(SIX, match_rows=True)
NINE_BLOCK_JOKERS = replace(NINE_BLOCK, jokers=4)

# (id, rules, grid row by row, total, {rule: points of the non-card lines}, matched positions)
CASES: list[tuple[str, GolfRules, str, int, dict[str, int], set[int]]] = [
    ("six-plain", SIX, "AS 2C 3D 4H 5S 6C", 17, {}, set()),
    ("six-col-pair", SIX, "5S 2C 3D 5H 9S 6C", 16, {"column": -10}, {0, 3}),
    ("six-twos-pair-zero", SIX, "2S 2C 2D 2H KS KC", -4, {"column": 4}, {0, 3}),
    ("six-all-kings", SIX, "KS KC KD KH KS KC", 0, {"column": 0}, {0, 1, 2, 3, 4, 5}),
    ("six-court-pairs", SIX, "QS QC JD QH QD JC", 0, {"column": -60}, {0, 1, 2, 3, 4, 5}),
    ("six-high", SIX, "TS 9C 8D 7H 6S 5C", 45, {}, set()),
    ("six-four-sevens", SIX, "7S 7C 3D 7H 7D 3C", 0, {"column": -34}, {0, 1, 2, 3, 4, 5}),
    ("jokers-row-pair", JOK, "XB XR 5S 6C KD AH", 8, {"row": 0}, {0, 1}),
    ("jokers-apart", JOK, "XB 5S XR 6C KD AH", 8, {}, set()),
    ("jokers-four-sevens", JOK, "7S 7C 7D 7H 3S 4C", 7, {"row": -28}, {0, 1, 2, 3}),
    ("jokers-queens-twos", JOK, "QS QC 2D 2H XB AS", -1, {"row": -24}, {0, 1, 2, 3}),
    ("jokers-two-joker-rows", JOK, "XB XR XB XR 5S 5C", -8, {"row": -10}, {0, 1, 2, 3, 4, 5}),
    ("four-ace-pair", FOUR, "AS 2C AH 3D", 1, {"column": -2}, {0, 2}),
    ("four-kings", FOUR, "KS KC KD KH", 0, {"column": 0}, {0, 1, 2, 3}),
    ("four-high", FOUR, "TS JC QD 9H", 39, {}, set()),
    ("eight-two-pairs", EIGHT, "AS 2S 3S 4S AH 2H 5H 6H", 18, {"column": 2}, {0, 1, 4, 5}),
    ("4x2-columns-of-four", FOUR_BY_TWO, "5S 6S 5H 6H 5D 6D 5C 6C", 0, {"column": -44}, set(range(8))),
    ("4x2-broken-column", FOUR_BY_TWO, "5S 6S 5H 6H 5D 6D 4C 6C", 19, {"column": -24}, {1, 3, 5, 7}),
    ("nine-all-columns", NINE, "5S 6S 7S 5H 6H 7H 5D 6D 7D", 0, {"column": -54}, set(range(9))),
    ("nine-two-columns", NINE, "5S 6S 7S 5H 6H 7H 5D 6D 8D", 22, {"column": -33}, {0, 1, 3, 4, 6, 7}),
    ("nine-rows", NINE_ROWS, "5S 5H 5D 2C 3C 4C KS KH KD", 5, {"row": -15}, {0, 1, 2, 6, 7, 8}),
    ("nine-diagonal", NINE_DIAG, "9S 2C 3D 4H 9H 6C 7S 8D 9D", 26, {"diagonal": -27}, {0, 4, 8}),
    ("nine-anti-diagonal", NINE_DIAG, "2C 3D 8S 4H 8H 6C 8D 7S 9D", 27, {"diagonal": -24}, {2, 4, 6}),
    ("nine-adjacent", NINE_ADJ, "4S 4H 9C 2D 3C TS JD QD KS", 40, {"adjacent-pair": -8}, {0, 1}),
    ("nine-block", NINE_BLOCK, "6S 6H 2C 6D 6C 3C 9S TS JS", 5, {"block-of-four": -49}, {0, 1, 3, 4}),
    (
        "nine-block-adjacent",
        NINE_BLOCK_ADJ,
        "6S 6H 2C 6D 6C 3C 9S TS JS",
        5,
        {"block-of-four": -49, "adjacent-pair": 0},
        {0, 1, 3, 4},
    ),
    ("nine-column-of-twos", NINE, "2S 3S 4S 2H 5S 6S 2D 7S 8S", 33, {"column": 6}, {0, 3, 6}),
    ("jacks-0-queens-12-kings-13", JQK, "JS QS KS AH 2H 3H", 27, {}, set()),
    ("queen-of-spades-40-eights-0", QS40, "QS QH 8S 4C 5C 7D", 66, {}, set()),
    ("twos-plus-two", TWOS_PLUS, "2S 3S 4S 5S 6S 7S", 27, {}, set()),
    ("jokers-15-pair-minus-5", JOKER_15, "XB XR 3S 4S XB 5S", 22, {"row": -35}, {0, 1}),
    ("jokers-minus-5", JOKER_M5, "XB 3S 4S 5S 6S 7S", 20, {}, set()),
    ("joker-column-pair-plain", JOKERS_PLAIN, "XB 3S 4S XR 6S 7S", 20, {"column": 4}, {0, 3}),
    ("one-eyed-jack-wild", WILD, "JH 3S 4S 9C 6S 7S", 20, {"column": -19}, {0, 3}),
    ("two-eyed-jack-not-wild", WILD, "JD 3S 4S 9C 6S 7S", 39, {}, set()),
    ("two-wild-jacks", WILD, "JH 3S 4S JS 6S 7S", 20, {"column": -20}, {0, 3}),
    ("powers-red-kings", preset("powers"), "KH KS KD 2S AS 3S", 0, {}, set()),
    (
        "four-alike-anywhere-bonus",
        FOUR_SELF,
        "7S 7H 2C 3C 7D 7C 4C 5C",
        -10,
        {"column": -28, "four-alike": -20},
        {0, 1, 4, 5},
    ),
    ("four-alike-scattered", FOUR_SELF, "7S 2C 7H 3C 4D 7D 5D 7C", 18, {"four-alike": -20}, set()),
    ("four-alike-block-needs-block", FOUR_SELF_BLOCK, "7S 2C 7H 3C 4D 7D 5D 7C", 38, {}, set()),
    (
        "four-alike-block-found",
        FOUR_SELF_BLOCK,
        "7S 7H 2C 3C 7D 7C 4C 5C",
        -10,
        {"column": -28, "four-alike": -20},
        {0, 1, 4, 5},
    ),
    ("3x2-column-of-three", THREE_BY_TWO, "4S 5S 4H 6S 4D 7S", 18, {"column": -12}, {0, 2, 4}),
    ("six-rows-too", ROWS_TOO, "5S 5H 5D 2C 3C 4C", 5, {"row": -15}, {0, 1, 2}),
    ("nine-block-of-jokers", NINE_BLOCK_JOKERS, "XB XR 3S XB XR 4S 5S 6S 7S", 0, {"block-of-four": -17}, {0, 1, 3, 4}),
]


@pytest.mark.parametrize(
    ("rules", "grid", "total", "by_rule", "matched"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_hand_made_case(rules: GolfRules, grid: str, total: int, by_rule: dict[str, int], matched: set[int]) -> None:
    cards = parse_cards(grid)
    check_grid_case(cards, rules, total, by_rule, matched)
    result = score_grid(cards, rules)
    assert [line.points for line in result.lines if line.rule == "card"] == [rules.card_value(c) for c in cards]


def test_case_count() -> None:
    assert len(CASES) >= 40


def test_grid_size_checked() -> None:
    with pytest.raises(ValueError):
        score_grid(parse_cards("AS 2S"), SIX)


RULE_SETS = [
    SIX,
    JOK,
    FOUR,
    EIGHT,
    NINE,
    NINE_ROWS,
    NINE_DIAG,
    NINE_ADJ,
    NINE_BLOCK_ADJ,
    WILD,
    FOUR_SELF,
    QS40,
    JOKER_15,
    FOUR_BY_TWO,
    THREE_BY_TWO,
    replace(SIX, rows=2, cols=4, match_rows=True),
]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(RULE_SETS), st.randoms(use_true_random=False))
def test_scorer_equals_recount(rules: GolfRules, rnd: object) -> None:
    import random

    assert isinstance(rnd, random.Random)
    deck = build_deck(2, 4)
    # Bias towards repeated ranks so matches happen often.
    ranks = rnd.sample(deck, 4)
    pool = [c for c in deck if c.rank in {r.rank for r in ranks}] + deck
    cards = [rnd.choice(pool[:40]) if rnd.random() < 0.6 else rnd.choice(deck) for _ in range(rules.cards_per_grid)]
    result = scorer(rules).breakdown(cards)
    total, fours = recount(cards, rules)
    assert result.total == total
    assert result.four_alikes == fours or not (rules.four_alike_self or rules.four_alike_opponents)
    keys = [card_key(c, rules) for c in cards]
    assert scorer(rules).total(keys, [float(rules.card_value(c)) for c in cards]) == total


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(build_deck(1, 0)), min_size=6, max_size=6), st.permutations([0, 1, 2]))
def test_six_card_columns_commute(cards: list, order: list[int]) -> None:  # type: ignore[type-arg]
    """Reordering the columns of a six-card grid never changes its score."""
    moved = [cards[order[i % 3] + 3 * (i // 3)] for i in range(6)]
    assert score_grid(cards, SIX).total == score_grid(moved, SIX).total


def test_wild_one_eyed_jacks_are_still_jacks_for_four_alike() -> None:
    """The texts: a one-eyed jack is wild only in that it matches other cards; four jacks are four alike."""
    rules = replace(EIGHT, wild_one_eyed_jacks=True, four_alike_self=-20, four_alike_scope=FourAlikeScope.ANYWHERE)
    four_jacks = parse_cards("JS JH JD JC 2S 3C 4D 5H")  # JS and JH are the one-eyed jacks
    assert score_grid(four_jacks, rules).four_alikes == 1
    block = replace(rules, four_alike_scope=FourAlikeScope.BLOCK)
    assert score_grid(parse_cards("JS JH 2S 3C JD JC 4D 5H"), block).four_alikes == 1
    # A wild jack does not make three sevens four alike: it is a jack.
    assert score_grid(parse_cards("7S 7H 7D JS 2S 3C 4D 5H"), rules).four_alikes == 0
