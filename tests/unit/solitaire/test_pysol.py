"""PySolFC's Golf deal numbers, checked against the pysol-cards package and the reference deals."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from pysol_cards.cards import CardRenderer
from pysol_cards.deal_game import Game
from pysol_cards.random_base import RandomBase

from golf.engine.solitaire.pysol import pysol_golf_deal
from golf.engine.solitaire.state import Layout

DATA = Path(__file__).parents[2] / "data" / "golf-solver-sample.csv"


def pysol_text(number: int) -> str:
    return str(Game("golf", number, RandomBase.DEALS_PYSOLFC).calc_layout_string(CardRenderer(True)))


def our_text(number: int) -> str:
    columns, start, stock = pysol_golf_deal(number)
    lines = ["Talon: " + " ".join(c.code for c in stock), "Foundations: " + start.code]
    lines += [" ".join(c.code for c in col) for col in columns]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "number", [1, 2, 3, 100, 617, 11982, 31999, 32000, 32001, 50000, 2**31 - 1, 2**31, 2**32 + 7, 10**12, 10**19]
)
def test_same_deal_as_pysol_cards(number: int) -> None:
    assert our_text(number) == pysol_text(number)


def test_first_thousand_deals_match() -> None:
    for number in range(1, 1001):
        assert our_text(number) == pysol_text(number), number


def test_reference_deals_match() -> None:
    with DATA.open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["rules"] == "standard"]
    assert len(rows) == 200
    for row in rows:
        layout = Layout.from_pysol(int(row["pysol_deal"]))
        assert layout.start.code == row["foundation"]
        assert " ".join(c.code for c in layout.stock) == row["stock"]
        assert "|".join(" ".join(c.code for c in col) for col in layout.columns) == row["columns"]


@pytest.mark.parametrize("number", [0, -1, 10**20 + 1])
def test_out_of_range_numbers_are_refused(number: int) -> None:
    with pytest.raises(ValueError):
        pysol_golf_deal(number)
