"""The exact solver: fewest cards left against a brute-force search, every rule option, budgets, mid-game."""

from __future__ import annotations

import random
from dataclasses import replace
from functools import cache

import pytest

from golf.engine.cards import Card, parse_cards
from golf.engine.solitaire.moves import Draw
from golf.engine.solitaire.rules import PRESETS, SolitaireRules
from golf.engine.solitaire.solver import SolveResult, hint, solve
from golf.engine.solitaire.state import Layout, State, Status

STANDARD = PRESETS["standard"]


def brute_force(start: State) -> int:
    """Fewest cards any line leaves in the columns, by plain exhaustive search on the engine (0 for a win)."""

    @cache
    def best(heights: tuple[int, ...], turned: int, top: Card) -> int:
        state = State(start.rules, start.layout, heights, (top,), turned)
        moves = state.legal_moves()
        if not moves:
            return state.cards_in_columns
        values = []
        for move in moves:
            after = state.apply(move)
            values.append(best(after.heights, after.turned, after.top))
        return min(values)

    return best(start.heights, start.turned, start.top)


def check(start: State, result: SolveResult) -> State:
    """The line replays legally, ends the game and leaves the cards it says."""
    end = start.replay(list(result.line))
    assert end.status is not Status.IN_PROGRESS
    assert end.cards_in_columns == result.cards_left
    assert end.stock_left == result.stock_left
    assert result.winnable is (end.status is Status.WON)
    assert result.fewest_proven and result.lower_bound == result.cards_left
    return end


def small_rules(rng: random.Random) -> SolitaireRules:
    return replace(
        STANDARD,
        decks=rng.choice((1, 1, 2)),
        columns=rng.randint(2, 5),
        column_height=rng.randint(2, 4),
        wrap=rng.random() < 0.3,
        queens_on_kings=rng.random() < 0.3,
        draw_only_when_stuck=rng.random() < 0.3,
    )


def short_stock(layout: Layout, rng: random.Random) -> Layout:
    """The same deal with a stock of 6 to 14 cards, to keep the brute force small."""
    return replace(layout, stock=layout.stock[: rng.randint(6, 14)])


@pytest.mark.parametrize("seed", range(60))
def test_fewest_cards_matches_brute_force_on_small_deals(seed: int) -> None:
    rng = random.Random(seed)
    rules = small_rules(rng)
    start = State.initial(rules, short_stock(Layout.from_seed(rules, f"solver-{seed}"), rng))
    result = solve(start)
    check(start, result)
    assert result.cards_left == brute_force(start)


@pytest.mark.parametrize("seed", range(20))
def test_verdict_only_agrees_with_brute_force(seed: int) -> None:
    rng = random.Random(1000 + seed)
    rules = small_rules(rng)
    start = State.initial(rules, short_stock(Layout.from_seed(rules, f"verdict-{seed}"), rng))
    result = solve(start, fewest_cards=False)
    assert result.winnable is (brute_force(start) == 0)
    end = start.replay(list(result.line))
    assert end.status is not Status.IN_PROGRESS and end.cards_in_columns == result.cards_left


@pytest.mark.parametrize("preset", ["standard", "queens-on-kings", "wrap"])
@pytest.mark.parametrize("number", [1, 3, 7, 26])
def test_mid_game_positions_late_in_pysol_deals(preset: str, number: int) -> None:
    # Turn most of the stock first (playing a card before each turn when one fits), to keep the brute force small.
    start = State.initial(PRESETS[preset], Layout.from_pysol(number))
    state = start
    for _ in range(12):
        plays = state.column_plays()
        if plays:
            state = state.apply(plays[0])
        state = state.apply(Draw())
    result = solve(state)
    check(state, result)
    assert result.cards_left == brute_force(state)


def test_draw_only_when_stuck_lines_are_legal() -> None:
    rules = replace(STANDARD, draw_only_when_stuck=True)
    for number in range(1, 11):
        start = State.initial(rules, Layout.from_pysol(number))
        check(start, solve(start))


def test_two_decks_deal_with_duplicate_cards() -> None:
    rules = PRESETS["two-decks"]
    for seed in ("a",):
        start = State.initial(rules, Layout.from_seed(rules, seed))
        result = solve(start, fewest_cards=False)
        end = start.replay(list(result.line))
        assert end.status is not Status.IN_PROGRESS
        assert result.winnable is (end.status is Status.WON)


def test_budget_run_out_is_not_a_no() -> None:
    start = State.initial(STANDARD, Layout.from_pysol(70))
    result = solve(start, budget=50)
    assert result.winnable is None and result.budget_exceeded
    assert result.positions <= 51
    end = start.replay(list(result.line))  # the best line seen, played out to the end
    assert end.status is not Status.IN_PROGRESS and end.cards_in_columns == result.cards_left
    assert not result.fewest_proven


def test_budget_out_after_the_verdict_keeps_the_verdict() -> None:
    start = State.initial(STANDARD, Layout.from_pysol(70))
    verdict = solve(start, fewest_cards=False)
    assert verdict.winnable is False
    result = solve(start, budget=verdict.positions + 10)
    assert result.winnable is False and result.budget_exceeded
    assert start.replay(list(result.line)).cards_in_columns == result.cards_left


def test_winning_line_from_a_fresh_deal_and_from_mid_game() -> None:
    start = State.initial(STANDARD, Layout.from_pysol(2))
    result = solve(start)
    assert result.winnable and check(start, result).status is Status.WON
    middle = start.replay(list(result.line[:10]))
    again = solve(middle)
    assert again.winnable and check(middle, again).status is Status.WON
    assert hint(middle) == again.line[0]


def test_a_lost_position_gives_the_fewest_cards() -> None:
    start = State.initial(STANDARD, Layout.from_pysol(1))
    result = solve(start)
    assert result.winnable is False
    check(start, result)
    quick = solve(start, fewest_cards=False)
    assert quick.winnable is False and quick.cards_left >= result.cards_left


def test_game_over_positions() -> None:
    layout = Layout(((Card.parse("5C"),),), Card.parse("KD"), ())
    lost = State.initial(replace(STANDARD, columns=1, column_height=1), layout)
    result = solve(lost)
    assert result.winnable is False and result.line == () and result.cards_left == 1 and result.hint is None
    won = State(lost.rules, lost.layout, (0,), (Card.parse("KD"),), 0)
    assert solve(won).winnable is True and solve(won).line == ()


def test_wrap_goes_round_the_king() -> None:
    columns = (tuple(parse_cards("2S AC")), tuple(parse_cards("3H")))
    layout = Layout(columns, Card.parse("KD"), tuple(parse_cards("3C")))
    rules = replace(STANDARD, columns=2, column_height=2)
    wrapped = solve(State.initial(replace(rules, wrap=True), layout))
    assert wrapped.winnable is True and [m.code for m in wrapped.line] == ["0:AC", "0:2S", "1:3H"]
    plain = solve(State.initial(rules, layout))
    assert plain.winnable is False and plain.cards_left == 3
    assert plain.line == (Draw(Card.parse("3C")),)
