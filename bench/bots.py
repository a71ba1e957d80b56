"""Computer opponents head to head: the full table of each bot against each, with 95% intervals, and decision
times (p50 / p99) per bot.

    .venv/bin/python bench/bots.py                                    # random, greedy, strong; 200 deals a pairing
    .venv/bin/python bench/bots.py --deals 1000 --bots greedy,strong  # one pairing, tighter intervals
    .venv/bin/python bench/bots.py --bots random,beginner,greedy,advanced,strong --deals 150 --vs greedy
    .venv/bin/python bench/bots.py --preset nine-card --players 3 --deals 50

Every deal is played once per seating (two players: twice, seats swapped; more players: rotated), so each bot
gets the same cards and the difference between them is measured with less luck (duplicate format). A pairing of a
bot with itself gives its points per hole against itself (the difference is 0 by symmetry and is not printed).
With ``--players`` above 2 the bot plays against ``players - 1`` copies of the opponent.

The table's cell (row A, column B) is A's mean points per hole against B and, below the table, A's mean difference
(A - B's mean) with its 95% interval (normal approximation over holes). Decision time is the wall time of one
``choose`` call, measured here (the engine itself never reads a clock), over every decision a bot made in the run.
Run time is about (deals x seatings x pairings) holes: 100 deals of the default three bots take about 2.5 minutes on
one core of a quiet machine, most of it the strong bot's.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))

from golf.engine.cardgolf.bots import Bot, make_bot
from golf.engine.cardgolf.match import deal_hole
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.outcome import hole_result
from golf.engine.cardgolf.play import play_hole
from golf.engine.cardgolf.presets import preset
from golf.engine.cardgolf.view import SeatView

DEFAULT_BOTS = "random,greedy,strong"


@dataclass
class TimedBot:
    """Wraps a bot and records the wall time of each decision."""

    bot: Bot
    times: list[float]
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.bot.name

    def choose(self, view: SeatView) -> Move:
        start = time.perf_counter()
        move = self.bot.choose(view)
        self.times.append(time.perf_counter() - start)
        return move


def ci95(xs: list[float]) -> tuple[float, float]:
    """Mean and half-width of its 95% interval (normal approximation)."""
    mean = statistics.fmean(xs)
    half = 1.96 * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else 0.0
    return mean, half


def pct(xs: list[float], q: float) -> float:
    """The q-quantile (0..1) of xs, nearest rank."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))]


@dataclass
class Pairing:
    """The holes of bot ``a`` against bot ``b``: ``a``'s points and ``a``'s difference to its opponents' mean."""

    a: str
    b: str
    points: list[float] = field(default_factory=list)
    diffs: list[float] = field(default_factory=list)
    wins: int = 0
    seconds: float = 0.0


def run_pairing(
    a: str, b: str, deals: int, preset_name: str, players: int, seed: str, times: dict[str, list[float]]
) -> Pairing:
    """Play ``deals`` deals of ``a`` against ``players - 1`` copies of ``b``, each deal once per seating of ``a``."""
    rules = preset(preset_name)
    result = Pairing(a, b)
    bot_a = TimedBot(make_bot(a, 1), times.setdefault(a, []))
    others = [TimedBot(make_bot(b, 2 + i), times.setdefault(b, [])) for i in range(players - 1)]
    start = time.perf_counter()
    for deal in range(deals):
        for seat in range(players):
            seats: list[Bot] = list(others)
            seats.insert(seat, bot_a)
            final = play_hole(deal_hole(rules, players, f"{seed}:{deal}", 0), seats)
            scores = hole_result(final).scores
            mine = scores[seat]
            theirs = [s for i, s in enumerate(scores) if i != seat]
            result.points.append(mine)
            result.diffs.append(mine - statistics.fmean(theirs))
            result.wins += mine < min(theirs)
    result.seconds = time.perf_counter() - start
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=100, help="deals per pairing, each played once per seating")
    parser.add_argument("--bots", default=DEFAULT_BOTS, help=f"comma-separated bot names ({DEFAULT_BOTS})")
    parser.add_argument("--vs", default=None, help="comma-separated opponents (default: the same list as --bots)")
    parser.add_argument("--preset", default="six-card")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--seed", default="bench-bots")
    args = parser.parse_args(argv)
    bots = args.bots.split(",")
    opponents = args.vs.split(",") if args.vs else bots
    times: dict[str, list[float]] = {}
    table: dict[tuple[str, str], Pairing] = {}
    done: set[frozenset[str]] = set()
    seatings = args.players
    print(
        f"{args.preset}, {args.players} players, {args.deals} deals x {seatings} seatings per pairing "
        f"(seed {args.seed!r})",
        flush=True,
    )
    for a in bots:
        for b in opponents:
            key = frozenset((a, b))
            if args.players == 2 and key in done and a != b:
                # Two players: B against A is A against B read the other way round (same deals, same games).
                other = table[(b, a)]
                table[(a, b)] = Pairing(a, b, [p - d for p, d in zip(other.points, other.diffs, strict=True)])
                mirror = table[(a, b)]
                mirror.diffs = [-d for d in other.diffs]
                mirror.wins = sum(d < 0 for d in mirror.diffs)
                continue
            done.add(key)
            pairing = run_pairing(a, b, args.deals, args.preset, args.players, args.seed, times)
            table[(a, b)] = pairing
            m, h = ci95(pairing.diffs)
            print(f"  {a} vs {b}: {ci95(pairing.points)[0]:.2f} points/hole, {m:+.2f} +/- {h:.2f}", flush=True)
    width = max(10, *(len(n) + 2 for n in [*bots, *opponents]))
    print("\nmean points per hole of the row's bot against the column's (lower is better)")
    print(" " * width + "".join(f"{b:>{width}}" for b in opponents))
    for a in bots:
        cells = "".join(f"{ci95(table[(a, b)].points)[0]:>{width}.2f}" for b in opponents)
        print(f"{a:<{width}}{cells}")
    print("\nrow's bot minus its opponents' mean, points per hole, 95% interval (negative: the row's bot is ahead)")
    print(" " * width + "".join(f"{b:>{width + 4}}" for b in opponents))
    for a in bots:
        cells = ""
        for b in opponents:
            if a == b:
                cells += f"{'-':>{width + 4}}"
                continue
            m, h = ci95(table[(a, b)].diffs)
            cells += f"{f'{m:+.2f} ±{h:.2f}':>{width + 4}}"
        print(f"{a:<{width}}{cells}")
    print("\nholes won outright by the row's bot")
    print(" " * width + "".join(f"{b:>{width}}" for b in opponents))
    for a in bots:
        p = table
        cells = "".join(f"{p[(a, b)].wins / len(p[(a, b)].diffs):>{width}.1%}" for b in opponents)
        print(f"{a:<{width}}{cells}")
    print("\ndecision time per bot (every decision it made in this run)")
    for name, t in times.items():
        if t:
            print(
                f"  {name:<{width}} p50 {pct(t, 0.5) * 1000:7.2f} ms   p99 {pct(t, 0.99) * 1000:7.2f} ms   "
                f"max {max(t) * 1000:7.1f} ms   ({len(t)} decisions)"
            )
    total = sum(p.seconds for p in table.values())
    print(f"\nplayed in {total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
