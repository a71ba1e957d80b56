"""An honest player's hint latency while 30 guests flood the solver within their limits (issue 26, section 4).

One ``golf serve`` on 127.0.0.1 (a fresh SQLite database, the default rate limits, solver queue and budget). The
server takes a client's address from its TCP peer only (it trusts no X-Forwarded-For header), so each guest here
connects from an address of its own on the loopback network, 127.0.0.2 to 127.0.0.32 (Linux routes all of
127.0.0.0/8 to ``lo``; every call still goes to the server on 127.0.0.1): the per-address limits count each guest
apart, as on the internet, and none had to be raised. The 32 sign-ins passing prove it: one address may sign in
30 times a minute.

- ``quiet``: an honest guest asks for a hint once a second on a cheap game (standard, its first position).
- ``flood``: 30 guests, each from its own address, keep the solver busy for ``--seconds``: each keeps up to
  ``GOLF_SOLVER_QUEUE_PER_PLAYER`` (3) calls in flight, in turn a hint on a two-deck deal whose search runs the
  whole budget (the seeds of tests/e2e/test_abandoned_hints.py), an AutoPlay on such a deal (a new game of it
  after each run played) and a winnable deal (CreateGame, standard, difficulty hard; the bench's server keeps no
  pool, so each is searched, as when the pool is empty). Each guest sends no more solver calls than its solver
  limit allows (30 in any minute), nor creates more than its create limit (60 a minute), and at most
  ``--calls`` solver calls in all; after a 429 or 503 it waits the Retry-After. Meanwhile another honest guest
  asks for a hint once a second as in the quiet phase (a fresh guest every 25 hints, under its own solver limit).

It prints each phase's honest hint p50 / p99 / max, what the flood's calls got (served, 429, 503, other, still
unanswered when the phase ended: those connections are closed), and PASS or MISS against the goal: an honest hint
p99 of at most 1 s during the flood. An honest hint asked during the flood is waited for even past its end, at
most ``--give-up`` seconds (then counted at that time, a lower bound, and the run stays bounded). Traffic goes to
127.0.0.1 only.

    .venv/bin/python bench/fair_solver.py [--seconds 20] [--quiet 10] [--guests 30] [--calls 30] [--give-up 60]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench._server import database, golf_server

HOST = "127.0.0.1"
HONEST_ADDRESS = "127.0.0.2"
FLOOD_SEEDS = ("flood-27", "flood-45", "flood-2")
"""Two-deck deals whose first hint runs a 10,000,000-position budget out, so the default 2,000,000 too."""
AUTOPLAY_SEEDS = FLOOD_SEEDS[:2]
"""Those whose first position has a column play (AutoPlay searches only then; flood-2 has none)."""
GOAL_S = 1.0
IN_FLIGHT = 3  # GOLF_SOLVER_QUEUE_PER_PLAYER's default: more would be refused 429, the guest's own doing
SOLVER_LIMIT = (30, 60.0)  # GOLF_RATE_LIMIT_SOLVER's default, 30/minute
CREATE_LIMIT = (60, 60.0)  # GOLF_RATE_LIMIT_CREATE's default, 60/minute
MARGIN_S = 0.5
"""Kept between a guest's own count of a window and the server's, so that clock steps never make it overrun."""
HONEST_HINTS_PER_GUEST = 25
"""An honest guest asks at most this many hints (its solver limit is 30 a minute); then a fresh one goes on."""
LIMITS = {
    # The defaults, spelt out (bench_env turns every limit off): each guest is within them.
    "GOLF_RATE_LIMIT_PLAYER": "50/second;1500/minute",
    "GOLF_RATE_LIMIT_ADDRESS": "200/second",
    "GOLF_RATE_LIMIT_SOLVER": "30/minute",
    "GOLF_RATE_LIMIT_CREATE": "60/minute",
    "GOLF_RATE_LIMIT_SIGN_IN": "30/minute",
    "GOLF_RATE_LIMIT_SIGN_UP_NETWORK": "60/minute",
    "GOLF_RATE_LIMIT_SIGN_UP_SERVICE": "600/minute",
}


class Refused(Exception):
    """A setup call (sign-in, a game) was not served: the bench cannot go on."""


class Http:
    """One keep-alive HTTP/1.1 connection to the server from ``source`` (a loopback address), orjson bodies."""

    def __init__(self, port: int, source: str) -> None:
        self.port = port
        self.source = source
        self.token = ""
        self._conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        """POST ``body``: (status, the JSON answer, Retry-After seconds or 0)."""
        if self._conn is None:
            self._conn = await asyncio.open_connection(HOST, self.port, local_addr=(self.source, 0))
        reader, writer = self._conn
        data = orjson.dumps(body)
        auth = f"Authorization: Bearer {self.token}\r\n" if self.token else ""
        writer.write(
            f"POST {path} HTTP/1.1\r\nHost: bench\r\n{auth}Content-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n\r\n".encode()
            + data
        )
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
            headers = dict(line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line)
            payload = await reader.readexactly(int(headers.get("content-length", "0")))
        except BaseException:
            self.close()
            raise
        if headers.get("connection") == "close":
            self.close()
        status = int(head[9:12])
        try:
            retry = float(headers.get("retry-after", "0"))
        except ValueError:
            retry = 0.0
        return status, orjson.loads(payload) if payload else {}, retry

    def close(self) -> None:
        if self._conn is not None:
            self._conn[1].close()
            self._conn = None


async def sign_in(port: int, source: str) -> Http:
    """A new guest signed in from ``source``."""
    http = Http(port, source)
    status, answer, _ = await http.post("/v1/players:guest", {})
    if status != 200:
        raise Refused(f"sign-in from {source}: HTTP {status} {answer.get('message', answer)}")
    http.token = answer["credentials"]["accessToken"]
    return http


async def new_game(http: Http, body: dict[str, Any]) -> str:
    status, answer, _ = await http.post("/v1/games", body)
    if status != 200:
        raise Refused(f"CreateGame {body}: HTTP {status} {answer.get('message', answer)}")
    return str(answer["game"]["id"])


async def flood_deal(http: Http, seed: str) -> str:
    status, answer, _ = await http.post("/v1/deals", {"preset": "two-decks", "seed": seed})
    if status != 200:
        raise Refused(f"CreateDeal {seed}: HTTP {status} {answer.get('message', answer)}")
    return str(answer["deal"]["id"])


class Window:
    """A guest's own count of one moving-window limit: ``wait`` returns when one more call is within it."""

    def __init__(self, limit: tuple[int, float]) -> None:
        self.count, self.seconds = limit
        self.sent: deque[float] = deque()

    async def wait(self) -> None:
        while True:
            now = time.monotonic()
            while self.sent and self.sent[0] <= now - self.seconds - MARGIN_S:
                self.sent.popleft()
            if len(self.sent) < self.count:
                self.sent.append(now)
                return
            await asyncio.sleep(self.sent[0] + self.seconds + MARGIN_S - now)


class Guest:
    """One flooding guest: its games, its windows, and ``IN_FLIGHT`` lanes of calls (a connection each)."""

    def __init__(self, index: int, port: int, calls: int, tally: Counter[tuple[str, str]]) -> None:
        self.source = f"127.0.0.{3 + index}"
        self.port = port
        self.left = calls
        self.tally = tally
        self.solver = Window(SOLVER_LIMIT)
        self.create = Window(CREATE_LIMIT)
        self.kinds = itertools.cycle(("hint", "autoplay", "hard"))
        self.hint_game = ""
        self.auto_deal = ""
        self.auto_game = ""
        self.keys = itertools.count()
        self.token = ""

    async def set_up(self) -> None:
        http = await sign_in(self.port, self.source)
        self.token = http.token
        seed = FLOOD_SEEDS[int(self.source.rsplit(".", 1)[1]) % len(FLOOD_SEEDS)]
        for _ in range(4):
            await self.create.wait()  # two deals and two games
        hint_deal = await flood_deal(http, seed)
        self.hint_game = await new_game(http, {"dealId": hint_deal})
        self.auto_deal = await flood_deal(http, AUTOPLAY_SEEDS[int(self.source.rsplit(".", 1)[1]) % 2])
        self.auto_game = await new_game(http, {"dealId": self.auto_deal})
        http.close()

    async def lane(self, end: float) -> None:
        http = Http(self.port, self.source)
        http.token = self.token
        try:
            while time.monotonic() < end and self.left > 0:
                kind = next(self.kinds)
                await self.solver.wait()
                if kind == "hard":
                    await self.create.wait()
                if time.monotonic() >= end or self.left <= 0:
                    break
                self.left -= 1
                self.tally[(kind, "unanswered at the end")] += 1  # until it is answered
                try:
                    status, retry = await self.call(http, kind)
                except (OSError, asyncio.IncompleteReadError):
                    self.tally[(kind, "unanswered at the end")] -= 1
                    raise
                self.tally[(kind, "unanswered at the end")] -= 1
                self.tally[(kind, _outcome(status))] += 1
                if status == 200 and kind == "autoplay":
                    await self.create.wait()  # the run played: a fresh game of the deal for the next one
                    game = await http.post("/v1/games", {"dealId": self.auto_deal})
                    if game[0] == 200:
                        self.auto_game = str(game[1]["game"]["id"])
                if status in (429, 503):
                    await asyncio.sleep(max(retry, 0.1))
        except (OSError, asyncio.IncompleteReadError) as err:
            self.tally[("connection", type(err).__name__)] += 1  # printed apart; the lane ends
        finally:
            http.close()

    async def call(self, http: Http, kind: str) -> tuple[int, float]:
        key = f"{self.source}-{next(self.keys)}"
        if kind == "hint":
            status, _, retry = await http.post(f"/v1/games/{self.hint_game}:hint", {"idempotencyKey": key})
        elif kind == "autoplay":
            status, _, retry = await http.post(f"/v1/games/{self.auto_game}:autoPlay", {"idempotencyKey": key})
        else:
            status, _, retry = await http.post("/v1/games", {"preset": "standard", "difficulty": "DIFFICULTY_HARD"})
        return status, retry


def _outcome(status: int) -> str:
    if status == 200:
        return "served"
    if status in (429, 503):
        return str(status)
    return f"other {status}"


class Honest:
    """The honest player: a hint once a second on a cheap game, a fresh guest every ``HONEST_HINTS_PER_GUEST``."""

    def __init__(self, port: int, give_up: float) -> None:
        self.port = port
        self.give_up = give_up
        self.gave_up = 0
        self.http: Http | None = None
        self.game = ""
        self.asked = 0
        self.refused: Counter[int] = Counter()

    async def hint(self) -> float | None:
        """One hint's latency (s), or None when it was refused."""
        if self.http is None or self.asked >= HONEST_HINTS_PER_GUEST:
            if self.http is not None:
                self.http.close()
            self.http = await sign_in(self.port, HONEST_ADDRESS)
            self.game = await new_game(self.http, {"preset": "standard", "winnableOnly": False})
            self.asked = 0
        self.asked += 1
        began = time.perf_counter()
        call = self.http.post(f"/v1/games/{self.game}:hint", {"idempotencyKey": f"h-{began}"})
        try:
            status, _, _ = await asyncio.wait_for(call, self.give_up)
        except TimeoutError:
            self.gave_up += 1  # counted at the time waited: the run stays bounded, and the figure a lower bound
            return self.give_up
        took = time.perf_counter() - began
        if status != 200:
            self.refused[status] += 1
            return None
        return took

    async def phase(self, seconds: float) -> list[float]:
        """Hints paced at one a second for ``seconds``: their latencies."""
        latencies = []
        due = time.monotonic()
        end = due + seconds
        while time.monotonic() < end:
            took = await self.hint()
            if took is not None:
                latencies.append(took)
            due += 1.0
            await asyncio.sleep(max(0.0, due - time.monotonic()))
        return latencies

    def fresh(self) -> None:
        """The next hint is a new guest's (each phase has its own player)."""
        self.asked = HONEST_HINTS_PER_GUEST


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def run(port: int, args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    honest = Honest(port, args.give_up)
    for _ in range(2):  # warm-up: the solver's worker has searched once, the game is in the server's cache
        await honest.hint()
    honest.fresh()
    quiet = await honest.phase(args.quiet)
    say(f"  quiet: {len(quiet)} hints, p99 {1000 * percentile(quiet, 0.99):.0f} ms")

    tally: Counter[tuple[str, str]] = Counter()
    guests = [Guest(i, port, args.calls, tally) for i in range(args.guests)]
    await asyncio.gather(*(g.set_up() for g in guests))
    say(f"  {args.guests} flooding guests signed in from {args.guests} addresses, their games made")
    end = time.monotonic() + args.seconds
    lanes = [asyncio.ensure_future(g.lane(end)) for g in guests for _ in range(IN_FLIGHT)]
    await asyncio.sleep(1.0)  # the queue full before the honest hints are timed
    honest.fresh()
    flood = await honest.phase(max(1.0, end - time.monotonic()))
    # The phase is over: calls still waiting are abandoned (their connections closed; the server drops them).
    for lane in lanes:
        lane.cancel()
    await asyncio.gather(*lanes, return_exceptions=True)
    shown = ", ".join(f"{1000 * t:.0f}" for t in flood)
    say(f"  flood: {len(flood)} hints, p99 {1000 * percentile(flood, 0.99):.0f} ms (each, ms: {shown})")
    if honest.http is not None:
        honest.http.close()
    return {"quiet": quiet, "flood": flood, "tally": tally, "honest_refused": honest.refused, "gave_up": honest.gave_up}


def report(result: dict[str, Any], args: argparse.Namespace) -> bool:
    """Print the tables; whether the goal was met."""
    print("\n| phase | honest hints | p50 ms | p99 ms | max ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for phase in ("quiet", "flood"):
        values = result[phase]
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        print(
            f"| {phase} | {len(values)} | {1000 * p50:.0f} | {1000 * p99:.0f} | {1000 * max(values, default=0):.0f} |"
        )
    tally: Counter[tuple[str, str]] = result["tally"]
    outcomes = ["served", "429", "503"]
    seen = {o for (k, o), n in tally.items() if n and k != "connection"}
    outcomes += sorted(seen - {*outcomes, "unanswered at the end"})
    outcomes.append("unanswered at the end")
    print(f"\n| flood ({args.guests} guests, {args.seconds:.0f} s) | calls | " + " | ".join(outcomes) + " |")
    print("| --- | ---: | " + " | ".join("---:" for _ in outcomes) + " |")
    kinds = ("hint", "autoplay", "hard")
    for kind in (*kinds, "all"):
        row = [sum(tally[(k, o)] for k in (kinds if kind == "all" else (kind,))) for o in outcomes]
        print(f"| {kind} | {sum(row)} | " + " | ".join(str(n) for n in row) + " |")
    lost = {o: n for (k, o), n in tally.items() if k == "connection" and n}
    if lost:
        print(f"connections lost: {lost}")
    if result["honest_refused"]:
        print(f"honest hints refused: {dict(result['honest_refused'])}")
    if result["gave_up"]:
        print(f"honest hints given up after {args.give_up:.0f} s (counted at that time): {result['gave_up']}")
    p99 = percentile(result["flood"], 0.99)
    met = bool(result["flood"]) and p99 <= GOAL_S and not result["honest_refused"]
    print(f"\n{'PASS' if met else 'MISS'}: honest hint p99 during the flood {1000 * p99:.0f} ms (goal <= 1000 ms)")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the flood")
    parser.add_argument("--quiet", type=float, default=10.0, help="length of the quiet phase")
    parser.add_argument("--guests", type=int, default=30, help="flooding guests, each from its own address")
    parser.add_argument("--give-up", type=float, default=60.0, help="the longest an honest hint is waited for")
    parser.add_argument("--calls", type=int, default=30, help="the most solver calls one flooding guest sends")
    args = parser.parse_args(argv)
    if not 1 <= args.guests <= 250:
        parser.error("--guests must be 1 to 250 (one loopback address each, 127.0.0.3 up)")
    with (
        database("sqlite", "") as (url, _),
        tempfile.TemporaryDirectory(prefix="golf_bench_fair_") as logs,
        golf_server(url, "warning", Path(logs), extra_env=LIMITS) as server,
    ):
        print(f"server pid {server.pid} (SQLite, default limits, solver queue and budget)")
        try:
            result = asyncio.run(run(server.http_port, args, lambda line: print(line, flush=True)))
        except Refused as err:
            print(f"stopped: {err}", file=sys.stderr)
            return 2
    return 0 if report(result, args) else 1


if __name__ == "__main__":
    raise SystemExit(main())
