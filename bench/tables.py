"""Live tables under load: many tables of bots on one server process on PostgreSQL, watched by many subscribers.

    .venv/bin/python bench/tables.py                          # 100 tables, 1,000 SSE subscribers, 20 s window
    .venv/bin/python bench/tables.py --tables 200 --subscribers 1000 --bot-delay-ms 50 --runs 3
    .venv/bin/python bench/tables.py --subscribers 100 --py-spy /tmp/tables.txt   # and profile the server

Every seat is a bot and each table paces its bots (``botDelay``), so each bot move is its own due run of the
server's table clock: claimed, played from the bot's own view, appended at the version read, committed, published
to the subscribers. Nothing drives the tables but the server: the load generator only sets them up and watches.

``--subscribers`` spectators follow the tables round-robin over REST Server-Sent Events (``GET
/v1/tables/{id}/events``). Delivery latency is the time a subscriber reads an event minus the event's ``time``
(when the server appended it, on this machine's clock): commit, fan-out, redaction, serialisation and the client's
read. Stored moves are counted in the database (the tables' versions), so only committed moves count.

Printed per run: stored table moves per second and per server core-second (server process CPU, all threads, from
/proc), PostgreSQL backend CPU per move, events delivered, delivery p50 / p99, subscribers connected at the start
and still held at the end, and the other cores' load as a noise gauge. Load goes to 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _server import (
    backend_pids,
    cpu_seconds,
    database,
    golf_server,
    machine_busy_seconds,
    total_cpu,
)

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/postgres"


@dataclass
class Tally:
    """What the subscribers saw in the measured window."""

    latencies: list[float] = field(default_factory=list)
    events: int = 0
    heartbeats: int = 0
    connected: int = 0
    held: int = 0
    cut: int = 0
    measuring: bool = False


def _event_time(data: bytes) -> float | None:
    """The ``time`` of a TableEvent in its proto3 JSON, as a Unix timestamp (a cheap scan, not a full parse)."""
    at = data.find(b'"time":"')
    if at < 0:
        return None
    end = data.find(b'"', at + 8)
    text = data[at + 8 : end].decode()
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


async def _subscribe(port: int, token: str, table_id: str, tally: Tally, stop: asyncio.Event) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = (
        f"GET /v1/tables/{table_id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n"
        f"Authorization: Bearer {token}\r\n\r\n"
    )
    writer.write(request.encode())
    status = await reader.readline()
    if b" 200 " not in status:
        writer.close()
        raise RuntimeError(f"subscribe {table_id}: {status!r}")
    while (await reader.readline()) not in (b"\r\n", b"\n", b""):
        pass
    tally.connected += 1
    ended = False
    kind = b""
    try:
        while not stop.is_set():
            line = await reader.readline()
            if not line:
                ended = True
                break
            if line.startswith(b"event:"):
                kind = line[6:].strip()
            elif line.startswith(b"data:"):
                received = time.time()
                if kind != b"table":
                    tally.heartbeats += kind == b"heartbeat"
                    continue
                sent = _event_time(line)
                if tally.measuring and sent is not None:
                    tally.events += 1
                    tally.latencies.append(received - sent)
    except (ConnectionError, asyncio.IncompleteReadError):
        ended = True
    finally:
        if ended:
            tally.cut += 1
        else:
            tally.held += 1
        writer.close()


async def _guest(client: httpx.AsyncClient) -> str:
    reply = await client.post("/v1/players:guest", json={})
    reply.raise_for_status()
    return str(reply.json()["credentials"]["accessToken"])


async def _post(client: httpx.AsyncClient, token: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = await client.post(path, json=body, headers={"authorization": f"Bearer {token}"})
    if reply.status_code != 200:
        raise RuntimeError(f"POST {path}: {reply.status_code} {reply.text[:300]}")
    data: dict[str, Any] = reply.json()
    return data


async def _bot_table(client: httpx.AsyncClient, token: str, args: argparse.Namespace) -> str:
    body = {
        "preset": args.preset,
        "seats": args.seats,
        "holes": 18,
        "takeSeat": False,
        "botDelay": f"{args.bot_delay_ms / 1000:.3f}s",
        "idempotencyKey": str(uuid.uuid4()),
    }
    table = (await _post(client, token, "/v1/tables", body))["table"]
    tid = table["id"]
    for _ in range(args.seats):
        key = str(uuid.uuid4())
        await _post(client, token, f"/v1/tables/{tid}:addBot", {"level": args.bot, "idempotencyKey": key})
    await _post(client, token, f"/v1/tables/{tid}:start", {"idempotencyKey": str(uuid.uuid4())})
    return str(tid)


def _profile(args: argparse.Namespace, pid: int) -> subprocess.Popen[bytes] | None:
    """With ``--py-spy FILE``: sample the server for the measured window (raw stacks; it slows the server a little);
    summarise with ``bench/_pyspy_report.py FILE``."""
    if not args.py_spy:
        return None
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    cmd = [exe, "record", "-p", str(pid), "-d", str(max(1, round(args.seconds))), "-r", "100", "-f", "raw"]
    return subprocess.Popen([*cmd, "-o", args.py_spy], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _stored_moves(db_url: str) -> int:
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT COALESCE(SUM(version), 0) FROM card_golf_tables").fetchone()
    return int(row[0]) if row else 0


async def _run(args: argparse.Namespace, port: int, db_url: str, server_pid: int, dbname: str) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30, limits=limits) as client:
        host = await _guest(client)
        stop = asyncio.Event()
        began = time.monotonic()
        sem = asyncio.Semaphore(16)

        async def one() -> str:
            async with sem:
                return await _bot_table(client, host, args)

        table_ids = list(await asyncio.gather(*(one() for _ in range(args.tables))))
        setup_s = time.monotonic() - began
        watchers = [await _guest(client) for _ in range(max(1, args.subscribers // 50))]
        tally = Tally()
        tasks = [
            asyncio.create_task(
                _subscribe(port, watchers[i % len(watchers)], table_ids[i % len(table_ids)], tally, stop)
            )
            for i in range(args.subscribers)
        ]
        await asyncio.sleep(args.warmup)
        connected = tally.connected
        moves0, cpu0, pg0 = _stored_moves(db_url), cpu_seconds(server_pid), total_cpu(backend_pids(dbname))
        busy0, wall0, self0 = machine_busy_seconds(), time.monotonic(), time.process_time()
        tally.measuring = True
        profiler = _profile(args, server_pid)
        await asyncio.sleep(args.seconds)
        tally.measuring = False
        moves1, cpu1, pg1 = _stored_moves(db_url), cpu_seconds(server_pid), total_cpu(backend_pids(dbname))
        busy1, wall1, self1 = machine_busy_seconds(), time.monotonic(), time.process_time()
        held = sum(1 for t in tasks if not t.done())
        if profiler is not None:
            await asyncio.to_thread(profiler.wait, 60)
        stop.set()
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.gather(*tasks, return_exceptions=True)
    wall = wall1 - wall0
    moves = moves1 - moves0
    server_cpu = cpu1 - cpu0
    lat = sorted(tally.latencies)
    client_cpu = self1 - self0

    def pct(q: float) -> float:
        return 1000 * lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")

    return {
        "bot_delay_ms": args.bot_delay_ms,
        "tables": args.tables,
        "subscribers": args.subscribers,
        "connected": connected,
        "held": held,
        "setup_s": round(setup_s, 1),
        "moves": moves,
        "moves_per_s": round(moves / wall, 1),
        "server_cpu_ms_per_move": round(1000 * server_cpu / moves, 3) if moves else None,
        "moves_per_server_core_s": round(moves / server_cpu, 1) if server_cpu else None,
        "server_cores": round(server_cpu / wall, 2),
        "pg_cpu_ms_per_move": round(1000 * (pg1 - pg0) / moves, 3) if moves else None,
        "events": tally.events,
        "events_per_s": round(tally.events / wall, 1),
        "delivery_p50_ms": round(pct(0.50), 1),
        "delivery_p99_ms": round(pct(0.99), 1),
        "delivery_max_ms": round(1000 * lat[-1], 1) if lat else None,
        "other_cores": round((busy1 - busy0 - server_cpu - (pg1 - pg0) - client_cpu) / wall, 2),
        "client_cpu_s": round(client_cpu, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=100)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--preset", default="six-card")
    parser.add_argument("--bot", default="BOT_LEVEL_GREEDY", help="BOT_LEVEL_RANDOM, _GREEDY or _STRONG")
    parser.add_argument("--bot-delay-ms", type=int, default=100, help="the tables' botDelay")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--pg-url", default=DEFAULT_PG)
    parser.add_argument("--server-env", action="append", default=[], help="NAME=VALUE for the server")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--py-spy", metavar="FILE", help="record py-spy samples of the server into FILE (raw)")
    args = parser.parse_args()
    if args.bot_delay_ms <= 0:
        parser.error("--bot-delay-ms must be above 0 (unpaced bots play a table's match in a few large appends)")
    extra = dict(item.split("=", 1) for item in args.server_env)
    rows = []
    for _ in range(args.runs):
        with (
            database("postgres", args.pg_url) as (db_url, dbname),
            tempfile.TemporaryDirectory() as tmp,
            golf_server(db_url, "warning", Path(tmp), extra_env=extra) as server,
        ):
            row = asyncio.run(_run(args, server.http_port, db_url, server.pid, dbname))
        rows.append(row)
        if not args.json:
            print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    if args.runs > 1:
        median = {
            k: statistics.median(r[k] for r in rows)
            for k in rows[0]
            if all(isinstance(r[k], int | float) and r[k] is not None for r in rows)
        }
        rows.append({"median": True, **median})
        if not args.json:
            print("median " + " ".join(f"{k}={v}" for k, v in median.items()))
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
