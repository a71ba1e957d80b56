"""``golf simulate``: matches of Card Golf between computer opponents, for any preset, printing the score sheet.

golf simulate --preset six-card --bots strong,greedy,random --holes 9 --seed demo
golf simulate --preset nine-card --bots greedy,greedy --set match_diagonals=true --set block_of_four_value=-25
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from golf.engine.cardgolf.bots import BOT_NAMES, PERSONALITIES, make_bot
from golf.engine.cardgolf.play import play_match
from golf.engine.cardgolf.presets import PRESETS, preset
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.shuffle import new_seed


def _option(text: str) -> tuple[str, Any]:
    name, sep, raw = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected name=value, got {text!r}")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return name.strip(), value


def build_rules(preset_name: str, options: list[tuple[str, Any]], holes: int | None) -> GolfRules:
    """The preset with the options given one by one (``name=value``, values as JSON or plain text)."""
    rules = preset(preset_name)
    changes = dict(options)
    if holes is not None:
        changes["holes"] = holes
    return rules.with_options(**changes) if changes else rules


def run(args: argparse.Namespace) -> int:
    """Play the matches and print each score sheet; exit code 2 on bad arguments."""
    names = [n.strip() for n in args.bots.split(",") if n.strip()]
    try:
        rules = build_rules(args.preset, args.set or [], args.holes)
        rules.validate(len(names))
        bots = [make_bot(name, args.bot_seed + i) for i, name in enumerate(names)]
    except (KeyError, ValueError) as exc:
        print(f"golf simulate: {exc}")
        return 2
    seed = args.seed or new_seed()
    labels = [f"{i}:{name}" for i, name in enumerate(names)]
    grand = [0] * len(names)
    wins = [0.0] * len(names)
    for m in range(args.matches):
        match_seed = seed if args.matches == 1 else f"{seed}:{m}"
        sheet, _ = play_match(rules, bots, match_seed)
        print(f"match {m + 1} (preset {args.preset}, seed {match_seed})")
        print(sheet.render(labels))
        print("winner: " + ", ".join(labels[s] for s in sheet.leaders))
        print()
        for s, total in enumerate(sheet.totals):
            grand[s] += total
        for s in sheet.leaders:
            wins[s] += 1 / len(sheet.leaders)
    if args.matches > 1:
        holes = args.matches * rules.holes
        for s, label in enumerate(labels):
            print(f"{label:>12}: {grand[s] / holes:6.2f} points/hole, {wins[s]:.1f} matches won of {args.matches}")
    return 0


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand to the ``golf`` command's subparsers."""
    parser = subparsers.add_parser("simulate", help="simulate Card Golf matches between bots")
    parser.add_argument("--preset", default="six-card", help=f"one of: {', '.join(sorted(PRESETS))}")
    parser.add_argument(
        "--bots",
        default="greedy,greedy",
        help=f"comma-separated, one per seat: a level ({', '.join(BOT_NAMES)}), with an optional personality "
        f"({', '.join(p.name for p in PERSONALITIES)}) after a +, e.g. strong+racer",
    )
    parser.add_argument("--holes", type=int, default=None, help="holes per match (default: the preset's, 9)")
    parser.add_argument("--matches", type=int, default=1)
    parser.add_argument("--seed", default=None, help="match seed (default: a fresh random seed)")
    parser.add_argument("--bot-seed", type=int, default=0, help="seed of the bots' own randomness")
    parser.add_argument(
        "--set", type=_option, action="append", metavar="NAME=VALUE", help="change one rule option (repeatable)"
    )
    parser.set_defaults(func=run)
