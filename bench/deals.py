"""Winnable deals on demand: how fast the background pool fills, the latency of CreateGame/CreateDeal at a fixed
request rate, how many were served from the pool, and whether the pool survives a restart.

For each database the script migrates a fresh one, starts ``golf serve`` with ``GOLF_POOL_SIZE=--pool-size``
for ``--presets``, and watches the ``deal_pool`` table until every (preset, difficulty) is full, printing the
fill progress, the refill rate and the solver CPU it cost. It then sends CreateGame and CreateDeal requests
(REST) open-loop at ``--rate`` requests/s for ``--seconds`` (round-robin over the presets and over ``--mix``),
and reads every deal's ``createTime``: a deal created before its request was sent came from the pool, one
created after was searched on demand. Last it stops the server, starts it again on the same database, and
shows that the pool is still there and that the first requests are served from it.

Before each phase's requests ``--guests`` guests sign in (``POST /v1/players:guest``, outside the measured
requests) and the requests take their tokens in turn; a server without sign-in answers 404 and the requests go
without a token. The server started here runs without rate limits (``GOLF_RATE_LIMIT_*`` empty; give them with
``--server-env`` to measure them): one address sending CreateGame/CreateDeal at ``--rate`` would be refused.

    .venv/bin/python bench/deals.py                                  # SQLite and PostgreSQL, pool 40, 20 req/s, 20 s
    .venv/bin/python bench/deals.py --db sqlite --pool-size 10 --seconds 5 --json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _pyspy_report import breakdown, load
from _server import backend_pids, cpu_seconds, database, golf_server, machine_busy_seconds, total_cpu

DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
DEFAULT_PRESETS = "standard,queens-on-kings,wrap"
DEFAULT_MIX = "game,deal,game:hard,deal:hard"
DIFFICULTIES = ("easy", "medium", "hard")
TARGET_P99_MS = 20.0
PY_SPY_RATE = 200


# -- the database, read directly --------------------------------------------------------------------------------
class PoolProbe(Protocol):
    def counts(self) -> dict[tuple[str, str], int]: ...
    def deal_ids(self) -> set[str]: ...
    def close(self) -> None: ...


class SqliteProbe:
    def __init__(self, url: str) -> None:
        self.conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None, timeout=10)

    def counts(self) -> dict[tuple[str, str], int]:
        rows = self.conn.execute("SELECT preset, difficulty, COUNT(*) FROM deal_pool GROUP BY preset, difficulty")
        return {(p, d): int(n) for p, d, n in rows}

    def deal_ids(self) -> set[str]:
        return {str(r[0]) for r in self.conn.execute("SELECT deal_id FROM deal_pool")}

    def close(self) -> None:
        self.conn.close()


class PostgresProbe:
    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)
        row = self.conn.execute("SELECT pg_backend_pid()").fetchone()
        self.backend_pid = int(row[0]) if row else 0

    def counts(self) -> dict[tuple[str, str], int]:
        rows = self.conn.execute("SELECT preset, difficulty, COUNT(*) FROM deal_pool GROUP BY preset, difficulty")
        return {(str(p), str(d)): int(n) for p, d, n in rows}

    def deal_ids(self) -> set[str]:
        return {str(r[0]) for r in self.conn.execute("SELECT deal_id FROM deal_pool")}

    def close(self) -> None:
        self.conn.close()


@contextlib.contextmanager
def probe(url: str) -> Iterator[PoolProbe]:
    p: PoolProbe = SqliteProbe(url) if url.startswith("sqlite") else PostgresProbe(url)
    try:
        yield p
    finally:
        p.close()


# -- CPU of the server and its solver processes ---------------------------------------------------------------
@dataclass
class Cpu:
    """CPU seconds so far: the server process, its request solver workers, its (niced) refill solver worker,
    the PostgreSQL backends of the bench database, and the whole machine."""

    server: float = 0.0
    request_solver: float = 0.0
    refill_solver: float = 0.0
    db: float = 0.0
    machine: float = 0.0

    def __sub__(self, other: Cpu) -> Cpu:
        return Cpu(*(a - b for a, b in zip(astuple_cpu(self), astuple_cpu(other), strict=True)))


def astuple_cpu(c: Cpu) -> tuple[float, float, float, float, float]:
    return c.server, c.request_solver, c.refill_solver, c.db, c.machine


def _children(pid: int) -> list[tuple[int, int]]:
    """(pid, nice) of the solver worker processes of ``pid`` (the multiprocessing resource tracker left out)."""
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rindex(b")") + 2 :].split()
            if int(fields[1]) != pid:
                continue
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                if b"resource_tracker" in f.read():
                    continue
            out.append((int(entry.name), int(fields[16])))
        except (OSError, ValueError, IndexError):
            continue
    return out


def read_cpu(server_pid: int, pg_name: str, exclude: int = 0) -> Cpu:
    cpu = Cpu(machine=machine_busy_seconds())
    with contextlib.suppress(OSError):
        cpu.server = cpu_seconds(server_pid)
    for child, nice in _children(server_pid):
        with contextlib.suppress(OSError):
            if nice > 0:
                cpu.refill_solver += cpu_seconds(child)
            else:
                cpu.request_solver += cpu_seconds(child)
    if pg_name:
        cpu.db = total_cpu([p for p in backend_pids(pg_name) if p != exclude])
    return cpu


# -- filling the pool -------------------------------------------------------------------------------------------
@dataclass
class Bucket:
    preset: str
    difficulty: str
    deals: int
    full_after_s: float | None
    """Seconds from the server's start until this (preset, difficulty) held --pool-size deals."""
    deals_per_s: float
    refill_cpu_s: float
    """Refill solver CPU spent between the previous deal added and each deal of this bucket."""
    cpu_ms_per_deal: float | None


@dataclass
class Fill:
    db: str
    phase: str
    target: int
    deals: int
    seconds: float
    deals_per_s: float
    refill_cpu_s: float
    cpu_ms_per_deal: float | None
    refill_cores: float
    other_cores: float
    full: bool
    buckets: list[Bucket] = field(default_factory=list)


def wait_full(
    args: argparse.Namespace, db: str, phase: str, pool: PoolProbe, server_pid: int, pg_name: str, began: float
) -> Fill:
    """Poll ``deal_pool`` until every (preset, difficulty) holds ``--pool-size`` deals (or ``--fill-timeout``)."""
    keys = [(p, d) for p in args.presets for d in DIFFICULTIES]
    target = args.pool_size * len(keys)
    exclude = getattr(pool, "backend_pid", 0)
    first = pool.counts()
    last = dict(first)
    cpu0 = read_cpu(server_pid, pg_name, exclude)
    last_cpu = cpu0.refill_solver
    bucket_cpu: dict[tuple[str, str], float] = dict.fromkeys(keys, 0.0)
    full_at: dict[tuple[str, str], float] = {k: 0.0 for k in keys if last.get(k, 0) >= args.pool_size}
    start = time.monotonic()
    next_print = start
    while True:
        now = time.monotonic()
        counts = pool.counts()
        cpu = read_cpu(server_pid, pg_name, exclude)
        grown = {k: counts.get(k, 0) - last.get(k, 0) for k in keys if counts.get(k, 0) > last.get(k, 0)}
        if grown:
            spent = cpu.refill_solver - last_cpu
            n = sum(grown.values())
            for k, g in grown.items():
                bucket_cpu[k] = bucket_cpu.get(k, 0.0) + spent * g / n
            last_cpu = cpu.refill_solver
        last = counts
        for k in keys:
            if k not in full_at and counts.get(k, 0) >= args.pool_size:
                full_at[k] = now - began
        total = sum(min(counts.get(k, 0), args.pool_size) for k in keys)
        done = len(full_at) == len(keys)
        timed_out = now - start > args.fill_timeout
        if not args.json and (now >= next_print or done or timed_out):
            rate = (total - sum(min(first.get(k, 0), args.pool_size) for k in keys)) / max(now - start, 1e-9)
            per = " ".join(f"{p[:1]}{d[:1]}={counts.get((p, d), 0)}" for p, d in keys)
            print(
                f"  [{db} {phase}] {now - start:6.1f} s  pool {total}/{target}  {rate:.2f} deals/s  "
                f"refill CPU {cpu.refill_solver - cpu0.refill_solver:.1f} s  ({per})",
                flush=True,
            )
            next_print = now + args.progress_every
        if done or timed_out:
            break
        time.sleep(args.poll)
    end = time.monotonic()
    cpu_used = read_cpu(server_pid, pg_name, exclude) - cpu0
    wall = end - start
    added = sum(counts.get(k, 0) - first.get(k, 0) for k in keys)
    buckets = []
    for k in keys:
        gained = counts.get(k, 0) - first.get(k, 0)
        span = (full_at[k] - (start - began)) if k in full_at else wall
        buckets.append(
            Bucket(
                preset=k[0],
                difficulty=k[1],
                deals=counts.get(k, 0),
                full_after_s=round(full_at[k], 2) if k in full_at else None,
                deals_per_s=gained / span if span > 0 else 0.0,
                refill_cpu_s=round(bucket_cpu.get(k, 0.0), 3),
                cpu_ms_per_deal=1000 * bucket_cpu.get(k, 0.0) / gained if gained else None,
            )
        )
    ours = cpu_used.server + cpu_used.request_solver + cpu_used.refill_solver + cpu_used.db
    return Fill(
        db=db,
        phase=phase,
        target=target,
        deals=sum(min(counts.get(k, 0), args.pool_size) for k in keys),
        seconds=round(wall, 2),
        deals_per_s=added / wall if wall else 0.0,
        refill_cpu_s=round(cpu_used.refill_solver, 3),
        cpu_ms_per_deal=1000 * cpu_used.refill_solver / added if added else None,
        refill_cores=cpu_used.refill_solver / wall if wall else 0.0,
        other_cores=max(0.0, (cpu_used.machine - ours) / wall) if wall else 0.0,
        full=len(full_at) == len(keys),
        buckets=buckets,
    )


# -- the load ---------------------------------------------------------------------------------------------------
class Http:
    """One keep-alive HTTP/1.1 connection with Content-Length framing."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def connect(self) -> None:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)

    async def request(self, method: str, path: str, body: bytes = b"", token: str | None = None) -> tuple[int, bytes]:
        await self.connect()
        assert self.reader is not None and self.writer is not None
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
        if token:
            head += f"Authorization: Bearer {token}\r\n"
        if body:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.writer.write(head.encode() + b"\r\n" + body)
        try:
            raw = await self.reader.readuntil(b"\r\n\r\n")
            lower = raw.lower()
            at = lower.find(b"\r\ncontent-length:")
            length = int(lower[at + 17 : lower.index(b"\r\n", at + 2)]) if at >= 0 else 0
            data = await self.reader.readexactly(length)
        except (asyncio.IncompleteReadError, ConnectionError):
            await self.close()
            raise
        if b"\r\nconnection: close" in lower:
            await self.close()
        return int(raw[9:12]), data

    async def close(self) -> None:
        writer, self.writer, self.reader = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


class Connections:
    """Idle keep-alive connections; a request takes one or opens a new one, so sending never waits for a reply."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.idle: list[Http] = []
        self.opened = 0

    async def warm(self, n: int) -> None:
        for _ in range(n):
            conn = Http(self.host, self.port)
            await conn.connect()
            self.opened += 1
            self.idle.append(conn)

    async def request(self, method: str, path: str, body: bytes = b"", token: str | None = None) -> tuple[int, bytes]:
        if self.idle:
            conn = self.idle.pop()
        else:
            conn = Http(self.host, self.port)
            self.opened += 1
        status, data = await conn.request(method, path, body, token)
        if conn.writer is not None:
            self.idle.append(conn)
        return status, data

    async def close(self) -> None:
        for conn in self.idle:
            await conn.close()


@dataclass
class Sent:
    kind: str  # "game" or "deal"
    preset: str
    difficulty: str | None
    scheduled: float = 0.0  # time.monotonic
    wall: float = 0.0  # time.time of the schedule, for createTime
    lag: float = 0.0  # sent this late after its schedule
    latency: float | None = None  # from the schedule to the reply
    finished: float = 0.0
    status: int = 0
    error: str = ""
    deal_id: str = ""
    deal: dict[str, Any] | None = None

    def source(self, before: float | None = None) -> str:
        """'pool' when the deal existed before the request (or before ``before``), else 'search'."""
        if self.deal is None:
            return "?"
        created = parse_time(self.deal.get("createTime", ""))
        return "pool" if created < (self.wall if before is None else before) else "search"


def parse_time(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp as proto3 JSON writes it (0 to 9 fraction digits)."""
    if not text:
        return float("inf")
    main, _, frac = text.rstrip("Z").partition(".")
    whole = datetime.fromisoformat(main).replace(tzinfo=UTC).timestamp()
    return whole + (int(frac) / 10 ** len(frac) if frac else 0.0)


def schedule(args: argparse.Namespace, n: int) -> list[Sent]:
    out = []
    for i in range(n):
        kind, _, level = args.mix[(i // len(args.presets)) % len(args.mix)].partition(":")
        out.append(Sent(kind, args.presets[i % len(args.presets)], level or None))
    return out


async def sign_in(port: int, guests: int) -> list[str | None]:
    """Access tokens of ``guests`` new guests; ``[None]`` when the server has no sign-in (HTTP 404)."""
    conn = Http("127.0.0.1", port)
    tokens: list[str | None] = []
    try:
        for _ in range(guests):
            status, data = await conn.request("POST", "/v1/players:guest", b"{}")
            if status == 404 and not tokens:
                return [None]
            if status != 200:
                raise RuntimeError(f"signing in a guest: HTTP {status} {data[:300].decode(errors='replace')}")
            tokens.append(orjson.loads(data)["credentials"]["accessToken"])
    finally:
        await conn.close()
    return tokens


async def _send(conns: Connections, s: Sent, token: str | None) -> None:
    body: dict[str, Any] = {"preset": s.preset}
    if s.kind == "deal":
        body["winnableOnly"] = True
    if s.difficulty:
        body["difficulty"] = f"DIFFICULTY_{s.difficulty.upper()}"
    path = "/v1/games" if s.kind == "game" else "/v1/deals"
    s.lag = time.monotonic() - s.scheduled
    try:
        status, data = await conns.request("POST", path, orjson.dumps(body), token)
    except (OSError, asyncio.IncompleteReadError) as err:
        s.error = f"{type(err).__name__}"
        return
    s.finished = time.monotonic()
    s.status = status
    if status != 200:
        try:
            s.error = f"HTTP {status} {orjson.loads(data).get('reason', '')}".strip()
        except orjson.JSONDecodeError:
            s.error = f"HTTP {status}"
        return
    s.latency = s.finished - s.scheduled
    reply = orjson.loads(data)
    if s.kind == "game":
        s.deal_id = reply["game"]["dealId"]
    else:
        s.deal = reply["deal"]
        s.deal_id = s.deal["id"]


async def run_load(
    args: argparse.Namespace, port: int, plan: list[Sent], rate: float, wait_s: float, tokens: list[str | None]
) -> None:
    """Send ``plan`` at ``rate`` requests/s whatever the replies (open loop), with ``tokens`` in turn, then look up
    the games' deals."""
    conns = Connections("127.0.0.1", port)
    await conns.warm(args.connections)
    tasks = []
    start = time.monotonic() + 0.05
    wall0 = time.time() + (start - time.monotonic())
    for i, s in enumerate(plan):
        s.scheduled = start + i / rate
        s.wall = wall0 + i / rate
        delay = s.scheduled - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(_send(conns, s, tokens[i % len(tokens)])))
    _, pending = await asyncio.wait(tasks, timeout=wait_s) if tasks else (set(), set())
    for task in pending:
        task.cancel()
    for s in plan:
        if s.latency is None and not s.error:
            s.error = f"no reply within {wait_s:.0f} s"
    getter = Http("127.0.0.1", port)
    for s in plan:
        if s.kind == "game" and s.deal_id:
            status, data = await getter.request("GET", f"/v1/deals/{s.deal_id}", token=tokens[0])
            if status == 200:
                s.deal = orjson.loads(data)["deal"]
    await getter.close()
    await conns.close()


def _loop_factory() -> Any:
    with contextlib.suppress(ImportError):
        import uvloop

        return uvloop.new_event_loop
    return None


def guests(args: argparse.Namespace, port: int, label: str) -> list[str | None]:
    """Sign ``--guests`` guests in before a phase (its CPU figures start after this); ``[None]``: no sign-in."""
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        tokens = runner.run(sign_in(port, args.guests))
    args.auth.add("none" if tokens == [None] else "guest")
    if not args.json:
        said = "no (the server has no sign-in)" if tokens == [None] else f"yes, {len(tokens)} guests taking turns"
        print(f"  [{label}] signed in: {said}", flush=True)
    return tokens


def drive(
    args: argparse.Namespace, port: int, plan: list[Sent], rate: float, wait_s: float, tokens: list[str | None]
) -> None:
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        runner.run(run_load(args, port, plan, rate, wait_s, tokens))


# -- results ---------------------------------------------------------------------------------------------------
def _percentile(sorted_values: list[float], q: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, max(0, round(q * len(sorted_values) + 0.5) - 1))]


def _ms(v: float | None) -> float | None:
    return None if v is None else round(1000 * v, 2)


@dataclass
class Row:
    db: str
    phase: str
    what: str
    requests: int
    ok: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    from_pool: int
    searched: int
    pool_p99_ms: float | None
    search_p50_ms: float | None
    first_search_s: float | None
    """Seconds into the phase when the first request was searched on demand (the pool ran dry for it)."""
    until_dry_p99_ms: float | None
    """p99 of the requests sent before ``first_search_s``: the pool path while the pool still had deals."""
    pool_before: int | None
    pool_after: int | None
    server_cpu_ms_per_req: float | None
    request_solver_cpu_s: float | None
    refill_solver_cpu_s: float | None
    db_cpu_ms_per_req: float | None
    other_cores: float | None
    max_send_lag_ms: float | None
    """The load generator's worst delay behind its schedule: large values mean the client was starved."""
    bad: int
    """Replies that broke the promise: not winnable, no difficulty, or a difficulty other than the one asked."""
    distinct_deals: int = 0
    """Different deals the replies carried."""
    redealt: int = 0
    """Replies with a deal an earlier reply of the phase had carried (a pool deal dealt again: its earlier games
    are their own players' only while it is in the pool, ``golf.app.reveals``)."""
    errors: dict[str, int] = field(default_factory=dict)


def summarize(db: str, phase: str, what: str, sent: list[Sent], before: float | None = None, **extra: Any) -> Row:
    done = [s for s in sent if s.latency is not None]
    lat = sorted(s.latency for s in done if s.latency is not None)
    pool = sorted(s.latency for s in done if s.latency is not None and s.source(before) == "pool")
    search = sorted(s.latency for s in done if s.latency is not None and s.source(before) == "search")
    t0 = min((s.scheduled for s in sent), default=0.0)
    first_search = min((s.scheduled - t0 for s in done if s.source(before) == "search"), default=None)
    until_dry = sorted(
        s.latency for s in done if s.latency is not None and (first_search is None or s.scheduled - t0 < first_search)
    )
    bad = 0
    for s in done:
        d = s.deal or {}
        level = d.get("difficulty", "DIFFICULTY_UNSPECIFIED")
        wrong_level = bool(s.difficulty) and level != f"DIFFICULTY_{(s.difficulty or '').upper()}"
        if d.get("winnable") is not True or level == "DIFFICULTY_UNSPECIFIED" or wrong_level:
            bad += 1
    return Row(
        db=db,
        phase=phase,
        what=what,
        requests=len(sent),
        ok=len(done),
        p50_ms=_ms(_percentile(lat, 0.5)),
        p99_ms=_ms(_percentile(lat, 0.99)),
        max_ms=_ms(lat[-1] if lat else None),
        from_pool=len(pool),
        searched=len(search),
        pool_p99_ms=_ms(_percentile(pool, 0.99)),
        search_p50_ms=_ms(_percentile(search, 0.5)),
        first_search_s=None if first_search is None else round(first_search, 2),
        until_dry_p99_ms=_ms(_percentile(until_dry, 0.99)),
        max_send_lag_ms=_ms(max((s.lag for s in sent), default=None)),
        bad=bad,
        distinct_deals=len({s.deal_id for s in done if s.deal_id}),
        redealt=sum(1 for s in done if s.deal_id) - len({s.deal_id for s in done if s.deal_id}),
        errors=dict(Counter(s.error for s in sent if s.error)),
        **{
            "pool_before": None,
            "pool_after": None,
            "server_cpu_ms_per_req": None,
            "request_solver_cpu_s": None,
            "refill_solver_cpu_s": None,
            "db_cpu_ms_per_req": None,
            "other_cores": None,
            **extra,
        },
    )


def with_cpu(row: Row, cpu: Cpu, wall: float, pg: bool) -> Row:
    n = max(row.ok, 1)
    row.server_cpu_ms_per_req = round(1000 * cpu.server / n, 3)
    row.request_solver_cpu_s = round(cpu.request_solver, 3)
    row.refill_solver_cpu_s = round(cpu.refill_solver, 3)
    row.db_cpu_ms_per_req = round(1000 * cpu.db / n, 3) if pg else None
    ours = cpu.server + cpu.request_solver + cpu.refill_solver + cpu.db
    row.other_cores = round(max(0.0, (cpu.machine - ours) / wall), 2) if wall else None
    return row


def breakdown_rows(db: str, phase: str, sent: list[Sent]) -> list[Row]:
    """One row per (request kind, difficulty asked) and per preset."""
    rows = []
    groups: dict[str, list[Sent]] = {}
    for s in sent:
        groups.setdefault(f"{s.kind}{':' + s.difficulty if s.difficulty else ''}", []).append(s)
    for s in sent:
        groups.setdefault(f"preset {s.preset}", []).append(s)
    for name, members in groups.items():
        rows.append(summarize(db, phase, name, members))
    return rows


COLUMNS = [
    ("db", "db", "{}"),
    ("phase", "phase", "{}"),
    ("what", "requests", "{}"),
    ("ok", "ok", "{}"),
    ("p50_ms", "p50 ms", "{:.1f}"),
    ("p99_ms", "p99 ms", "{:.1f}"),
    ("max_ms", "max ms", "{:.1f}"),
    ("from_pool", "pool", "{}"),
    ("searched", "searched", "{}"),
    ("pool_p99_ms", "pool p99", "{:.1f}"),
    ("search_p50_ms", "search p50", "{:.0f}"),
    ("first_search_s", "1st search s", "{:.1f}"),
    ("until_dry_p99_ms", "p99 till dry", "{:.1f}"),
    ("pool_before", "pool before", "{}"),
    ("pool_after", "pool after", "{}"),
    ("server_cpu_ms_per_req", "srv CPU ms/req", "{:.2f}"),
    ("request_solver_cpu_s", "req solver CPU s", "{:.1f}"),
    ("refill_solver_cpu_s", "refill CPU s", "{:.1f}"),
    ("db_cpu_ms_per_req", "pg CPU ms/req", "{:.2f}"),
    ("other_cores", "other cores", "{:.2f}"),
    ("max_send_lag_ms", "send lag ms", "{:.1f}"),
    ("bad", "bad", "{}"),
    ("distinct_deals", "deals", "{}"),
    ("redealt", "re-dealt", "{}"),
    ("errors", "errors", "{}"),
]

FILL_COLUMNS = [
    ("preset", "preset", "{}"),
    ("difficulty", "difficulty", "{}"),
    ("deals", "deals", "{}"),
    ("full_after_s", "full after s", "{:.1f}"),
    ("deals_per_s", "deals/s", "{:.3f}"),
    ("refill_cpu_s", "refill CPU s", "{:.1f}"),
    ("cpu_ms_per_deal", "CPU ms/deal", "{:.0f}"),
]


def render(rows: list[Any], columns: list[tuple[str, str, str]], left: int) -> str:
    def cell(row: Any, name: str, fmt: str) -> str:
        value = getattr(row, name)
        if value is None:
            return "-"
        if isinstance(value, dict):
            return ",".join(f"{k}:{v}" for k, v in value.items()) or "0"
        return fmt.format(value)

    cells = [[title for _, title, _ in columns]] + [[cell(r, n, f) for n, _, f in columns] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = []
    for line in cells:
        pairs = enumerate(zip(line, widths, strict=True))
        lines.append("  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in pairs))
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def fill_text(fill: Fill) -> str:
    head = (
        f"{fill.db} {fill.phase}: {fill.deals}/{fill.target} deals in {fill.seconds:.1f} s "
        f"({fill.deals_per_s:.2f} deals/s{'' if fill.full else ', NOT FULL'}), refill solver CPU "
        f"{fill.refill_cpu_s:.1f} s = {fill.cpu_ms_per_deal or 0:.0f} ms/deal, {fill.refill_cores:.2f} cores; "
        f"other load {fill.other_cores:.2f} cores"
    )
    return head + "\n" + render(fill.buckets, FILL_COLUMNS, 2)


def median_row(rows: list[Row]) -> Row:
    def med(name: str) -> Any:
        values = [getattr(r, name) for r in rows if getattr(r, name) is not None]
        return round(statistics.median(values), 3) if values else None

    errors: Counter[str] = Counter()
    for r in rows:
        errors.update(r.errors)
    out = Row(**{**asdict(rows[0]), "phase": "median", "errors": dict(errors)})
    for name in Row.__dataclass_fields__:
        if name not in ("db", "phase", "what", "errors"):
            setattr(out, name, med(name))
    return out


# -- the phases ------------------------------------------------------------------------------------------------
Profiler = tuple[subprocess.Popen[bytes], Path]


def start_profiler(args: argparse.Namespace, pid: int, label: str, seconds: float) -> Profiler | None:
    if not args.py_spy:
        return None
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out = Path(args.py_spy) / f"deals-{label}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [exe, "record", "-p", str(pid), "-d", str(max(1, round(seconds))), "-r", str(PY_SPY_RATE)]
    cmd += ["-f", "raw", "-o", str(out), "--subprocesses"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out


def finish_profiler(profiler: Profiler | None, seconds: float, requests: int) -> None:
    if profiler is None:
        return
    proc, out = profiler
    try:
        proc.wait(seconds + 30)
    except subprocess.TimeoutExpired:
        proc.kill()  # only the process this script started
        proc.wait()
    if out.exists():
        print(f"py-spy samples (server and its solver processes): {out}", file=sys.stderr)
        print(breakdown(load(out), PY_SPY_RATE, requests).replace("move", "req"), file=sys.stderr)


def measure(
    args: argparse.Namespace, db: str, phase: str, pool: PoolProbe, pid: int, port: int, pg_name: str
) -> list[Row]:
    plan = schedule(args, max(1, round(args.rate * args.seconds)))
    exclude = getattr(pool, "backend_pid", 0)
    tokens = guests(args, port, f"{db} {phase}")
    before = pool.counts()
    cpu0 = read_cpu(pid, pg_name, exclude)
    t0 = time.monotonic()
    profiler = start_profiler(args, pid, f"{db}-{phase.replace(' ', '')}", args.seconds)
    drive(args, port, plan, args.rate, args.reply_timeout, tokens)
    cpu = read_cpu(pid, pg_name, exclude) - cpu0
    wall = time.monotonic() - t0
    after = pool.counts()
    finish_profiler(profiler, args.seconds, len(plan))
    row = summarize(db, phase, "all", plan, pool_before=sum(before.values()), pool_after=sum(after.values()))
    rows = [with_cpu(row, cpu, wall, bool(pg_name))]
    if args.breakdown:
        rows += breakdown_rows(db, phase, plan)
    if not args.json:
        drained = ", ".join(f"{p}/{d} {before.get((p, d), 0)}->{after.get((p, d), 0)}"
                            for p in args.presets for d in DIFFICULTIES)  # fmt: skip
        print(f"  [{db} {phase}] pool per bucket before->after: {drained}", flush=True)
    return rows


def run_db(args: argparse.Namespace, db: str, logs: Path) -> tuple[list[Fill], list[Row], dict[str, Any]]:
    fills: list[Fill] = []
    rows: list[Row] = []
    env = {
        "GOLF_POOL_SIZE": str(args.pool_size),
        "GOLF_POOL_PRESETS": ",".join(args.presets),
        **args.extra_env,
    }
    with database(db, args.pg_url) as (url, pg_name), probe(url) as pool:
        began = time.monotonic()
        with golf_server(url, args.server_log_level, logs, extra_env=env) as server:
            for run in range(1, args.runs + 1):
                phase = "fill" if run == 1 else f"refill {run}"
                fill = wait_full(args, db, phase, pool, server.pid, pg_name, began)
                fills.append(fill)
                if not args.json:
                    print(fill_text(fill), flush=True)
                rows += measure(args, db, f"run {run}", pool, server.pid, server.http_port, pg_name)
                if not args.json:
                    print(render([r for r in rows if r.phase == f"run {run}"], COLUMNS, 3), flush=True)
                began = time.monotonic()
        stopped = time.time()
        before_ids = pool.deal_ids()
        before = pool.counts()
        with golf_server(url, args.server_log_level, logs, extra_env=env) as server:
            after_ids = pool.deal_ids()
            restart: dict[str, Any] = {
                "db": db,
                "pool_before_stop": sum(before.values()),
                "pool_after_restart": len(after_ids),
                "survived": len(before_ids & after_ids),
                "per_bucket_before": {f"{p}/{d}": n for (p, d), n in sorted(before.items())},
            }
            plan = schedule(args, args.restart_requests)
            exclude = getattr(pool, "backend_pid", 0)
            tokens = guests(args, server.http_port, f"{db} restart")
            cpu0 = read_cpu(server.pid, pg_name, exclude)
            t0 = time.monotonic()
            drive(args, server.http_port, plan, args.rate, args.reply_timeout, tokens)
            cpu = read_cpu(server.pid, pg_name, exclude) - cpu0
            row = summarize(db, "restart", "first after restart", plan, before=stopped,
                            pool_before=len(after_ids), pool_after=sum(pool.counts().values()))  # fmt: skip
            rows.append(with_cpu(row, cpu, time.monotonic() - t0, bool(pg_name)))
            restart["first_requests_from_old_pool"] = row.from_pool
            restart["first_requests"] = row.ok
            restart["first_latencies_ms"] = [_ms(s.latency) for s in plan]
        if not args.json:
            print(
                f"  [{db} restart] pool {restart['pool_before_stop']} deals when stopped, "
                f"{restart['pool_after_restart']} after restart, {restart['survived']} the same deals; first "
                f"{row.ok} requests: {row.from_pool} served with deals made before the restart; latencies ms "
                f"{restart['first_latencies_ms']}",
                flush=True,
            )
    return fills, rows, restart


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--pool-size", type=int, default=40, help="GOLF_POOL_SIZE: deals per preset and difficulty")
    parser.add_argument("--presets", default=DEFAULT_PRESETS, help=f"GOLF_POOL_PRESETS (default {DEFAULT_PRESETS})")
    parser.add_argument("--rate", type=float, default=20.0, help="requests per second, open loop (default 20)")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each measured run (default 20)")
    parser.add_argument("--mix", default=DEFAULT_MIX,
                        help=f"request kinds in turn, each for every preset: game|deal[:easy|medium|hard] "
                             f"(default {DEFAULT_MIX})")  # fmt: skip
    parser.add_argument("--runs", type=int, default=1, help="measured runs per database, each after a full refill")
    parser.add_argument("--restart-requests", type=int, default=12, help="requests sent after the restart")
    parser.add_argument("--fill-timeout", type=float, default=1200.0, help="give up waiting for a full pool (s)")
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between pool polls while filling")
    parser.add_argument("--progress-every", type=float, default=10.0, help="seconds between progress lines")
    parser.add_argument("--connections", type=int, default=8, help="keep-alive connections opened in advance")
    parser.add_argument("--guests", type=int, default=4, help="guests signed in per phase, their tokens used in turn")
    parser.add_argument("--reply-timeout", type=float, default=120.0, help="wait this long for the last replies")
    parser.add_argument("--breakdown", action="store_true", help="also rows per request kind and per preset")
    parser.add_argument("--pg-url", default=os.environ.get("GOLF_BENCH_PG_URL", DEFAULT_PG_URL),
                        help="PostgreSQL admin URL to create and drop the bench database")  # fmt: skip
    parser.add_argument("--server-env", action="append", default=[], metavar="GOLF_X=V",
                        help="extra setting for the server, e.g. GOLF_SOLVER_WORKERS=2")  # fmt: skip
    parser.add_argument("--server-log-level", default="warning")
    parser.add_argument("--py-spy", metavar="DIR", help="sample the server and its solvers with py-spy during runs")
    parser.add_argument("--json", action="store_true", help="print the results as JSON instead of tables")
    args = parser.parse_args(argv)

    args.presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    args.mix = [m.strip() for m in args.mix.split(",") if m.strip()]
    for m in args.mix:
        kind, _, level = m.partition(":")
        if kind not in ("game", "deal") or level not in ("", *DIFFICULTIES):
            parser.error(f"--mix: bad entry {m!r}")
    if not 0 < args.rate <= 1000 or not 0 < args.seconds <= 600 or not 1 <= args.runs <= 10:
        parser.error("--rate in (0, 1000], --seconds in (0, 600], --runs in [1, 10]")
    if not 1 <= args.pool_size <= 10_000 or not args.presets:
        parser.error("--pool-size in [1, 10000] and at least one preset")
    if not 1 <= args.guests <= 100:
        parser.error("--guests in [1, 100]")
    args.auth = set()
    args.extra_env = dict(kv.split("=", 1) for kv in args.server_env)
    if any(not k.startswith("GOLF_") for k in args.extra_env):
        parser.error("--server-env takes GOLF_* settings only")
    dbs = ["sqlite", "postgres"] if args.db == "both" else [args.db]

    fills: list[Fill] = []
    rows: list[Row] = []
    restarts: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="golf_bench_logs_") as logs:
        for db in dbs:
            db_fills, db_rows, restart = run_db(args, db, Path(logs))
            fills += db_fills
            rows += db_rows
            restarts.append(restart)
    main_rows = list(rows)
    if args.runs > 1:
        for db in dbs:
            runs = [r for r in rows if r.db == db and r.what == "all" and r.phase.startswith("run")]
            main_rows.append(median_row(runs))
    if args.json:
        meta = {
            "cpus": os.cpu_count(),
            "loadavg_after": os.getloadavg(),
            "pool_size": args.pool_size,
            "presets": args.presets,
            "rate": args.rate,
            "seconds": args.seconds,
            "mix": args.mix,
            "target_p99_ms": TARGET_P99_MS,
            "auth": "/".join(sorted(args.auth)),
            "guests": args.guests,
        }
        out = {"meta": meta, "fills": [asdict(f) for f in fills], "rows": [asdict(r) for r in main_rows]}
        print(json.dumps({**out, "restarts": restarts}, indent=2))
        return 0
    print()
    for fill in fills:
        print(fill_text(fill))
        print()
    print(render(main_rows, COLUMNS, 3))
    for r in main_rows:
        if r.what == "all" and r.p99_ms is not None:
            verdict = "meets" if r.p99_ms <= TARGET_P99_MS and not r.errors else "MISSES"
            print(f"{r.db} {r.phase}: p99 {r.p99_ms:.1f} ms {verdict} the {TARGET_P99_MS:.0f} ms target "
                  f"({r.from_pool} from the pool, {r.searched} searched on demand)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
