"""The compiled search (``_search.pyx``) against the pure Python one it mirrors: the same results, every field.

``solve(..., compiled=False)`` is the reference. Both must give the same verdict, line, cards left, lower bound and
positions searched, so they explore the same positions in the same order; on budgets and ``stop`` they must stop
at the same position.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from golf.engine.solitaire.rules import PRESETS, SolitaireRules
from golf.engine.solitaire.solver import STOP_CHECK_EVERY, CompiledSearch, SearchStopped, _Search, solve
from golf.engine.solitaire.state import Layout, State
from tests.unit.asked import Asked

STANDARD = PRESETS["standard"]


def test_the_install_builds_the_compiled_search() -> None:
    assert CompiledSearch is not None, "golf.engine.solitaire._search was not built: `make install` compiles it"
    state = State.initial(STANDARD, Layout.from_pysol(1))
    assert _Search(state, None).compiled is not None


@pytest.mark.parametrize("preset", ["standard", "queens-on-kings", "wrap"])
def test_pysol_deals_give_the_same_result(preset: str) -> None:
    for number in range(1, 201, 40):
        state = State.initial(PRESETS[preset], Layout.from_pysol(number))
        assert solve(state) == solve(state, compiled=False), number
        assert solve(state, fewest_cards=False) == solve(state, fewest_cards=False, compiled=False), number


def random_rules(rng: random.Random) -> SolitaireRules:
    decks = rng.choice((1, 1, 2))
    columns = rng.randint(1, 9)
    return replace(
        STANDARD,
        decks=decks,
        columns=columns,
        column_height=rng.randint(1, min(8, (52 * decks - 1) // columns)),
        wrap=rng.random() < 0.35,
        queens_on_kings=rng.random() < 0.35,
        draw_only_when_stuck=rng.random() < 0.3,
    )


@pytest.mark.parametrize("seed", range(30))
def test_random_deals_and_positions_give_the_same_result(seed: int) -> None:
    rng = random.Random(seed)
    rules = random_rules(rng)
    state = State.initial(rules, Layout.from_seed(rules, f"compiled-{seed}"))
    for _ in range(rng.randint(0, 10)):  # sometimes from a position in mid-game
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply(rng.choice(moves))
    budget = rng.choice((None, 30_000, rng.randint(1, 2_000)))
    assert solve(state, budget) == solve(state, budget, compiled=False)
    assert solve(state, budget, fewest_cards=False) == solve(state, budget, fewest_cards=False, compiled=False)


def test_both_stop_after_the_same_positions() -> None:
    rules = PRESETS["two-decks"]
    state = State.initial(rules, Layout.from_seed(rules, "flood-2"))  # searches for minutes
    seen = []
    for compiled in (True, False):
        stop = Asked(yes_from=3)
        search = _Search(state, None, stop, compiled)
        assert (search.compiled is not None) is compiled
        with pytest.raises(SearchStopped):
            search.run(1, 0)
        seen.append((stop.calls, search.positions))
    assert seen[0] == seen[1] and seen[0][0] == 3
    assert 2 * STOP_CHECK_EVERY < seen[0][1] <= 3 * STOP_CHECK_EVERY + 3


def test_a_stop_function_that_raises_ends_the_compiled_search_with_its_error() -> None:
    rules = PRESETS["two-decks"]
    state = State.initial(rules, Layout.from_seed(rules, "flood-2"))

    def broken() -> bool:
        raise RuntimeError("the caller is gone")

    search = _Search(state, None, broken)
    with pytest.raises(RuntimeError, match="the caller is gone"):
        search.run(1, 0)
    assert search.compiled is not None and search.compiled.positions == STOP_CHECK_EVERY + 1


def test_layouts_whose_keys_do_not_fit_in_64_bits_use_the_pure_search() -> None:
    rules = replace(STANDARD, decks=4, columns=20, column_height=10)
    state = State.initial(rules, Layout.from_seed(rules, "wide"))
    assert _Search(state, 1_000).compiled is None
    result = solve(state, 1_000)
    assert result.positions <= 1_001 and state.replay(list(result.line)).legal_moves() == []
