"""Prometheus metrics, served at ``/metrics``.

The hot path (a move costs well under a millisecond of server CPU) pays for one counter increment and one
histogram observation per request: every labelled child is looked up once and cached, so a request allocates
nothing here. Gauges that need the database (games in progress) are computed when Prometheus scrapes, at most
once per ``refresh_seconds``, never per request.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, disable_created_metrics, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.metrics_core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

from golf.api.rpc import CallContext, Handler, Rpc
from golf.app.ports import Solver
from golf.app.records import Verdict
from golf.engine.solitaire.autoplay import AutoRun
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.solver import SolveResult
from golf.engine.solitaire.state import State

T = TypeVar("T")

__all__ = ["CONTENT_TYPE_LATEST", "Metrics", "RouteMetrics", "RpcMetrics", "TimedSolver"]

# The ``*_created`` series double the page and no dashboard reads them.
disable_created_metrics()  # type: ignore[no-untyped-call]

# Latency buckets in seconds: a move takes about a millisecond; a solver-backed request may take seconds.
LATENCY_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
SOLVER_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

GameCounter = Callable[[], Awaitable[int]]
GroupCounts = Callable[[], tuple[int, int]]
"""Statements sent by group commit and the entries (moves) they carried, since the process started."""


class _GroupCommitCollector(Collector):
    """``golf_db_group_commit_*``, read from the writer's own counts on scrape (nothing on the hot path)."""

    def __init__(self, counts: GroupCounts) -> None:
        self._counts = counts

    def collect(self) -> Iterable[Metric]:
        batches, entries = self._counts()
        yield CounterMetricFamily(
            "golf_db_group_commit_statements", "Statements group commit sent to PostgreSQL", value=batches
        )
        yield CounterMetricFamily(
            "golf_db_group_commit_entries",
            "Moves those statements stored or refused (entries per statement: the ratio)",
            value=entries,
        )


class RpcMetrics:
    """Pre-bound children for one method of gRPC (or of Connect and gRPC-Web): ``observe`` is the only call on the
    hot path."""

    __slots__ = ("_codes", "_count", "_latency", "_method")

    def __init__(self, count: Counter, latency: Histogram, method: str) -> None:
        self._latency = latency.labels(method)
        self._count = count
        self._codes: dict[str, Any] = {}
        self._method = method

    def observe(self, code: str, seconds: float) -> None:
        child = self._codes.get(code)
        if child is None:
            child = self._codes[code] = self._count.labels(self._method, code)
        child.inc()
        self._latency.observe(seconds)


class RouteMetrics:
    """Pre-bound children for one REST route (the path template, not the path: bounded label values)."""

    __slots__ = ("_codes", "_count", "_latency", "_method", "_route")

    def __init__(self, metrics: Metrics, method: str, route: str) -> None:
        self._latency = metrics.http_latency.labels(method, route)
        self._count = metrics.http_requests
        self._codes: dict[int, Any] = {}
        self._method = method
        self._route = route

    def observe(self, status: int, seconds: float) -> None:
        child = self._codes.get(status)
        if child is None:
            child = self._codes[status] = self._count.labels(self._method, self._route, str(status))
        child.inc()
        self._latency.observe(seconds)


class Metrics:
    """Every metric of one server process, in a registry of its own (tests can build as many as they like)."""

    def __init__(self, refresh_seconds: float = 15.0) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.grpc_requests = Counter(
            "golf_grpc_requests", "gRPC calls of golf.v1 by method and status code", ["method", "code"], registry=r
        )
        self.grpc_latency = Histogram(
            "golf_grpc_request_duration_seconds",
            "Time to answer a gRPC call, by method",
            ["method"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.connect_requests = Counter(
            "golf_connect_requests",
            "Connect and gRPC-Web calls of golf.v1 (on the HTTP port) by method and status code",
            ["method", "code"],
            registry=r,
        )
        self.connect_latency = Histogram(
            "golf_connect_request_duration_seconds",
            "Time to answer a Connect or gRPC-Web call, by method (a stream: to accept or refuse it)",
            ["method"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.http_requests = Counter(
            "golf_http_requests", "REST requests by method, route and status", ["method", "route", "status"], registry=r
        )
        self.http_latency = Histogram(
            "golf_http_request_duration_seconds",
            "Time to answer a REST request, by method and route",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.moves = Counter(
            "golf_moves_played", "Moves stored (PlayMove and each move of AutoPlay; retries not counted)", registry=r
        )
        self.games_in_progress = Gauge(
            "golf_games_in_progress",
            "Games in the database that are not over (all replicas; counted on scrape, at most every "
            f"{refresh_seconds:g} s)",
            registry=r,
        )
        self.tables_active = Gauge(
            "golf_tables_active",
            "Live card Golf tables seating players or playing (all replicas; counted on scrape, at most every "
            f"{refresh_seconds:g} s)",
            registry=r,
        )
        self.solver_seconds = Histogram(
            "golf_solver_duration_seconds",
            "Wall time of one solver call in a worker process, by kind",
            ["kind"],
            buckets=SOLVER_BUCKETS,
            registry=r,
        )
        self.event_subscribers = Gauge(
            "golf_event_subscribers",
            "Clients watching live table events (WatchTable over gRPC or Server-Sent Events) on this process",
            registry=r,
        )
        self.ready = Gauge("golf_ready", "1 when the readiness check passes (database, schema at head)", registry=r)
        self._refresh_seconds = refresh_seconds
        self._refreshed_at = float("-inf")
        self._count_games: GameCounter | None = None
        self._count_tables: GameCounter | None = None

    def rpc(self, method: str) -> RpcMetrics:
        return RpcMetrics(self.grpc_requests, self.grpc_latency, method)

    def connect(self, method: str) -> RpcMetrics:
        return RpcMetrics(self.connect_requests, self.connect_latency, method)

    def route(self, method: str, route: str) -> RouteMetrics:
        return RouteMetrics(self, method, route)

    def count_subscribers_with(self, count: Callable[[], int]) -> None:
        """Where ``golf_event_subscribers`` comes from: the event hub's count, read on scrape."""
        self.event_subscribers.set_function(count)

    def count_group_commit_with(self, counts: GroupCounts) -> None:
        """Where ``golf_db_group_commit_statements`` and ``..._entries`` come from (PostgreSQL only)."""
        self.registry.register(_GroupCommitCollector(counts))

    def count_games_with(self, counter: GameCounter) -> None:
        """Where ``golf_games_in_progress`` comes from (a cheap query run on scrape)."""
        self._count_games = counter

    def count_tables_with(self, counter: GameCounter) -> None:
        """Where ``golf_tables_active`` comes from (a cheap query run on scrape)."""
        self._count_tables = counter

    async def exposition(self) -> bytes:
        """The text format for ``/metrics``, with the database gauges refreshed when they are old."""
        now = time.monotonic()
        counted = [(self.games_in_progress, self._count_games), (self.tables_active, self._count_tables)]
        if any(c is not None for _, c in counted) and now - self._refreshed_at >= self._refresh_seconds:
            self._refreshed_at = now
            try:
                for gauge, count in counted:
                    if count is not None:
                        gauge.set(await count())
            except Exception:  # a scrape must still answer when the database does not; /readyz reports that
                self._refreshed_at = float("-inf")
        return generate_latest(self.registry)

    def count_moves(self, rpcs: list[Rpc]) -> list[Rpc]:
        """The RPC table with PlayMove and AutoPlay wrapped to count the moves they store (not replays)."""
        moves = self.moves

        def played(handler: Handler) -> Handler:
            async def play(req: Any, ctx: CallContext) -> Any:
                reply: Any = await handler(req, ctx)
                if not reply.replayed:
                    moves.inc()
                return reply

            return play

        def autoplayed(handler: Handler) -> Handler:
            async def autoplay(req: Any, ctx: CallContext) -> Any:
                reply: Any = await handler(req, ctx)
                if not reply.replayed and reply.moves:
                    moves.inc(len(reply.moves))
                return reply

            return autoplay

        wrap = {"PlayMove": played, "AutoPlay": autoplayed}
        return [replace(rpc, handler=wrap[rpc.name](rpc.handler)) if rpc.name in wrap else rpc for rpc in rpcs]


class TimedSolver:
    """The solver port with each call's wall time recorded in ``golf_solver_duration_seconds``: calls that
    complete (with an answer or within their budget) only. A call refused (the queue full) or cancelled (its client
    went away) is not a solver duration and would only blur the histogram."""

    def __init__(self, inner: Solver, metrics: Metrics) -> None:
        self._inner = inner
        self._solve = metrics.solver_seconds.labels("solve")
        self._autoplay = metrics.solver_seconds.labels("autoplay_run")
        self._verdict = metrics.solver_seconds.labels("verdict")
        self._find = metrics.solver_seconds.labels("find_winnable")

    async def solve(self, state: State, budget: int | None, owner: str | None = None) -> SolveResult:
        return await _timed(self._solve, self._inner.solve(state, budget, owner))

    async def autoplay_run(self, state: State, budget: int | None, owner: str | None = None) -> AutoRun:
        return await _timed(self._autoplay, self._inner.autoplay_run(state, budget, owner))

    async def verdict(self, state: State, budget: int | None, owner: str | None = None) -> Verdict:
        return await _timed(self._verdict, self._inner.verdict(state, budget, owner))

    async def find_winnable(
        self,
        rules: SolitaireRules,
        difficulty: Difficulty | None,
        budget: int | None,
        attempts: int,
        owner: str | None = None,
    ) -> tuple[str, Verdict] | None:
        return await _timed(self._find, self._inner.find_winnable(rules, difficulty, budget, attempts, owner))


async def _timed(histogram: Any, call: Awaitable[T]) -> T:
    """``call``'s result, its wall time observed in ``histogram`` when it returns (not when it raises)."""
    start = time.perf_counter()
    result = await call
    histogram.observe(time.perf_counter() - start)
    return result
