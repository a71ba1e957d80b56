"""AutoPlay's runs, the difficulty measure and the undo policy, on hand-made and PySolFC positions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from golf.engine.cards import Card, parse_cards
from golf.engine.solitaire.autoplay import choose_run, runs
from golf.engine.solitaire.difficulty import EASY_BELOW, HARD_FROM, Difficulty, classify
from golf.engine.solitaire.moves import IllegalMove, Refusal
from golf.engine.solitaire.rules import PRESETS, UndoPolicy
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State

STANDARD = PRESETS["standard"]


def position(columns: list[str], start: str, stock: str = "") -> State:
    layout = Layout(tuple(tuple(parse_cards(c)) for c in columns), Card.parse(start), tuple(parse_cards(stock)))
    return State.initial(replace(STANDARD, columns=len(columns), column_height=5), layout)


def test_runs_longest_first_with_their_prefixes() -> None:
    # From 5: 4 then 3 from column 0, or the 6 of column 1 alone (the 8 covers the 7).
    s = position(["3C 4C", "6H", "7D 8S"], "5S", "KC")
    found = [[m.code for m in run] for run in runs(s)]
    assert found == [["0:4C", "0:3C"], ["0:4C"], ["1:6H"]]
    assert not s.replay(list(runs(s)[0])).column_plays()


def test_no_run_when_nothing_fits() -> None:
    s = position(["9C"], "5S", "KC")
    assert runs(s) == [] and choose_run(s).moves == ()


def test_choose_run_on_pysol_deals_never_loses_a_win() -> None:
    # Deal 15 is one where every maximal run throws the win away: AutoPlay must stop early there.
    for number in range(1, 40):
        s = State.initial(STANDARD, Layout.from_pysol(number))
        while not s.column_plays() and s.stock_left:
            s = s.apply(s.legal_moves()[-1])
        if solve(s, fewest_cards=False).winnable:
            assert solve(s.replay(list(choose_run(s).moves)), fewest_cards=False).winnable, number


@pytest.mark.parametrize(
    ("positions", "level"),
    [(0, Difficulty.EASY), (EASY_BELOW - 1, Difficulty.EASY), (EASY_BELOW, Difficulty.MEDIUM),
     (HARD_FROM - 1, Difficulty.MEDIUM), (HARD_FROM, Difficulty.HARD)],
)  # fmt: skip
def test_classify(positions: int, level: Difficulty) -> None:
    assert classify(positions) is level


def test_undo_policy() -> None:
    assert STANDARD.undos_left(100) is None
    STANDARD.check_undo(100)
    limited = replace(STANDARD, undo_policy=UndoPolicy.LIMITED, undo_limit=2)
    assert limited.undos_left(1) == 1
    limited.check_undo(1)
    with pytest.raises(IllegalMove) as err:
        limited.check_undo(2)
    assert err.value.reason is Refusal.UNDO_LIMIT_REACHED
    with pytest.raises(IllegalMove) as err:
        replace(STANDARD, undo_policy=UndoPolicy.NONE).check_undo(0)
    assert err.value.reason is Refusal.UNDO_NOT_ALLOWED
