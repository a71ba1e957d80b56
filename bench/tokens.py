"""What checking a bearer token costs the server, per request: the first check of a token (signature and claims,
PyJWT) and every later one (the per-process cache), with and without the rate limiter's per-player hit.

    .venv/bin/python bench/tokens.py            # medians of 5 runs of 20,000 calls each

Compare with a move's server CPU (bench/playmove.py, about 0.9 ms): the issue's budget is 5% of it, 45 us.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from golf.adapters.auth.tokens import Tokens
from golf.adapters.edge import Edge
from golf.adapters.ratelimit import Limits
from golf.api.rpc import Rpc

KEY = b"bench-token-key-" + b"0123456789abcdef" * 3


async def _per_call(fn: object, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        await fn()  # type: ignore[operator]
    return (time.process_time() - start) / calls * 1e6


async def one_run(calls: int) -> dict[str, float]:
    """CPU microseconds per call of each kind, from one run of ``calls`` calls."""
    rpc = Rpc("golf.v1.SolitaireService", "PlayMove", object, object, "POST", "/x", "", None)  # type: ignore[arg-type]
    tokens = Tokens(KEY, "golf", "golf", 3600)
    headers = iter([f"Bearer {tokens.issue(f'player-{i}').token}" for i in range(calls)])
    one = f"Bearer {tokens.issue('player-one').token}"
    # Limits shaped like the defaults (two windows per player) that never fill: every call takes the allowed
    # path, as a normal player's do.
    big = f"{calls * 10}"
    edge = Edge(tokens, Limits({"address": f"{big}/second", "player": f"{big}/second;{big}/minute"}))
    return {
        "first check (signature)": await _per_call(lambda: tokens.verify(next(headers)), calls),
        "cached check": await _per_call(lambda: tokens.verify(one), calls),
        "edge: cached + limits": await _per_call(lambda: edge.admit(rpc, one, "127.0.0.1"), calls),
    }


async def main_async(runs: int, calls: int) -> None:
    results = [await one_run(calls) for _ in range(runs)]
    print(f"CPU per call, median of {runs} runs of {calls:,} calls (us):")
    for name in results[0]:
        values = [r[name] for r in results]
        print(f"  {name:28s} {statistics.median(values):8.2f}   (runs: {', '.join(f'{v:.2f}' for v in values)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20_000)
    args = parser.parse_args()
    asyncio.run(main_async(args.runs, args.calls))


if __name__ == "__main__":
    main()
