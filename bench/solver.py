"""Solver speed: PySolFC Golf deals 1 to N under several rule sets, each rule set in a process of its own.

    .venv/bin/python bench/solver.py                        # deals 1-2000, standard / queens-on-kings / wrap
    .venv/bin/python bench/solver.py --deals 200 --full     # prove the fewest cards left for lost deals too
    .venv/bin/python bench/solver.py --engine python        # the pure Python search (the reference), not compiled
    .venv/bin/python bench/solver.py --runs 3               # three runs of each rule set, then their median
    .venv/bin/python bench/solver.py --csv /tmp/ours.csv    # also one row per deal and mode, as CSV

Prints, per rule set and run: deals won, CPU seconds of the process for the solves (user and system), wall
seconds, median / p99 / max CPU time per deal, positions searched (total, median, max), and the process's peak
resident memory. Each rule set runs in a fresh process (``--one``), so its peak memory is its own. ``verdict``
solves stop at the first winning line or the proof that none exists (what a winnable-only deal needs);
``full`` ones also prove the fewest cards left on lost deals (the post-mortem). Figures, not assertions: the
README quotes them.
"""

from __future__ import annotations

import argparse
import csv
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import CompiledSearch, solve
from golf.engine.solitaire.state import Layout, State


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def bench(preset: str, deals: int, full: bool, compiled: bool) -> dict[str, Any]:
    """Solve deals 1..``deals`` under ``preset`` in this process: its figures, and one row per deal."""
    rules = PRESETS[preset]
    rows: list[list[Any]] = []
    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    for number in range(1, deals + 1):
        state = State.initial(rules, Layout.from_pysol(number))
        t0 = time.process_time()
        result = solve(state, fewest_cards=full, compiled=compiled)
        ms = (time.process_time() - t0) * 1000
        row = [preset, "full" if full else "verdict", number, int(bool(result.winnable)), result.cards_left]
        rows.append([*row, result.positions, round(ms, 3)])
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    times = [row[6] for row in rows]
    positions = [row[5] for row in rows]
    return {
        "preset": preset,
        "mode": "full" if full else "verdict",
        "engine": "compiled" if compiled else "python",
        "deals": deals,
        "won": sum(row[3] for row in rows),
        "user_s": after.ru_utime - before.ru_utime,
        "sys_s": after.ru_stime - before.ru_stime,
        "wall_s": wall,
        "median_ms": statistics.median(times),
        "p99_ms": _p99(times),
        "max_ms": max(times),
        "slowest_deal": rows[times.index(max(times))][2],
        "positions": sum(positions),
        "median_positions": int(statistics.median(positions)),
        "max_positions": max(positions),
        "peak_mb": after.ru_maxrss / 1024,
        "rows": rows,
    }


def line(f: dict[str, Any]) -> str:
    cpu = f["user_s"] + f["sys_s"]
    return (
        f"{f['preset']:16} {f['mode']:7} {f['engine']:8} deals={f['deals']} won={f['won']} "
        f"cpu={cpu:.2f}s (user {f['user_s']:.2f}, sys {f['sys_s']:.2f}) wall={f['wall_s']:.2f}s "
        f"median={f['median_ms']:.2f}ms p99={f['p99_ms']:.1f}ms max={f['max_ms']:.0f}ms (deal {f['slowest_deal']}) "
        f"positions={f['positions']} median={f['median_positions']} max={f['max_positions']} "
        f"peak_rss={f['peak_mb']:.0f}MB"
    )


def run_one(preset: str, deals: int, full: bool, engine: str) -> dict[str, Any]:
    """``bench`` in a fresh process of this script."""
    argv = [sys.executable, __file__, "--one", preset, "--deals", str(deals), "--engine", engine]
    out = subprocess.run([*argv, *(["--full"] if full else [])], check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--presets", default="standard,queens-on-kings,wrap")
    parser.add_argument("--full", action="store_true", help="also find the fewest cards left for lost deals")
    parser.add_argument("--both", action="store_true", help="run the verdict and the full solve")
    parser.add_argument("--engine", choices=("compiled", "python"), default="compiled")
    parser.add_argument("--runs", type=int, default=1, help="runs of each rule set; more than one adds a median")
    parser.add_argument("--csv", help="write one row per deal (of the last run) to this file")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child process: one preset, its figures as JSON
    args = parser.parse_args()
    if args.engine == "compiled" and CompiledSearch is None:
        parser.error("the compiled search is not built (make install builds it); use --engine python")
    if args.one:
        print(json.dumps(bench(args.one, args.deals, args.full, args.engine == "compiled")))
        return
    rows: list[list[Any]] = []
    for preset in args.presets.split(","):
        if preset not in PRESETS:
            parser.error(f"unknown preset {preset!r}: one of {', '.join(PRESETS)}")
        for full in (False, True) if args.both else (args.full,):
            runs = []
            for _ in range(args.runs):
                runs.append(run_one(preset, args.deals, full, args.engine))
                print(line(runs[-1]), flush=True)
            if args.runs > 1:
                cpu = statistics.median(r["user_s"] + r["sys_s"] for r in runs)
                wall = statistics.median(r["wall_s"] for r in runs)
                peak = statistics.median(r["peak_mb"] for r in runs)
                print(f"{preset:16} median of {args.runs}: cpu={cpu:.2f}s wall={wall:.2f}s peak_rss={peak:.0f}MB")
            rows += runs[-1]["rows"]
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            out = csv.writer(fh)
            out.writerow(["preset", "mode", "deal", "won", "cards_left", "positions", "cpu_ms"])
            out.writerows(rows)


if __name__ == "__main__":
    main()
