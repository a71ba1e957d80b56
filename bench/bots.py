"""Computer opponents head to head: mean points per hole (95% interval), win rates and decision times.

    .venv/bin/python bench/bots.py --holes 1000
    .venv/bin/python bench/bots.py --holes 5000 --pairs strong:greedy

Holes are played in pairs on the same deal with the seats swapped (duplicate format), so both bots get the same
cards and the difference between them is measured with less luck. Decision time is the wall time of one
``choose`` call, measured here (the engine itself never reads a clock).
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

DEFAULT_PAIRS = "random:random,greedy:greedy,greedy:random,strong:random,strong:greedy"


@dataclass
class TimedBot:
    """Wraps a bot and records the wall time of each decision."""

    bot: Bot
    times: list[float] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.bot.name

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


def run_pair(a: str, b: str, holes: int, preset_name: str, seed: str) -> None:
    rules = preset(preset_name)
    bot_a, bot_b = TimedBot(make_bot(a, 1)), TimedBot(make_bot(b, 2))
    pts_a: list[float] = []
    pts_b: list[float] = []
    wins_a = wins_b = ties = 0
    start = time.perf_counter()
    for h in range(holes):
        deal_index, swapped = divmod(h, 2)
        seats = [bot_b, bot_a] if swapped else [bot_a, bot_b]
        final = play_hole(deal_hole(rules, 2, f"{seed}:{a}:{b}", deal_index), seats)
        scores = hole_result(final).scores
        sa, sb = (scores[1], scores[0]) if swapped else (scores[0], scores[1])
        pts_a.append(sa)
        pts_b.append(sb)
        wins_a += sa < sb
        wins_b += sb < sa
        ties += sa == sb
    elapsed = time.perf_counter() - start
    ma, ha = ci95(pts_a)
    mb, hb = ci95(pts_b)
    md, hd = ci95([x - y for x, y in zip(pts_a, pts_b, strict=True)])
    print(f"{a} vs {b}  ({holes} holes of {preset_name}, {elapsed:.0f} s)")
    print(f"  mean points/hole  {a:>7}: {ma:6.2f} +/- {ha:.2f}   {b:>7}: {mb:6.2f} +/- {hb:.2f}")
    print(f"  difference ({a} - {b}): {md:+.2f} +/- {hd:.2f}")
    print(f"  holes won  {a}: {wins_a / holes:.1%}   {b}: {wins_b / holes:.1%}   tied: {ties / holes:.1%}")
    for bot in (bot_a, bot_b) if a != b else (bot_a,):
        t = bot.times
        print(
            f"  decision time {bot.name:>7}: p50 {pct(t, 0.5) * 1000:.2f} ms  p99 {pct(t, 0.99) * 1000:.2f} ms"
            f"  max {max(t) * 1000:.1f} ms  ({len(t)} decisions)"
        )
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--holes", type=int, default=400, help="holes per pairing (even; default 400)")
    parser.add_argument("--pairs", default=DEFAULT_PAIRS, help=f"comma-separated a:b pairings ({DEFAULT_PAIRS})")
    parser.add_argument("--preset", default="six-card")
    parser.add_argument("--seed", default="bench-bots")
    args = parser.parse_args(argv)
    for pair in args.pairs.split(","):
        a, b = pair.split(":")
        run_pair(a, b, args.holes, args.preset, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
