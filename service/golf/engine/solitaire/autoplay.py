""" "Play every card that fits": the longest run of column cards from the pile's top, without drawing, and never one
that throws away a win the solver has proven."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from golf.engine.solitaire.moves import Move, PlayColumn
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
    that keeps the win, which tells the player something. Also true of an empty run that the solver stopped
    (every card that fits would throw the win away)."""


def _leading_plays(line: tuple[Move, ...]) -> tuple[PlayColumn, ...]:
    """The column plays a line starts with, up to its first draw."""
    plays: list[PlayColumn] = []
    for move in line:
        if not isinstance(move, PlayColumn):
            break
        plays.append(move)
    return tuple(plays)


def choose_run(state: State, budget: int | None = None, stop: Callable[[], bool] | None = None) -> AutoRun:
    """The run AutoPlay makes: when the game can still be won, the longest run proven to keep it winnable
    (possibly none: stop); else the longest.

    A winnable position never loses its win here: the run is one the solver proved winnable after, or the column
    plays that start the solver's winning line (none when it starts with a draw). ``budget`` caps each solver
    call: a position whose verdict it cannot reach is played as a lost one (the longest run, no assistance), and a
    run whose verdict it cannot reach is not taken. ``stop`` is given to each solver call (``SearchStopped`` when
    the answer is no longer wanted).
    """
    candidates = runs(state)
    if not candidates:
        return AutoRun(())
    start = solve(state, budget, fewest_cards=False, stop=stop)
    if not start.winnable:
        return AutoRun(candidates[0])
    # The only run, played in full, is what AutoPlay plays on a lost game too: that is no assistance.
    chose = len(candidates) > 1
    proven = _leading_plays(start.line)
    for run in candidates:
        if len(run) <= len(proven):
            break  # the winning line's own plays are as long, and proven
        if solve(state.replay(list(run)), budget, fewest_cards=False, stop=stop).winnable:
            return AutoRun(run, solver_chose=chose)
    return AutoRun(proven, solver_chose=chose or not proven)
