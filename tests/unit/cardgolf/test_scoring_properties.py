"""Engine against the independent recount on random grids under random combinations of every scoring option (grid
and hole level), with empty and extra places; and random playouts of holes under house scoring options."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from golf.engine.cardgolf import GolfRules, HoleState, build_deck, hole_result, preset
from golf.engine.cardgolf.bots import make_bot
from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.match import deal_hole
from golf.engine.cardgolf.options import FourAlikeScope, KnockerBonus, KnockerPenalty
from golf.engine.cardgolf.play import play_hole
from golf.engine.cardgolf.rules import GRIDS, STANDARD_VALUES
from golf.engine.cardgolf.scoring import card_key, moon_value, scorer
from golf.engine.cardgolf.state import EndReason, Phase, deal
from tests.unit.cardgolf.recount import recount, recount_hole

DECK = build_deck(2, 4)
VALUES = (
    STANDARD_VALUES,
    (1, -2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 12, 13),
    (1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 10, 10, 0),
    (1, -2, 3, 4, 5, 6, 7, 8, 9, 1, 0, 10, -2),
)


@st.composite
def rules_st(draw: st.DrawFn) -> GolfRules:
    rows, cols = draw(st.sampled_from(GRIDS))
    b = st.booleans()
    options: dict[str, Any] = {
        "rows": rows,
        "cols": cols,
        "decks": 2,
        "jokers": 4,
        "values": draw(st.sampled_from(VALUES)),
        "joker_value": draw(st.sampled_from((-2, -5, 2, 15))),
        "special_values": draw(st.sampled_from(((), (("QS", 40),), (("KH", -1), ("KD", -1))))),
        "wild_one_eyed_jacks": draw(b),
        "pairs_by_value": draw(b),
        "negative_pairs_keep_value": draw(b),
        "match_columns": draw(b),
        "match_rows": draw(b),
        "match_diagonals": rows == cols and draw(b),
        "match_adjacent_pairs": draw(st.sampled_from((False, False, True))),
        "joker_pair_value": draw(st.sampled_from((None, -4, -5))),
        "block_of_four_value": draw(st.sampled_from((None, None, -25))),
        "four_alike_scope": draw(st.sampled_from(FourAlikeScope)),
        "four_alike_self": draw(st.sampled_from((0, -20))),
        "four_alike_opponents": draw(st.sampled_from((0, 10))),
        "four_alike_wins_match": draw(b),
        "four_jacks_value": draw(st.sampled_from((0, -20))),
        "four_in_two_columns_value": draw(st.sampled_from((0, -20))),
        "four_kings_line_value": draw(st.sampled_from((0, -16))),
        "straight_value": draw(st.sampled_from((None, -12))),
        "shoot_the_moon": draw(b),
        "blackjack": draw(b),
        "first_out_bonus": draw(st.sampled_from((0, -5))),
        "underdog_bonus": draw(st.sampled_from((0, -3))),
        "tied_penalty": draw(st.sampled_from((0, 5))),
        "knocker_penalty": draw(st.sampled_from(KnockerPenalty)),
        "knocker_bonus": draw(st.sampled_from(KnockerBonus)),
    }
    return GolfRules(**options)


def random_grid(rules: GolfRules, rnd: random.Random) -> list[GCard | None]:
    """A grid biased towards what the rules reward: repeated ranks, like values, jacks, kings, straights, the
    highest cards (the moon), with now and then an empty place or an extra one."""
    n = rules.cards_per_grid
    style = rnd.random()
    if style < 0.1:  # a straight, maybe spoiled
        low = rnd.randint(1, 14 - n)
        ranks = list(range(low, low + n))
        rnd.shuffle(ranks)
        cards: list[GCard | None] = [rnd.choice([c for c in DECK if c.rank == r]) for r in ranks]
    elif style < 0.2:  # the highest single cards
        top = max(rules.card_value(c) for c in DECK)
        best = [c for c in DECK if rules.card_value(c) == top]
        cards = [rnd.choice(best) for _ in range(n)]
    else:
        few = rnd.sample(DECK, rnd.randint(1, 4))
        pool = [c for c in DECK if any(c.rank == f.rank for f in few)] + [c for c in DECK if c.rank in (0, 11, 13)]
        cards = [rnd.choice(pool) if rnd.random() < 0.7 else rnd.choice(DECK) for _ in range(n)]
    if rnd.random() < 0.15:
        cards[rnd.randrange(n)] = None
    if rnd.random() < 0.1:
        cards += [rnd.choice(DECK) for _ in range(rnd.randint(1, 2))]
    return cards


@settings(max_examples=400, deadline=None)
@given(rules_st(), st.randoms(use_true_random=False))
def test_grid_scores_equal_the_recount(rules: GolfRules, rnd: random.Random) -> None:
    cards = random_grid(rules, rnd)
    result = scorer(rules).breakdown(cards)
    total, fours = recount(cards, rules)
    assert result.total == total
    assert result.four_alikes == (fours if scorer(rules).counts_four else 0)
    assert sum(line.points for line in result.lines) == result.total
    assert all(line.note for line in result.lines)
    keys = [card_key(c, rules) for c in cards]
    values = [float(rules.card_value(c)) if c is not None else 0.0 for c in cards]
    assert scorer(rules).total(keys, values) == result.total


@settings(max_examples=250, deadline=None)
@given(rules_st(), st.integers(2, 4), st.randoms(use_true_random=False))
def test_hole_scores_equal_the_recount(rules: GolfRules, players: int, rnd: random.Random) -> None:
    state = deal(rules, players, "props")
    grids = tuple(tuple(random_grid(rules, rnd)) for _ in range(players))
    ender = rnd.choice([None, *range(players)])
    went_out = rnd.choice([None, *range(players)])
    strokes = tuple(rnd.choice((0, 0, 1, 2)) for _ in range(players))
    state = replace(
        state,
        grids=grids,  # with empty places: the grids the ace of Powers will make
        face_up=tuple(tuple(True for _ in g) for g in grids),
        phase=Phase.OVER,
        end_reason=EndReason.KNOCK if ender is not None else EndReason.STOCK_OUT,
        ender=ender,
        went_out=went_out,
        strokes=strokes,
    )
    result = hole_result(state)
    scores, wins = recount_hole(grids, rules, strokes, ender, went_out)
    assert list(result.scores) == scores
    assert list(result.wins_match) == wins
    for seat in result.seats:
        assert sum(line.points for line in seat.lines) == seat.total


def test_the_random_grids_reach_every_rule() -> None:
    """The generator above is not idle: across seeds it triggers every grid rule and the moon."""
    rnd = random.Random(7)
    seen: Counter[str] = Counter()
    everything = replace(
        preset("nine-card"),
        jokers=4,
        joker_pair_value=-4,
        block_of_four_value=-25,
        match_rows=True,
        four_alike_self=-20,
        four_jacks_value=-20,
        four_in_two_columns_value=-20,
        straight_value=-12,
        negative_pairs_keep_value=True,
    )
    kings = replace(preset("eight-card"), four_kings_line_value=-16, match_rows=True)
    for rules in (everything, kings):
        for _ in range(3000):
            seen.update(line.rule for line in scorer(rules).breakdown(random_grid(rules, rnd)).lines)
    for rule in ("block-of-four", "four-alike", "four-jacks", "four-in-two-columns", "straight", "four-kings-line"):
        assert seen[rule] > 0, rule
    six = replace(preset("six-card"), shoot_the_moon=True)
    assert any(scorer(six).breakdown(random_grid(six, rnd)).total >= moon_value(six) for _ in range(500))


HOUSE: dict[str, GolfRules] = {
    "six-house": replace(
        preset("six-card"),
        pairs_by_value=True,
        negative_pairs_keep_value=True,
        four_jacks_value=-20,
        four_in_two_columns_value=-20,
        blackjack=True,
        first_out_bonus=-5,
        underdog_bonus=-3,
        tied_penalty=5,
        shoot_the_moon=True,
        knocking=True,
        knocker_penalty=KnockerPenalty.PLUS_10,
    ),
    "eight-kings": replace(preset("eight-card"), four_kings_line_value=-16, four_alike_opponents=10, jokers=2),
    "nine-straight": replace(
        preset("nine-card"),
        straight_value=-12,
        block_of_four_value=-25,
        wild_one_eyed_jacks=True,
        four_alike_wins_match=True,
        four_alike_scope=FourAlikeScope.ANYWHERE,
    ),
}


def test_house_playouts_equal_the_recount() -> None:
    for name, rules in HOUSE.items():
        for hole in range(3):
            players = 2 + hole
            state: HoleState = deal_hole(rules, players, f"house-{name}", hole)
            deck = Counter(state.all_cards())
            bots = [make_bot("random" if (hole + i) % 2 else "greedy", hole * 10 + i) for i in range(players)]
            final = play_hole(state, bots)
            assert final.over and Counter(final.all_cards()) == deck
            result = hole_result(final)
            scores, wins = recount_hole(final.grids, rules, final.strokes, final.ender, final.went_out)
            assert list(result.scores) == scores, name
            assert list(result.wins_match) == wins
