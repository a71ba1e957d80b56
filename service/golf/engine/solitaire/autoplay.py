""" "Play every card that fits": the longest run of column cards from the pile's top, without drawing."""

from __future__ import annotations

from golf.engine.solitaire.moves import PlayColumn
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import State

MAX_RUNS = 2000
"""Distinct run ends examined at most (far more than real deals have)."""


def runs(state: State) -> list[tuple[PlayColumn, ...]]:
    """Every maximal run of column plays from ``state`` (no draws), one per distinct end, longest first."""
    ends: dict[tuple[tuple[int, ...], int], tuple[PlayColumn, ...]] = {}
    seen: set[tuple[tuple[int, ...], int]] = set()

    def walk(s: State, path: tuple[PlayColumn, ...]) -> None:
        key = (s.heights, s.top.rank)
        if key in seen or len(ends) >= MAX_RUNS:
            return
        seen.add(key)
        plays = s.column_plays()
        if not plays:
            if path:
                ends.setdefault(key, path)
            return
        for move in plays:
            walk(s.apply(move), (*path, move))

    walk(state, ())
    return sorted(ends.values(), key=len, reverse=True)


def choose_run(state: State, budget: int | None = None) -> tuple[PlayColumn, ...]:
    """The run AutoPlay makes: the longest that keeps the game winnable when it is, else the longest.

    ``budget`` caps each solver call; a run whose verdict the budget cannot reach is not taken as winnable.
    """
    candidates = runs(state)
    if not candidates:
        return ()
    if len(candidates) > 1 and solve(state, budget, fewest_cards=False).winnable:
        for run in candidates:
            if solve(state.replay(list(run)), budget, fewest_cards=False).winnable:
                return run
    return candidates[0]
