"""Summarise py-spy ``raw`` (collapsed) samples written by ``playmove.py --py-spy DIR``.

    .venv/bin/python bench/_pyspy_report.py DIR/rest-sqlite-1.txt [--top 40] [--match json_format --match sqlalchemy]

Prints the share of samples that have a function anywhere on the stack (inclusive) and at the top (self),
and for each ``--match`` substring the inclusive share of stacks with a matching frame. py-spy leaves idle
threads out, so shares are of CPU-busy samples.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

_LINE = re.compile(r" \(([^()]*?):\d+\)")


def _frame(frame: str) -> str:
    """``func (path/file.py:123)`` without the line number, so one function is one entry."""
    return _LINE.sub(lambda m: f" ({m.group(1)})", frame)


def load(path: Path) -> list[tuple[list[str], int]]:
    stacks = []
    for line in path.read_text().splitlines():
        text, _, count = line.rpartition(" ")
        if text:
            stacks.append(([_frame(f) for f in text.split(";")], int(count)))
    return stacks


# Where a sample's time goes: walking from the innermost frame out, the first frame that matches a category
# (tried in this order) names it; so json_format under the REST endpoint counts as JSON, a starlette frame
# under the endpoint as the framework. asyncio frames count only when nothing else on the stack matches (time
# in Cython code, such as grpc's aio server, shows up under the asyncio frame that ran it).
CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("response: json_format.MessageToJson", ("MessageToJson (",)),
    ("request: json_format.Parse/ParseDict", ("Parse (protobuf", "ParseDict (protobuf")),
    ("game_to_proto / move_to_proto", ("game_to_proto", "move_to_proto", "deal_to_proto")),
    ("DB: SQLAlchemy", ("sqlalchemy/",)),
    # aiosqlite and db/drivers.py: the drivers of older revisions (--rev); each driver now has a module of its own.
    (
        "DB: driver (asyncpg/sqlite3/our drivers)",
        (
            "aiosqlite/",
            "asyncpg/",
            "db/drivers.py",
            "db/postgres_driver.py",
            "db/postgres_pool.py",
            "db/sqlite_driver.py",
            "sqlite3/",
        ),
    ),
    ("DB: repository + unit of work", ("db/repository.py",)),
    ("engine (replay, check, apply, view)", ("golf/engine/", "replay_line")),
    ("use case + handler + transport glue", ("golf/app/", "golf/api/", "golf/adapters/")),
    ("HTTP server + ASGI (uvicorn/starlette/fastapi)", ("uvicorn/", "starlette/", "fastapi/", "h11/", "httptools")),
    ("gRPC (Python frames)", ("grpc/", "grpc_health/", "grpc_reflection/")),
]
_FALLBACK = ("asyncio event loop (incl. Cython/C code it runs)", ("asyncio/", "selectors.py"))


def categorize(frames: list[str]) -> str:
    for frame in reversed(frames):
        for name, needles in CATEGORIES:
            if any(needle in frame for needle in needles):
                return name
    name, needles = _FALLBACK
    if any(needle in frame for frame in frames for needle in needles):
        return name
    return "other"


def breakdown(stacks: list[tuple[list[str], int]], rate: float = 0.0, moves: int = 0) -> str:
    """Shares of samples by category; with ``rate`` (samples/s) and ``moves``, also ms per move."""
    total = sum(n for _, n in stacks)
    per: Counter[str] = Counter()
    for frames, n in stacks:
        per[categorize(frames)] += n
    per_move = bool(rate and moves)
    lines = [f"  {total} samples" + (f" = {1000 * total / rate / moves:.3f} ms/move sampled" if per_move else "")]
    for name, n in sorted(per.items(), key=lambda kv: -kv[1]):
        ms = f"  {1000 * n / rate / moves:6.3f} ms/move" if per_move else ""
        lines.append(f"  {100 * n / total:5.1f}%{ms}  {name}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", type=Path)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--match", action="append", default=[], help="substring of a frame; inclusive share")
    parser.add_argument("--under", help="only stacks with a frame containing this substring")
    parser.add_argument("--rate", type=float, default=0.0, help="samples per second, for ms per move")
    parser.add_argument("--moves", type=int, default=0, help="moves in the sampled window, for ms per move")
    args = parser.parse_args()

    stacks = load(args.file)
    if args.under:
        stacks = [(s, n) for s, n in stacks if any(args.under in f for f in s)]
    total = sum(n for _, n in stacks)
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    for frames, n in stacks:
        for f in set(frames):
            inclusive[f] += n
        leaf[frames[-1]] += n
    print(f"{args.file.name}: {total} samples" + (f" under {args.under!r}" if args.under else ""))
    print(breakdown(stacks, args.rate, args.moves))
    for pattern in args.match:
        hits = sum(n for frames, n in stacks if any(pattern in f for f in frames))
        print(f"  {100 * hits / total:5.1f}%  incl  {pattern}")
    print("inclusive:")
    for f, n in inclusive.most_common(args.top):
        print(f"  {100 * n / total:5.1f}%  {f}")
    print("self:")
    for f, n in leaf.most_common(args.top // 2):
        print(f"  {100 * n / total:5.1f}%  {f}")


if __name__ == "__main__":
    main()
