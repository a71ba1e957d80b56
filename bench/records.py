"""Record queries at scale: players' histories and leaderboards over a million finished games, on PostgreSQL.

    .venv/bin/python bench/records.py                                  # 1,000,000 games, 10,000 players, 3 runs
    .venv/bin/python bench/records.py --games 100000 --players 2000 --seconds 3 --runs 1   # a quick look
    .venv/bin/python bench/records.py --keep                           # keep the database (its name is printed)
    .venv/bin/python bench/records.py --reuse golf_bench_records_1234  # measure a kept database again, no load
    .venv/bin/python bench/records.py --kinds rank_deal,history --clients 8

1. Makes its own PostgreSQL database (``golf_bench_records_<pid>`` at ``--pg-url``; dropped at the end unless
   ``--keep``), migrates it, and bulk-loads finished solitaire games, rounds and card Golf matches with COPY (not
   through the API): every row a finished game, round or match writes, consistent with ``golf.app.recording``
   (see ``_records_data.py`` for the shape). Then ``VACUUM (ANALYZE)``; prints the load time and table sizes.
2. Measures each query kind (``KINDS``) through the service's own query layer in-process: ``RecordQueries`` over
   ``Database(url, pool_size=--pool-size)``, on one event loop run as ``golf serve`` runs it (uvloop, the same
   garbage collector settings), ``--clients`` tasks each sending requests back to back (each with fresh random
   arguments: a player, a deal, a page token) for ``--warmup`` s unmeasured and ``--seconds`` s measured (or
   ``--requests``). Latency is ``time.perf_counter`` wall time per call, queueing on the loop included. Per kind:
   requests/s, p50/p95/p99/max ms, this process's CPU and the PostgreSQL backends' CPU per request, and the cores
   the rest of the machine kept busy (a noise gauge). With ``--runs`` > 1 the kinds are measured in turn, run after
   run, and the medians of the runs are printed, then PASS/FAIL for the goals: p99 <= ``--goal-ms`` (20) for a
   leaderboard page, a player's rank and a history page.
3. Runs one request of each kind with its SQL captured and prints ``EXPLAIN (ANALYZE, BUFFERS)`` of each statement
   (top nodes, the index used, rows, buffers, time), both as planned for its values and as the generic plan a
   prepared statement may switch to (asyncpg prepares every statement).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import os
import platform
import random
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import psycopg

from golf.adapters.db.migrate import upgrade
from golf.adapters.db.repository import Database
from golf.app.boards import RATING_BOARD, Period, rounds_board
from golf.app.history import Family, HistoryFilter, Result
from golf.app.identity import Caller
from golf.app.record_queries import ME, BoardKind, BoardQuery, RecordQueries
from golf.commands.serve import GC_YOUNG_THRESHOLD

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _records_data import Shape, index_sizes, load, table_sizes
from _server import backend_pids, cpu_seconds, machine_busy_seconds

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/postgres"
PRESET = "standard"
TOP_DEALS = 100
"""The most played deals: the popular boards (the daily deals and a few others, each with hundreds to thousands)."""
GOALS = {"page": "leaderboard page", "rank": "player's rank", "history": "history page"}
INDEXES = [
    "ix_records_player",
    "ix_records_player_kind",
    "ix_board_entries_rank",
    "board_entries_pkey",
    "ix_deal_stats_hardest",
    "ix_deal_stats_easiest",
    "deal_stats_pkey",
    "players_pkey",
    "deals_pkey",
]


@dataclass
class Samples:
    """Arguments the requests draw from, read from the loaded database before measuring."""

    top_deals: list[str]
    deep_pages: list[tuple[str, str]] = field(default_factory=list)
    """(deal, page token) of pages 40% to 90% down a top deal's board."""
    deal_rankers: list[tuple[str, str]] = field(default_factory=list)
    """(deal, player) with the player in the lower half of a top deal's board."""
    rounds_rankers: list[str] = field(default_factory=list)
    rating_rankers: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)
    history_pages: list[tuple[str, str]] = field(default_factory=list)
    """(player, page token) of pages 2 to 10 of players' histories."""
    won_pages: list[tuple[str, str]] = field(default_factory=list)


Request = Callable[[random.Random], Awaitable[object]]


@dataclass
class Kind:
    name: str
    goal: str
    """A key of GOALS, or "" for a kind measured without a goal."""
    what: str
    make: Callable[[RecordQueries, Samples], Request]


def _stranger(rng: random.Random) -> Caller:
    """A caller with no entry on any board: the page alone, no rank of their own to count."""
    return Caller(str(uuid.UUID(int=rng.getrandbits(128), version=4)))


def _page(kind: BoardKind, **extra: Any) -> Callable[[RecordQueries, Samples], Request]:
    def make(q: RecordQueries, s: Samples) -> Request:
        def request(rng: random.Random) -> Awaitable[object]:
            return q.leaderboard(_stranger(rng), BoardQuery(kind, **extra))

        return request

    return make


def _deal_page(q: RecordQueries, s: Samples) -> Request:
    def request(rng: random.Random) -> Awaitable[object]:
        return q.leaderboard(_stranger(rng), BoardQuery(BoardKind.DEAL, deal_id=rng.choice(s.top_deals)))

    return request


def _deep_page(q: RecordQueries, s: Samples) -> Request:
    def request(rng: random.Random) -> Awaitable[object]:
        deal, token = rng.choice(s.deep_pages)
        return q.leaderboard(_stranger(rng), BoardQuery(BoardKind.DEAL, deal_id=deal, page_token=token))

    return request


def _deal_rank(q: RecordQueries, s: Samples) -> Request:
    def request(rng: random.Random) -> Awaitable[object]:
        deal, player = rng.choice(s.deal_rankers)
        return q.leaderboard(Caller(player), BoardQuery(BoardKind.DEAL, deal_id=deal))

    return request


def _rank(pick: Callable[[Samples], list[str]], query: BoardQuery) -> Callable[[RecordQueries, Samples], Request]:
    def make(q: RecordQueries, s: Samples) -> Request:
        def request(rng: random.Random) -> Awaitable[object]:
            return q.leaderboard(Caller(rng.choice(pick(s))), query)

        return request

    return make


def _history(
    flt: HistoryFilter, paged: Callable[[Samples], list[tuple[str, str]]] | None = None
) -> Callable[[RecordQueries, Samples], Request]:
    def make(q: RecordQueries, s: Samples) -> Request:
        def request(rng: random.Random) -> Awaitable[object]:
            if paged is None:
                return q.history(Caller(rng.choice(s.players)), ME, flt, 0, "")
            player, token = rng.choice(paged(s))
            return q.history(Caller(player), ME, flt, 0, token)

        return request

    return make


ROUNDS_ALL = BoardQuery(BoardKind.ROUNDS, preset=PRESET, holes=9, period=Period.ALL_TIME)
RATING = BoardQuery(BoardKind.RATING)
ANY = HistoryFilter()
WON = HistoryFilter(result=Result.WON)
CARD_GOLF = HistoryFilter(family=Family.CARD_GOLF)


def _stats(hardest: bool) -> Callable[[RecordQueries, Samples], Request]:
    return lambda q, s: lambda rng: q.list_deal_stats(PRESET, hardest, 0, 0, "")


KINDS = [
    Kind("page_deal", "page", "a top deal's board, page 1 (caller not on it)", _deal_page),
    Kind("page_deal_deep", "page", "a top deal's board, a page 40-90% down via its token", _deep_page),
    Kind("page_rounds", "page", "rounds:9:standard:all, page 1", _page(BoardKind.ROUNDS, preset=PRESET, holes=9)),
    Kind("page_rating", "page", "rating:*, page 1", _page(BoardKind.RATING)),
    Kind("rank_deal", "rank", "a top deal's page 1, caller in its lower half", _deal_rank),
    Kind("rank_rounds", "rank", "rounds page 1, caller in lower half", _rank(lambda s: s.rounds_rankers, ROUNDS_ALL)),
    Kind("rank_rating", "rank", "rating page 1, caller in its lower half", _rank(lambda s: s.rating_rankers, RATING)),
    Kind("history", "history", "own history, page 1 (any player)", _history(ANY)),
    Kind("history_next", "history", "own history, page 2-10 via its token", _history(ANY, lambda s: s.history_pages)),
    Kind("history_won", "history", "own history, result=won, page 1", _history(WON)),
    Kind("history_won_next", "history", "own history, result=won, page 2-10", _history(WON, lambda s: s.won_pages)),
    Kind("history_card_golf", "history", "own history, family=card_golf, page 1 (any player)", _history(CARD_GOLF)),
    Kind("stats_hardest", "", "deal stats, hardest first, page 1", _stats(True)),
    Kind("stats_easiest", "", "deal stats, easiest first, page 1", _stats(False)),
]


# -- samples ------------------------------------------------------------------------------------------------------
def _lower_half(conn: psycopg.Connection, boards: list[str]) -> list[tuple[str, str]]:
    """(board, player) of the entries in the lower half of each of ``boards``."""
    rows = conn.execute(
        "SELECT board, player_id FROM (SELECT board, player_id, count(*) OVER (PARTITION BY board) AS n, "
        "row_number() OVER (PARTITION BY board ORDER BY k1, k2, k3, reached_at, player_id) AS r "
        "FROM board_entries WHERE board = ANY(%s)) s WHERE r > n / 2",
        (boards,),
    ).fetchall()
    return [(str(r[0]), str(r[1])) for r in rows]


async def _walk_board(q: RecordQueries, deal: str, depth: int) -> str:
    """The page token of the page that starts ``depth`` entries down ``deal``'s board (paged by 100)."""
    token, seen, viewer = "", 0, Caller(str(uuid.uuid4()))
    while seen < depth:
        size = min(100, depth - seen)
        page = await q.leaderboard(viewer, BoardQuery(BoardKind.DEAL, deal_id=deal, page_size=size, page_token=token))
        seen, token = seen + len(page.entries), page.next_page_token
        if not token:
            return ""
    return token


async def _walk_history(q: RecordQueries, player: str, flt: HistoryFilter, pages: int) -> str:
    token = ""
    for _ in range(pages):
        _, token = await q.history(Caller(player), ME, flt, 0, token)
        if not token:
            return ""
    return token


async def _samples(q: RecordQueries, url: str, rng: random.Random, say: Callable[[str], None]) -> Samples:
    began = time.perf_counter()
    with psycopg.connect(url) as conn:
        top = conn.execute(
            "SELECT deal_id, plays FROM deal_stats WHERE preset = %s ORDER BY plays DESC LIMIT %s", (PRESET, TOP_DEALS)
        ).fetchall()
        s = Samples([str(r[0]) for r in top])
        boards = [f"deal:{d}" for d in s.top_deals]
        s.deal_rankers = [(b.removeprefix("deal:"), p) for b, p in _lower_half(conn, boards)]
        all_time = rounds_board(9, PRESET, Period.ALL_TIME, datetime.now(UTC))
        s.rounds_rankers = [p for _, p in _lower_half(conn, [all_time])]
        s.rating_rankers = [p for _, p in _lower_half(conn, [RATING_BOARD])]
        s.players = [str(r[0]) for r in conn.execute("SELECT id FROM players").fetchall()]
        counts = conn.execute(
            "SELECT player_id, count(*), count(*) FILTER (WHERE result = 'won') FROM records GROUP BY player_id"
        ).fetchall()
        sizes = dict.fromkeys(s.top_deals, 0)
        for board, n in conn.execute(
            "SELECT board, count(*) FROM board_entries WHERE board = ANY(%s) GROUP BY board", (boards,)
        ).fetchall():
            sizes[str(board).removeprefix("deal:")] = int(n)
    deep = rng.sample(s.top_deals, min(32, len(s.top_deals)))
    for deal in deep:
        token = await _walk_board(q, deal, int(sizes[deal] * rng.uniform(0.4, 0.9)))
        if token:
            s.deep_pages.append((deal, token))
    many = [(str(p), int(n)) for p, n, _ in counts if n > 40]
    many_won = [(str(p), int(w)) for p, _, w in counts if w > 40]
    for pool, flt, out in ((many, HistoryFilter(), s.history_pages), (many_won, WON, s.won_pages)):
        for player, n in rng.sample(pool, min(200, len(pool))):
            token = await _walk_history(q, player, flt, rng.randint(1, min(9, (n - 1) // 20)))
            if token:
                out.append((player, token))
    say(
        f"samples in {time.perf_counter() - began:.1f} s: {len(s.top_deals)} top deals (board sizes "
        f"{min(sizes.values(), default=0):,} to {max(sizes.values(), default=0):,}), {len(s.deep_pages)} deep pages, "
        f"{len(s.deal_rankers):,} / {len(s.rounds_rankers):,} / {len(s.rating_rankers):,} deal / rounds / rating "
        f"entries in the lower halves, {len(s.players):,} players, {len(s.history_pages)} + {len(s.won_pages)} "
        "later history pages"
    )
    return s


# -- measuring ----------------------------------------------------------------------------------------------------
def _pct(ordered: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of ``ordered`` (seconds), in ms."""
    if not ordered:
        return float("nan")
    return 1000 * ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


async def _drive(request: Request, clients: int, seconds: float, limit: int, seed: int) -> tuple[list[float], int, str]:
    """``clients`` tasks sending requests back to back for ``seconds`` (or ``limit`` requests in all)."""
    latencies: list[float] = []
    errors = [0]
    first_error = [""]
    stop = time.perf_counter() + seconds

    async def client(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        while time.perf_counter() < stop and not (limit and len(latencies) >= limit):
            call = request(rng)
            began = time.perf_counter()
            try:
                await call
            except Exception as err:  # counted and shown; the run goes on
                errors[0] += 1
                first_error[0] = first_error[0] or f"{type(err).__name__}: {err}"
                continue
            latencies.append(time.perf_counter() - began)

    await asyncio.gather(*(client(i) for i in range(clients)))
    return latencies, errors[0], first_error[0]


def _backends_cpu(dbname: str) -> dict[int, float]:
    """CPU seconds of each client backend serving ``dbname`` (not autovacuum workers: they come and go)."""
    out = {}
    for pid in backend_pids(dbname):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"autovacuum" in f.read():
                    continue
            out[pid] = cpu_seconds(pid)
        except OSError:
            continue  # gone meanwhile
    return out


async def _measure(kind: Kind, request: Request, args: argparse.Namespace, dbname: str, seed: int) -> dict[str, Any]:
    if args.warmup > 0:
        await _drive(request, args.clients, args.warmup, 0, seed + 7)
    pg0, cpu0, busy0 = _backends_cpu(dbname), time.process_time(), machine_busy_seconds()
    wall0 = time.perf_counter()
    latencies, errors, first_error = await _drive(request, args.clients, args.seconds, args.requests, seed)
    wall = time.perf_counter() - wall0
    pg1, cpu, busy = _backends_cpu(dbname), time.process_time() - cpu0, machine_busy_seconds() - busy0
    pg = sum(used - pg0.get(pid, 0.0) for pid, used in pg1.items())
    latencies.sort()
    n = len(latencies)
    row: dict[str, Any] = {
        "kind": kind.name,
        "requests": n,
        "rps": round(n / wall, 1),
        "p50_ms": round(_pct(latencies, 0.50), 2),
        "p95_ms": round(_pct(latencies, 0.95), 2),
        "p99_ms": round(_pct(latencies, 0.99), 2),
        "max_ms": round(1000 * latencies[-1], 2) if latencies else float("nan"),
        "bench_cpu_ms": round(1000 * cpu / n, 3) if n else float("nan"),
        "pg_cpu_ms": round(1000 * pg / n, 3) if n else float("nan"),
        "other_cores": round((busy - cpu - pg) / wall, 2),
        "errors": errors,
    }
    if first_error:
        row["first_error"] = first_error[:200]
    return row


def _median_rows(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for rows in zip(*runs, strict=True):
        merged: dict[str, Any] = {"kind": rows[0]["kind"]}
        for key, value in rows[0].items():
            if isinstance(value, int | float) and key != "errors":
                merged[key] = round(statistics.median(r[key] for r in rows), 3)
        merged["errors"] = sum(r["errors"] for r in rows)
        out.append(merged)
    return out


# -- plans --------------------------------------------------------------------------------------------------------
class _TracedTx:
    """A transaction that notes each statement (the store method that sent it, its SQL and arguments)."""

    def __init__(self, tx: Any, log: list[tuple[str, str, tuple[Any, ...]]]) -> None:
        self._tx, self._log = tx, log

    def __getattr__(self, name: str) -> Any:
        return getattr(self._tx, name)

    async def fetchone(self, sql: str, *args: Any) -> Any:
        self._log.append((sys._getframe(1).f_code.co_name, sql, args))
        return await self._tx.fetchone(sql, *args)

    async def fetchall(self, sql: str, *args: Any) -> Any:
        self._log.append((sys._getframe(1).f_code.co_name, sql, args))
        return await self._tx.fetchall(sql, *args)

    async def fetchone_atomic(self, sql: str, *args: Any) -> Any:
        self._log.append((sys._getframe(1).f_code.co_name, sql, args))
        return await self._tx.fetchone_atomic(sql, *args)

    async def fetchall_atomic(self, sql: str, *args: Any) -> Any:
        self._log.append((sys._getframe(1).f_code.co_name, sql, args))
        return await self._tx.fetchall_atomic(sql, *args)


class _TracedDriver:
    def __init__(self, driver: Any) -> None:
        self.driver = driver
        self.log: list[tuple[str, str, tuple[Any, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.driver, name)

    async def begin(self) -> tuple[Any, Any]:
        tx, token = await self.driver.begin()
        return _TracedTx(tx, self.log), token


def _numbered(sql: str) -> str:
    parts = sql.split("?")
    return parts[0] + "".join(f"${i}{part}" for i, part in enumerate(parts[1:], 1))


def _literal(value: Any) -> str:
    """``value`` as an SQL literal (EXECUTE takes no bind parameters); PostgreSQL casts it to the parameter's type."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    text = value.isoformat() if isinstance(value, datetime) else str(value)
    return "'" + text.replace("'", "''") + "'"


def _summary(plan: dict[str, Any]) -> str:
    """The plan's top nodes down to its first scan, the indexes it reads, rows, buffers and time."""
    chain, indexes, removed, fetches = [], [], 0, 0
    node: dict[str, Any] | None = plan["Plan"]
    while node is not None:
        name = node["Node Type"]
        if node.get("Index Name"):
            backward = " Backward" if node.get("Scan Direction") == "Backward" else ""
            name = f"{name}{backward} using {node['Index Name']}"
        elif node.get("Relation Name"):
            name += f" on {node['Relation Name']}"
        chain.append(name)
        children = node.get("Plans") or []
        node = children[0] if children and "Scan" not in node["Node Type"] else None
    stack = [plan["Plan"]]
    while stack:
        n = stack.pop()
        stack += n.get("Plans") or []
        if n.get("Index Name") and n["Index Name"] not in chain[-1]:
            indexes.append(n["Index Name"])
        removed += int(n.get("Rows Removed by Filter", 0)) + int(n.get("Rows Removed by Index Recheck", 0))
        fetches += int(n.get("Heap Fetches", 0))
    top = plan["Plan"]
    text = " > ".join(chain) + (f" (via {', '.join(indexes)})" if indexes else "")
    extra = [f"rows {top.get('Actual Rows', 0)}"]
    if removed:
        extra.append(f"removed by filter {removed:,}")
    if fetches:
        extra.append(f"heap fetches {fetches:,}")
    extra.append(f"buffers hit {top.get('Shared Hit Blocks', 0)} read {top.get('Shared Read Blocks', 0)}")
    extra.append(f"{plan.get('Execution Time', 0):.3f} ms")
    return f"{text}: {', '.join(extra)}"


async def _explain(conn: asyncpg.Connection[Any], sql: str, args: tuple[Any, ...]) -> tuple[str, str]:
    """EXPLAIN (ANALYZE, BUFFERS) of ``sql``: planned for its values, and its generic plan (prepared statement)."""
    numbered = _numbered(sql)
    custom = json.loads(await conn.fetchval(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {numbered}", *args))[0]
    values = f"({', '.join(_literal(a) for a in args)})" if args else ""
    prepared = False
    try:
        await conn.execute(f"PREPARE bench_plan AS {numbered}")
        prepared = True
        await conn.execute("SET plan_cache_mode = force_generic_plan")
        text = await conn.fetchval(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE bench_plan{values}")
        generic = _summary(json.loads(text)[0])
    except asyncpg.PostgresError as err:
        generic = f"(not explained: {err})"
    finally:
        await conn.execute("RESET plan_cache_mode")
        if prepared:
            await conn.execute("DEALLOCATE bench_plan")
    return _summary(custom), generic


async def _plans(db: Database, queries: RecordQueries, samples: Samples, kinds: list[Kind], url: str) -> list[str]:
    traced = _TracedDriver(db.driver)
    db.driver = traced
    lines = []
    conn = await asyncpg.connect(url.replace("postgresql+psycopg", "postgresql"))
    try:
        for kind in kinds:
            traced.log.clear()
            await kind.make(queries, samples)(random.Random(kind.name))
            for method, sql, args in list(traced.log):
                if not sql.lstrip().upper().startswith("SELECT"):
                    continue
                custom, generic = await _explain(conn, sql, args)
                lines.append(f"{kind.name:18} {method:18} {custom}")
                if generic != custom and _shape(generic) != _shape(custom):
                    lines.append(f"{'':18} {'(generic plan)':18} {generic}")
    finally:
        await conn.close()
        db.driver = traced.driver
    return lines


def _shape(summary: str) -> str:
    return summary.split(": ", 1)[0]


# -- main ---------------------------------------------------------------------------------------------------------
def _machine() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return f"{os.cpu_count()} cores ({model or platform.machine()}), Python {platform.python_version()}"


def _load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _line(row: dict[str, Any]) -> str:
    text = (
        f"{row['kind']:18} {row['requests']:7,} req {row['rps']:7.1f}/s  p50 {row['p50_ms']:6.2f}  "
        f"p95 {row['p95_ms']:6.2f}  p99 {row['p99_ms']:6.2f}  max {row['max_ms']:7.2f} ms  "
        f"bench CPU {row['bench_cpu_ms']:.3f}  pg CPU {row['pg_cpu_ms']:.3f} ms/req  "
        f"other {row['other_cores']:.2f} cores"
    )
    return text + (f"  errors {row['errors']} ({row.get('first_error')})" if row["errors"] else "")


async def _bench(args: argparse.Namespace, url: str, dbname: str, say: Callable[[str], None]) -> dict[str, Any]:
    kinds = [k for k in KINDS if not args.kinds or k.name in args.kinds]
    db = Database(url, pool_size=args.pool_size)
    queries = RecordQueries(db, lambda: datetime.now(UTC))
    rng = random.Random(args.seed)
    try:
        samples = await _samples(queries, url, rng, say)
        requests = {k.name: k.make(queries, samples) for k in kinds}
        runs: list[list[dict[str, Any]]] = []
        for run in range(args.runs):
            rows = []
            for n, kind in enumerate(kinds):
                row = await _measure(kind, requests[kind.name], args, dbname, args.seed + 100 * run + n)
                rows.append(row)
                say(f"run {run + 1} {_line(row)}")
            runs.append(rows)
        medians = _median_rows(runs) if args.runs > 1 else runs[0]
        plans = [] if args.no_explain else await _plans(db, queries, samples, kinds, url)
    finally:
        await db.dispose()
    return {"kinds": kinds, "runs": runs, "medians": medians, "plans": plans}


def _report(kinds: list[Kind], medians: list[dict[str, Any]], args: argparse.Namespace) -> list[dict[str, Any]]:
    what = {k.name: k for k in kinds}
    label = f"median of {args.runs} runs" if args.runs > 1 else "1 run"
    print(f"\n{label}, {args.clients} clients, {args.seconds:g} s each (ms; CPU per request):\n")
    print("| kind | goal | what | req/s | p50 | p95 | p99 | max | bench CPU | pg CPU | other cores |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in medians:
        k = what[r["kind"]]
        print(
            f"| {k.name} | {k.goal or '-'} | {k.what} | {r['rps']:,.0f} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
            f"{r['p99_ms']:.1f} | {r['max_ms']:.1f} | {r['bench_cpu_ms']:.2f} | {r['pg_cpu_ms']:.2f} | "
            f"{r['other_cores']:.2f} |"
        )
    verdicts = []
    print()
    for goal, name in GOALS.items():
        rows = [r for r in medians if what[r["kind"]].goal == goal]
        if not rows:
            continue
        worst = max(rows, key=lambda r: r["p99_ms"])
        ok = worst["p99_ms"] <= args.goal_ms and not any(r["errors"] for r in rows)
        verdicts.append({"goal": name, "pass": ok, "worst_kind": worst["kind"], "p99_ms": worst["p99_ms"]})
        print(
            f"goal: {name} p99 <= {args.goal_ms:g} ms at {args.clients} clients: {'PASS' if ok else 'FAIL'} "
            f"(worst {worst['kind']} p99 {worst['p99_ms']:.1f} ms)"
        )
    return verdicts


def _run_loop(args: argparse.Namespace, work: Coroutine[Any, Any, dict[str, Any]]) -> dict[str, Any]:
    """Run ``work`` as ``golf serve`` runs the service: on uvloop, with its garbage collector settings (the
    start-up heap frozen, the young generation collected every GC_YOUNG_THRESHOLD allocations)."""
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    if args.loop == "uvloop":
        import uvloop

        return uvloop.run(work)
    return asyncio.run(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=1_000_000, help="finished solitaire games (rounds' included)")
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--deals", type=int, default=0, help="deals of preset standard (0: 3%% of --games)")
    parser.add_argument("--days", type=int, default=180, help="finishes spread over this many days (a daily deal each)")
    parser.add_argument("--matches", type=int, default=-1, help="card Golf matches (-1: one per 20 games)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent tasks on the event loop")
    parser.add_argument("--pool-size", type=int, default=32, help="connections of the Database pool")
    parser.add_argument("--loop", choices=("uvloop", "asyncio"), default="uvloop", help="event loop (serve: uvloop)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured time per query kind and run")
    parser.add_argument("--requests", type=int, default=0, help="stop a kind's run after this many (0: no limit)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds before each kind's run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", type=lambda s: set(s.split(",")), default=None, help="comma-separated, of KINDS")
    parser.add_argument("--goal-ms", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pg-url", default=DEFAULT_PG, help="a PostgreSQL database to create the bench's from")
    parser.add_argument("--keep", action="store_true", help="do not drop the database at the end")
    parser.add_argument("--reuse", metavar="DBNAME", help="measure this loaded database (kept by --keep); no load")
    parser.add_argument("--analyze-only", action="store_true", help="ANALYZE after the load, not VACUUM (ANALYZE)")
    parser.add_argument("--no-explain", action="store_true")
    parser.add_argument("--json", metavar="FILE", help="also write the rows, medians and plans to FILE")
    args = parser.parse_args()
    if args.kinds and args.kinds - {k.name for k in KINDS}:
        parser.error(f"unknown kinds {sorted(args.kinds - {k.name for k in KINDS})}; known: {[k.name for k in KINDS]}")

    cpu0 = time.process_time()
    print(f"machine: {_machine()}; load average at start {_load_text()}", flush=True)
    base = args.pg_url.rsplit("/", 1)[0]
    dbname = args.reuse or f"golf_bench_records_{os.getpid()}"
    url = f"{base}/{dbname}"
    created = False
    loaded = None
    try:
        if not args.reuse:
            with psycopg.connect(args.pg_url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{dbname}"')
            created = True
            began = time.perf_counter()
            upgrade(url)
            print(f"database {dbname}: migrated in {time.perf_counter() - began:.1f} s", flush=True)
            shape = Shape(args.games, args.players, args.deals, args.days, matches=args.matches, seed=args.seed)
            loaded = load(url, shape, datetime.now(UTC), vacuum=not args.analyze_only)
            secs = loaded.seconds
            copy_s = sum(v for k, v in secs.items() if k in loaded.rows)
            maint = secs.get("vacuum_analyze", secs.get("analyze", 0.0))
            print(
                f"load: {secs['total']:.1f} s (generate {secs['generate']:.1f} s, COPY {copy_s:.1f} s, "
                f"{'VACUUM (ANALYZE)' if not args.analyze_only else 'ANALYZE'} {maint:.1f} s)",
                flush=True,
            )
        print("\n| table | rows | heap MB | indexes MB |\n| --- | ---: | ---: | ---: |")
        for table, rows, heap, idx in table_sizes(url):
            print(f"| {table} | {rows:,} | {heap / 2**20:,.1f} | {idx / 2**20:,.1f} |")
        sizes = index_sizes(url, INDEXES)
        print("indexes: " + ", ".join(f"{k} {v / 2**20:,.1f} MB" for k, v in sizes.items()) + "\n", flush=True)
        print(
            f"measuring: {args.clients} clients on one {args.loop} event loop, pool of {args.pool_size} connections",
            flush=True,
        )
        result = _run_loop(args, _bench(args, url, dbname, lambda text: print(text, flush=True)))
        verdicts = _report(result["kinds"], result["medians"], args)
        if result["plans"]:
            print("\nplans (EXPLAIN (ANALYZE, BUFFERS) of one request of each kind; statement by store method):")
            for line in result["plans"]:
                print(line)
        print(
            f"\nload average at end {_load_text()}; this process's CPU {time.process_time() - cpu0:.1f} s "
            f"(user + system, all phases)"
        )
        if args.json:
            out = {
                "args": {k: (sorted(v) if isinstance(v, set) else v) for k, v in vars(args).items()},
                "load": None if loaded is None else {"rows": loaded.rows, "seconds": loaded.seconds},
                "runs": result["runs"],
                "medians": result["medians"],
                "goals": verdicts,
                "plans": result["plans"],
            }
            Path(args.json).write_text(json.dumps(out, indent=2, default=str))
    finally:
        if created and not args.keep:
            with psycopg.connect(args.pg_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')
            print(f"dropped {dbname}")
        elif created:
            print(f'kept {dbname} (measure it again with --reuse {dbname}; drop it with: DROP DATABASE "{dbname}")')


if __name__ == "__main__":
    main()
