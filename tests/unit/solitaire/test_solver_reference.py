"""The solver against 600 verdicts of an independent exact solver (PySolFC Golf deals 1 to 200, three rule sets).

Every verdict must be reproduced, and every line the solver gives must replay legally on the engine.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from golf.engine.cards import parse_cards
from golf.engine.solitaire.moves import parse_move
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State, Status

DATA = Path(__file__).resolve().parents[2] / "data" / "golf-solver-sample.csv"
ROWS = list(csv.DictReader(DATA.open(encoding="utf-8")))


def _rules_name(row: dict[str, str]) -> str:
    return row["rules"].replace("_", "-")


def test_the_sample_holds_600_verdicts_for_three_rule_sets() -> None:
    assert len(ROWS) == 600
    assert {_rules_name(r) for r in ROWS} == {"standard", "queens-on-kings", "wrap"}


@pytest.mark.parametrize("number", range(1, 201, 7))
def test_the_sample_deals_are_pysol_deals(number: int) -> None:
    row = next(r for r in ROWS if int(r["pysol_deal"]) == number)
    layout = Layout.from_pysol(number)
    assert [list(col) for col in layout.columns] == [parse_cards(c) for c in row["columns"].split("|")]
    assert layout.start.code == row["foundation"]
    assert list(layout.stock) == parse_cards(row["stock"])


@pytest.mark.parametrize("row", ROWS, ids=[f"{_rules_name(r)}-{r['pysol_deal']}" for r in ROWS])
def test_verdict_matches_the_reference(row: dict[str, str]) -> None:
    rules = PRESETS[_rules_name(row)]
    start = State.initial(rules, Layout.from_pysol(int(row["pysol_deal"])))
    result = solve(start, fewest_cards=False)
    assert result.winnable is (row["winnable"] == "yes")
    assert not result.budget_exceeded
    end = start.replay(list(result.line))  # raises IllegalMove if any move is illegal
    assert end.status is not Status.IN_PROGRESS
    assert end.cards_in_columns == result.cards_left
    if result.winnable:
        assert end.status is Status.WON and result.cards_left == 0
        assert result.hint == result.line[0]
    else:
        assert end.status is Status.LOST and result.lower_bound >= 1
    if row["solution"]:
        # The reference's own line replays on our engine too: the deals and rules agree.
        won = start.replay([parse_move(code) for code in row["solution"].split()])
        assert won.status is Status.WON
