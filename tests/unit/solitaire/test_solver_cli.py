"""Boards in PySolFC's text form and the ``golf solve`` command, called through its own argparse parser."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from golf.commands import solve as solve_command
from golf.engine.cards import Card
from golf.engine.solitaire.board_text import format_board, parse_board, state_from_board
from golf.engine.solitaire.moves import parse_move
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.state import Layout, State, Status

BOARD_1 = """Talon: 8H 2C JH 7D 6D 8S 8D QS 6C 3D 8C TC 6S 9C 2H 6H
Foundations: TH
JD 5H KH AS 4H
2D KD 3H AH AC
9H KC 2S 3C 4D
JC 9S KS 4C 7S
5D 5S 9D 5C 3S
7H AD QD TS TD
7C QC JS QH 4S
"""


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, object] | None]:
    parser = argparse.ArgumentParser(prog="golf")
    solve_command.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


def test_board_of_pysol_deal_1() -> None:
    assert parse_board(BOARD_1) == Layout.from_pysol(1)


def test_board_round_trip_mid_game() -> None:
    start = State.initial(PRESETS["standard"], Layout.from_pysol(2))
    middle = start.replay([parse_move(c) for c in ("4:AH", "T:3S", "1:4H", "1:5D", "0:6S", "T:TS")])
    text = format_board(middle)
    again = state_from_board(text, PRESETS["standard"])
    assert again.top == middle.top and again.stock_left == middle.stock_left
    assert [again.front(c) for c in range(7)] == middle.fronts()
    assert format_board(again) == text


def test_board_with_an_empty_column_and_ten_written_10() -> None:
    layout = parse_board("Talon: 10C\nFoundations: 9H\n-\nAS 2S\n")
    assert layout.columns == ((), (Card(1, 3), Card(2, 3))) and layout.stock == (Card(10, 0),)


@pytest.mark.parametrize(
    "text",
    [
        "Foundations: TH\nAS\n",
        "Talon: 2C\nAS\n",
        "Talon: 2C\nFoundations:\nAS\n",
        "Talon: 2C\nFoundations: TH\n",
        "Talon: 2C\nFoundations: TH\nAS XX\n",
    ],
)
def test_bad_boards_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_board(text)


def test_solve_pysol_deal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(["solve", "--pysol", "2", "--rules", "standard"], capsys)
    assert code == 0 and out is not None
    assert out["winnable"] is True and out["positions"] > 0 and out["cards_left"] == 0
    line = out["line"]
    assert isinstance(line, list)
    end = State.initial(PRESETS["standard"], Layout.from_pysol(2)).replay([parse_move(c) for c in line])
    assert end.status is Status.WON


def test_solve_board_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    board = tmp_path / "golf1.board"
    board.write_text(BOARD_1, encoding="utf-8")
    code, out = run_cli(["solve", "--board", str(board), "--rules", "queens_on_kings"], capsys)
    assert code == 0 and out is not None
    assert out["winnable"] is False and out["fewest_proven"] is True
    assert isinstance(out["cards_left"], int) and out["cards_left"] > 0


def test_solve_with_a_budget_reports_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run_cli(["solve", "--pysol", "70", "--budget", "20"], capsys)
    assert code == 0 and out is not None
    assert out["winnable"] is None and out["budget_exceeded"] is True


def test_solve_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(["solve", "--board", str(tmp_path / "missing")], capsys)[0] == 2
    assert run_cli(["solve", "--pysol", "1", "--rules", "nonsense"], capsys)[0] == 2
    assert run_cli(["solve", "--pysol", "1", "--rules", "two-decks"], capsys)[0] == 2
