"""Property (issue 25): from a position the solver proves winnable, AutoPlay leaves one it can still win.

Each example walks one deal from its start: AutoPlay, draws and moves of a winning line, in an order hypothesis
picks, never leaving a winnable position except through AutoPlay (where the property is checked).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from golf.engine.solitaire.autoplay import choose_run
from golf.engine.solitaire.moves import Draw
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State, Status

BUDGET = 100_000
"""Positions per solver call in AutoPlay: small, so examples stay fast (a verdict beyond it is no verdict)."""
CHECK_BUDGET = 1_000_000
"""Positions for the check after AutoPlay: larger, so that a proven win is not missed for lack of budget."""


def proven_winnable(state: State, budget: int = BUDGET) -> bool:
    return solve(state, budget, fewest_cards=False).winnable is True


def winnable_deal(preset: str, start: int) -> State:
    """The first deal from seed ``keep-<start>`` on that the solver proves winnable within ``BUDGET``."""
    rules = PRESETS[preset]
    number = start
    while True:
        state = State.initial(rules, Layout.from_seed(rules, f"keep-{number}"))
        if proven_winnable(state):
            return state
        number += 1


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    preset=st.sampled_from(["standard", "queens-on-kings", "wrap"]),
    start=st.integers(0, 100_000),
    actions=st.lists(st.sampled_from(["autoplay", "draw", "line"]), min_size=1, max_size=14),
)
def test_autoplay_from_a_winnable_position_keeps_it_winnable(preset: str, start: int, actions: list[str]) -> None:
    state = winnable_deal(preset, start)
    for action in actions:
        if state.status is not Status.IN_PROGRESS or not proven_winnable(state):
            return  # the walk keeps the win, but a later position may be beyond the budget
        if action == "autoplay" and state.column_plays():
            run = choose_run(state, BUDGET)
            after = state.replay(list(run.moves))
            assert proven_winnable(after, CHECK_BUDGET), [m.code for m in run.moves]
            state = after
            continue
        draws = [m for m in state.legal_moves() if isinstance(m, Draw)]
        if action == "draw" and draws and proven_winnable(state.apply(draws[0])):
            state = state.apply(draws[0])
        else:  # a move of a winning line keeps the win
            state = state.apply(solve(state, BUDGET, fewest_cards=False).line[0])
