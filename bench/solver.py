"""Solver speed: PySolFC Golf deals 1 to N under several rule sets, one process, one core.

    .venv/bin/python bench/solver.py                      # deals 1-2000, standard / queens-on-kings / wrap
    .venv/bin/python bench/solver.py --deals 200 --full   # also prove the fewest cards left for lost deals

Prints, per rule set: deals won, total time, median / p99 / max time per deal, positions searched (total, median,
max) and the peak resident memory of the process so far. Times are the process's CPU time (the machine is shared;
wall time is printed too). Figures, not assertions: README quotes them.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def bench(preset: str, deals: int, full: bool) -> None:
    """Solve deals 1..``deals`` under ``preset`` and print one line of figures."""
    rules = PRESETS[preset]
    times: list[float] = []
    positions: list[int] = []
    won = 0
    worst = 0
    started = time.perf_counter()
    cpu_started = time.process_time()
    for number in range(1, deals + 1):
        state = State.initial(rules, Layout.from_pysol(number))
        t0 = time.process_time()
        result = solve(state, fewest_cards=full)
        dt = time.process_time() - t0
        times.append(dt)
        positions.append(result.positions)
        won += bool(result.winnable)
        if dt > times[worst]:
            worst = number - 1
    wall = time.perf_counter() - started
    total = time.process_time() - cpu_started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{preset:16} {'full' if full else 'verdict':7} deals={deals} won={won} ({100 * won / deals:.1f}%) "
        f"total={total:.1f}s (wall {wall:.1f}s) median={statistics.median(times) * 1000:.1f}ms "
        f"p99={_p99(times) * 1000:.0f}ms "
        f"max={max(times) * 1000:.0f}ms (deal {worst + 1}) positions={sum(positions)} "
        f"median={int(statistics.median(positions))} max={max(positions)} peak_rss={peak_mb:.0f}MB",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--presets", default="standard,queens-on-kings,wrap")
    parser.add_argument("--full", action="store_true", help="also find the fewest cards left for lost deals")
    parser.add_argument("--both", action="store_true", help="run the verdict and the full solve")
    args = parser.parse_args()
    for preset in args.presets.split(","):
        for full in (False, True) if args.both else (args.full,):
            bench(preset, args.deals, full)


if __name__ == "__main__":
    main()
