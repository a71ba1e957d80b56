"""``golf solve``: solve a Golf solitaire deal (a PySolFC deal number or a board file) and print JSON."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from golf.engine.solitaire.board_text import state_from_board
from golf.engine.solitaire.rules import PRESETS, SolitaireRules
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``solve`` subcommand."""
    parser = sub.add_parser(
        "solve",
        help="solve a Golf solitaire deal exactly and print JSON",
        description="Say whether a Golf solitaire deal can be won, with a winning line or the line that leaves "
        "the fewest cards.",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--pysol", type=int, metavar="N", help="PySolFC's Golf deal number N")
    source.add_argument(
        "--board", metavar="FILE", help="a board in PySolFC's text form (Talon:, Foundations:, columns); - for stdin"
    )
    parser.add_argument(
        "--rules",
        default="standard",
        help=f"preset: {', '.join(PRESETS)} (underscores accepted; default standard)",
    )
    parser.add_argument("--wrap", action="store_true", help="ranks wrap: K and A go on each other")
    parser.add_argument("--queens-on-kings", action="store_true", help="a queen may go on a king")
    parser.add_argument(
        "--draw-only-when-stuck", action="store_true", help="the stock may be turned only when nothing fits"
    )
    parser.add_argument("--budget", type=int, default=None, help="at most this many positions (default: none)")
    parser.add_argument(
        "--verdict-only", action="store_true", help="for a lost deal, skip the search for the fewest cards left"
    )
    parser.set_defaults(func=run)


def _rules(args: argparse.Namespace) -> SolitaireRules:
    name = str(args.rules).replace("_", "-")
    if name not in PRESETS:
        raise ValueError(f"unknown rules {args.rules!r}; presets: {', '.join(PRESETS)}")
    rules = PRESETS[name]
    if args.wrap:
        rules = replace(rules, wrap=True)
    if args.queens_on_kings:
        rules = replace(rules, queens_on_kings=True)
    if args.draw_only_when_stuck:
        rules = replace(rules, draw_only_when_stuck=True)
    return rules


def _state(args: argparse.Namespace, rules: SolitaireRules) -> State:
    if args.pysol is not None:
        if not rules.is_pysol_layout():
            raise ValueError("PySolFC deal numbers exist only for one deck in 7 columns of 5")
        return State.initial(rules, Layout.from_pysol(args.pysol))
    text = sys.stdin.read() if args.board == "-" else Path(args.board).read_text(encoding="utf-8")
    return state_from_board(text, rules)


def run(args: argparse.Namespace) -> int:
    """Solve and print the result as one JSON object; exit code 2 on bad input."""
    try:
        rules = _rules(args)
        state = _state(args, rules)
    except (OSError, ValueError) as exc:
        print(f"golf solve: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    result = solve(state, args.budget, fewest_cards=not args.verdict_only)
    elapsed = time.perf_counter() - started
    out: dict[str, Any] = {
        "rules": str(args.rules).replace("_", "-"),
        "winnable": result.winnable,
        "line": [move.code for move in result.line],
        "positions": result.positions,
        "cards_left": result.cards_left,
        "stock_left": result.stock_left,
        "score": result.score,
        "fewest_proven": result.fewest_proven,
        "budget_exceeded": result.budget_exceeded,
        "seconds": round(elapsed, 3),
    }
    if args.pysol is not None:
        out["pysol"] = args.pysol
    print(json.dumps(out))
    return 0
