"""Solver work as plain functions of picklable values, so a process pool can run them; and an inline runner."""

from __future__ import annotations

from collections.abc import Callable

from golf.app.records import Verdict
from golf.engine.shuffle import new_seed
from golf.engine.solitaire.autoplay import AutoRun, choose_run
from golf.engine.solitaire.difficulty import Difficulty, classify
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.solver import SolveResult, solve
from golf.engine.solitaire.state import Layout, State


def verdict_of(state: State, budget: int | None, stop: Callable[[], bool] | None = None) -> Verdict:
    """Decide ``state`` (a deal's start): winnable with a line and a difficulty, or the fewest cards left.

    ``stop``, here and in ``find_winnable``, is the solver's: ``SearchStopped`` when the answer is no longer wanted.
    """
    # One search: the solver decides "winnable?" first (its positions are the difficulty measure) and looks for
    # the fewest cards left only when the answer is no.
    result = solve(state, budget, stop=stop)
    if result.winnable:
        return Verdict(True, tuple(m.code for m in result.line), 0, classify(result.positions).value, result.positions)
    if result.winnable is None:
        return Verdict(None)
    return Verdict(False, (), result.cards_left if result.fewest_proven else None)


def find_winnable(
    rules: SolitaireRules,
    difficulty: Difficulty | None,
    budget: int | None,
    attempts: int,
    stop: Callable[[], bool] | None = None,
) -> tuple[str, Verdict] | None:
    """Try fresh seeds until one deals a winnable game of the wanted difficulty."""
    for _ in range(attempts):
        seed = new_seed()
        state = State.initial(rules, Layout.from_seed(rules, seed))
        result = solve(state, budget, fewest_cards=False, stop=stop)
        if not result.winnable:
            continue
        level = classify(result.positions)
        if difficulty is None or level is difficulty:
            return seed, Verdict(True, tuple(m.code for m in result.line), 0, level.value, result.positions)
    return None


class InlineSolver:
    """Runs the solver in the calling thread: for tests, tools and the CLI."""

    async def solve(self, state: State, budget: int | None, owner: str | None = None) -> SolveResult:
        return solve(state, budget)

    async def autoplay_run(self, state: State, budget: int | None, owner: str | None = None) -> AutoRun:
        return choose_run(state, budget)

    async def verdict(self, state: State, budget: int | None, owner: str | None = None) -> Verdict:
        return verdict_of(state, budget)

    async def find_winnable(
        self,
        rules: SolitaireRules,
        difficulty: Difficulty | None,
        budget: int | None,
        attempts: int,
        owner: str | None = None,
    ) -> tuple[str, Verdict] | None:
        return find_winnable(rules, difficulty, budget, attempts)
