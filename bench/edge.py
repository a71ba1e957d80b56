"""An honest player's move latency while attackers hit the network edge (issue 26, section 1).

One ``golf serve`` on 127.0.0.1 (SQLite, the default limits and timeouts, rate limits on except the per-address
one: every client here is 127.0.0.1). An honest player plays moves over REST, one at a time, paced at ``--rate``
a second (under its rate limit), on one keep-alive connection, in four phases of ``--seconds`` each:

- ``quiet``: nobody else.
- ``huge-header``: an attacker sends requests with a 64 MB header, one after another (a new connection each).
- ``trickle``: an attacker keeps 300 connections open that trickle a header, a byte a second each, reopening any
  the server closes.
- ``flood``: a signed-in attacker sends PlayMove calls as fast as it can on 16 connections; all but its share of
  its rate limit are refused.

It prints each phase's move p50 and p99 and what the attacker got, and whether every p99 is at most twice the quiet
one. ``--rev`` runs the server from a git revision instead of the work tree (to compare with a revision before the
limits). Traffic goes to 127.0.0.1 only, for at most four phases of ``--seconds``.

    .venv/bin/python bench/edge.py [--seconds 15] [--rate 20] [--rev REV]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import socket
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._loadgen import LoadConfig, RestApi
from bench._server import database, golf_server, source_tree

HOST = "127.0.0.1"
PHASES = ("quiet", "huge-header", "trickle", "flood")
HEADER_MB = 64
TRICKLERS = 300
FLOOD_CONNECTIONS = 16
LIMITS = {
    "GOLF_RATE_LIMIT_PLAYER": "50/second;1500/minute",
    "GOLF_RATE_LIMIT_ADDRESS": "",  # every client of the bench is 127.0.0.1
    "GOLF_RATE_LIMIT_CREATE": "600/minute",
    "GOLF_RATE_LIMIT_SIGN_IN": "600/minute",
}


# -- attackers (each in a process of its own, so the honest player's client is not slowed by them) --------------
def _huge_header(port: int, seconds: float, out: Any) -> None:
    """Requests with a 64 MB header, one connection each, until ``seconds`` pass."""
    end = time.monotonic() + seconds
    chunk = b"a" * (1 << 20)
    tally: Counter[str] = Counter()
    while time.monotonic() < end:
        try:
            with socket.create_connection((HOST, port), timeout=5) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: bench\r\nX-Huge: ")
                sent = 0
                try:
                    while sent < HEADER_MB and time.monotonic() < end:
                        sock.sendall(chunk)
                        sent += 1
                    sock.sendall(b"\r\n\r\n")
                except OSError:
                    pass
                try:
                    reply = sock.recv(64)
                except OSError:
                    reply = b""
                tally[reply[9:12].decode() or "closed"] += 1
                tally["MB sent"] += sent
        except OSError:
            tally["connect failed"] += 1
    out.put(dict(tally))


def _trickle(port: int, seconds: float, out: Any) -> None:
    """Keep ``TRICKLERS`` connections open that send a header a byte a second; reopen the ones closed."""
    end = time.monotonic() + seconds
    tally: Counter[str] = Counter()
    socks: list[socket.socket | None] = [None] * TRICKLERS
    head = b"GET /healthz HTTP/1.1\r\nHost: bench\r\nX-Slow: " + b"s" * 10_000
    sent = [0] * TRICKLERS
    while time.monotonic() < end:
        for i in range(TRICKLERS):
            sock = socks[i]
            if sock is None:
                try:
                    sock = socket.create_connection((HOST, port), timeout=5)
                    sock.setblocking(False)
                    socks[i], sent[i] = sock, 0
                    tally["opened"] += 1
                except OSError:
                    tally["connect failed"] += 1
                    continue
            try:
                sock.send(head[sent[i] % len(head) : sent[i] % len(head) + 1])
                sent[i] += 1
                if sock.recv(1 << 16, socket.MSG_PEEK | socket.MSG_DONTWAIT) is not None:
                    raise ConnectionError  # an answer (408, 503) or the close: the server let go of it
            except BlockingIOError:
                pass  # nothing to read: still open
            except OSError:
                sock.close()
                socks[i] = None
                tally["closed by the server"] += 1
        time.sleep(max(0.0, 1.0 - (time.monotonic() % 1.0)))
    tally["open at the end"] = sum(s is not None for s in socks)
    for s in socks:
        if s is not None:
            s.close()
    out.put(dict(tally))


async def _flood_async(port: int, seconds: float, token: str, game_id: str) -> dict[str, int]:
    end = time.monotonic() + seconds
    tally: Counter[str] = Counter()
    body = orjson.dumps({"move": {"drawStock": {}}, "idempotencyKey": "flood", "expectedVersion": 0})
    request = (
        f"POST /v1/games/{game_id}/moves HTTP/1.1\r\nHost: bench\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body

    async def one() -> None:
        reader, writer = await asyncio.open_connection(HOST, port)
        try:
            while time.monotonic() < end:
                writer.write(request)
                head = await reader.readuntil(b"\r\n\r\n")
                lower = head.lower()
                at = lower.find(b"\r\ncontent-length:")
                length = int(lower[at + 17 : lower.index(b"\r\n", at + 2)])
                await reader.readexactly(length)
                tally[head[9:12].decode()] += 1
                if b"\r\nconnection: close" in lower:
                    writer.close()
                    reader, writer = await asyncio.open_connection(HOST, port)
        except (OSError, asyncio.IncompleteReadError):
            tally["connection lost"] += 1
        finally:
            writer.close()

    await asyncio.gather(*(one() for _ in range(FLOOD_CONNECTIONS)))
    return dict(tally)


def _flood(port: int, seconds: float, token: str, game_id: str, out: Any) -> None:
    """PlayMove calls on ``FLOOD_CONNECTIONS`` connections, each as soon as the last was answered."""
    out.put(asyncio.run(_flood_async(port, seconds, token, game_id)))


# -- the honest player -----------------------------------------------------------------------------------------
async def _honest(api: RestApi, seconds: float, rate: float, counter: list[int]) -> list[float]:
    """Move latencies (s) of moves paced at ``rate`` a second for ``seconds``; a new game when one ends."""
    latencies: list[float] = []
    game = await api.new_game()
    end = time.monotonic() + seconds
    due = time.monotonic()
    while time.monotonic() < end:
        due += 1 / rate
        if not game.in_progress or game.next_move is None:
            game = await api.new_game()
        counter[0] += 1
        began = time.perf_counter()
        game = await api.play(game, f"honest-{os.getpid()}-{counter[0]}")
        latencies.append(time.perf_counter() - began)
        await asyncio.sleep(max(0.0, due - time.monotonic()))
    return latencies


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _sign_in(port: int) -> tuple[str, str]:
    """A new guest's access token and a game of its own (the flood's target)."""
    api = RestApi(LoadConfig("rest", HOST, port, 0, 1, 0))
    assert await api.sign_in()
    token = api.conn._head.split(b"Bearer ")[1].split(b"\r\n")[0].decode()
    game = await api.new_game()
    await api.close()
    return token, game.id


async def _run(port: int, seconds: float, rate: float) -> list[tuple[str, list[float], dict[str, int]]]:
    ctx = multiprocessing.get_context("spawn")
    api = RestApi(LoadConfig("rest", HOST, port, 0, 1, 0))
    assert await api.sign_in()
    await _honest(api, 2.0, rate, [0])  # warm-up
    counter = [0]
    results = []
    for phase in PHASES:
        out = ctx.Queue()
        attacker = None
        if phase == "huge-header":
            attacker = ctx.Process(target=_huge_header, args=(port, seconds + 1, out))
        elif phase == "trickle":
            attacker = ctx.Process(target=_trickle, args=(port, seconds + 1, out))
        elif phase == "flood":
            token, game_id = await _sign_in(port)
            attacker = ctx.Process(target=_flood, args=(port, seconds + 1, token, game_id, out))
        if attacker is not None:
            attacker.start()
            await asyncio.sleep(1.0)  # the attack under way before the moves are timed
        latencies = await _honest(api, seconds, rate, counter)
        tally: dict[str, int] = {}
        if attacker is not None:
            attacker.join(30)
            tally = out.get(timeout=30) if attacker.exitcode == 0 else {"attacker failed": attacker.exitcode or -1}
        results.append((phase, latencies, tally))
        print(f"  {phase}: {len(latencies)} moves, p99 {1000 * _percentile(latencies, 0.99):.1f} ms", flush=True)
    await api.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0, help="length of each phase")
    parser.add_argument("--rate", type=float, default=20.0, help="the honest player's moves per second")
    parser.add_argument("--rev", default=None, help="run the server from this git revision")
    args = parser.parse_args(argv)
    with (
        source_tree(args.rev) as src,
        database("sqlite", "") as (url, _),
        tempfile.TemporaryDirectory(prefix="golf_bench_edge_") as logs,
        golf_server(url, "warning", Path(logs), src, LIMITS) as server,
    ):
        print(f"server from {args.rev or 'the work tree'}, pid {server.pid}")
        results = asyncio.run(_run(server.http_port, args.seconds, args.rate))
    quiet = _percentile(results[0][1], 0.99)
    print("\n| phase | moves | p50 ms | p99 ms | p99 / quiet p99 | attacker got |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    worst = 0.0
    for phase, latencies, tally in results:
        p50, p99 = _percentile(latencies, 0.5), _percentile(latencies, 0.99)
        worst = max(worst, p99 / quiet)
        got = ", ".join(f"{k}: {v}" for k, v in sorted(tally.items())) or "-"
        print(f"| {phase} | {len(latencies)} | {1000 * p50:.1f} | {1000 * p99:.1f} | {p99 / quiet:.2f} | {got} |")
    print(f"\nworst p99 / quiet p99: {worst:.2f} ({'within' if worst <= 2 else 'over'} the goal of 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
