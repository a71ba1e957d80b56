""" "Play every card that fits": the longest run of column cards from the pile's top, without drawing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from golf.engine.solitaire.moves import PlayColumn
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import State

MAX_RUNS = 5000
"""Distinct run ends examined at most (far more than real deals have)."""


def runs(state: State) -> list[tuple[PlayColumn, ...]]:
    """Every non-empty run of column plays from ``state`` (no draws), one per distinct end, longest first.

    Runs that stop before nothing fits are included: keeping a game winnable can mean stopping early.
    """
    ends: dict[tuple[tuple[int, ...], int], tuple[PlayColumn, ...]] = {}

    def walk(s: State, path: tuple[PlayColumn, ...]) -> None:
        for move in s.column_plays():
            if len(ends) >= MAX_RUNS:
                return
            after = s.apply(move)
            key = (after.heights, after.top.rank)
            if key not in ends:
                ends[key] = (*path, move)
                walk(after, (*path, move))

    walk(state, ())
    return sorted(ends.values(), key=len, reverse=True)


@dataclass(frozen=True, slots=True)
class AutoRun:
    """The run AutoPlay makes, and whether the solver chose it (assistance, like a hint)."""

    moves: tuple[PlayColumn, ...]
    solver_chose: bool = False
    """The game could still be won and there was more than one run to choose from: the solver picked the one
    that keeps the win, which tells the player something."""


def choose_run(state: State, budget: int | None = None, stop: Callable[[], bool] | None = None) -> AutoRun:
    """The run AutoPlay makes: the longest that keeps the game winnable when it is, else the longest.

    When every run would throw a win away, the longest is played all the same: the player asked for it.
    ``budget`` caps each solver call; a run whose verdict the budget cannot reach is not taken as winnable.
    ``stop`` is given to each solver call (``SearchStopped`` when the answer is no longer wanted).
    """
    candidates = runs(state)
    if not candidates:
        return AutoRun(())
    if len(candidates) > 1 and solve(state, budget, fewest_cards=False, stop=stop).winnable:
        for run in candidates:
            if solve(state.replay(list(run)), budget, fewest_cards=False, stop=stop).winnable:
                return AutoRun(run, solver_chose=True)
        return AutoRun(candidates[0], solver_chose=True)
    return AutoRun(candidates[0])
