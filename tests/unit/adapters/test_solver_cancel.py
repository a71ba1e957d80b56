"""A search whose client has gone away stops: the engine's solver asks its ``stop`` function every few thousand
positions, the queue asks a running call to stop when its caller is cancelled, and both transports cancel the
handler of a client that hangs up (gRPC: a cancelled call or a deadline passed; REST: the connection closed)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from golf.adapters.edge import Edge
from golf.adapters.grpc_server import build_grpc_server
from golf.adapters.metrics import Metrics
from golf.adapters.rest import build_rest_app
from golf.adapters.solver_queue import FairQueue
from golf.api.rpc import CallContext, Rpc
from golf.app.solving import find_winnable, verdict_of
from golf.engine.solitaire.autoplay import choose_run
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import STOP_CHECK_EVERY, SearchStopped, solve
from golf.engine.solitaire.state import Layout, State
from golf.v1 import solitaire_service_pb2
from tests.unit.asked import Asked

pb = solitaire_service_pb2
SERVICE = "golf.v1.SolitaireService"
TWO_DECKS = PRESETS["two-decks"]
LONG = State.initial(TWO_DECKS, Layout.from_seed(TWO_DECKS, "flood-2"))
"""A deal whose search runs for minutes (no line found in 30 million positions)."""


# -- the engine ----------------------------------------------------------------------------------------------
def test_a_stopped_search_ends_within_a_few_thousand_positions() -> None:
    stop = Asked(yes_from=3)  # at the start, after STOP_CHECK_EVERY positions, and then it says stop
    with pytest.raises(SearchStopped):
        solve(LONG, None, stop=stop)
    assert stop.calls == 3


@pytest.mark.parametrize("seed", ["slow-3", "slow-5", "b-2", "flood-2"])
def test_a_search_nobody_stops_finds_the_same_answer(seed: str) -> None:
    state = State.initial(TWO_DECKS, Layout.from_seed(TWO_DECKS, seed))
    stop = Asked()
    budget = 30_000  # flood-2 runs out of it: the budget is kept to the position with a stop function too
    result = solve(state, budget, stop=stop)
    assert result == solve(state, budget)
    assert 1 <= stop.calls <= result.positions // STOP_CHECK_EVERY + 1  # cheap: seldom asked


def test_every_solver_call_of_a_worker_can_be_stopped() -> None:
    rules = PRESETS["standard"]
    state = State.initial(rules, Layout.from_pysol(2))
    for call in (
        lambda stop: solve(state, None, stop=stop),
        lambda stop: choose_run(state, None, stop),
        lambda stop: verdict_of(state, None, stop),
        lambda stop: find_winnable(rules, None, None, 5, stop),
    ):
        with pytest.raises(SearchStopped):
            call(Asked(yes_from=1))
        call(Asked())  # not stopped: answers


# -- the queue ---------------------------------------------------------------------------------------------
async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_running_call_whose_client_left_is_asked_to_stop_and_a_waiting_one_never_runs() -> None:
    queue = FairQueue(slots=1, max_waiting=10)
    stopped: list[str] = []
    started: list[str] = []
    gates = {name: asyncio.Event() for name in ("ann", "bob", "cid")}

    def run(name: str) -> asyncio.Task[str]:
        async def search() -> str:
            started.append(name)
            await gates[name].wait()
            return name

        return asyncio.create_task(queue.run(name, search, lambda: stopped.append(name)))

    ann, bob, cid = run("ann"), run("bob"), run("cid")
    await _settle()
    bob.cancel()  # waiting: leaves the queue, nothing to stop
    ann.cancel()  # running: asked to stop, keeps its slot until its search ends
    await _settle()
    assert stopped == ["ann"] and started == ["ann"] and queue.running == 1 and queue.waiting == 1
    gates["ann"].set()  # the search ends (as a stopped one soon does): the slot passes on
    await _settle()
    assert started == ["ann", "cid"]
    gates["cid"].set()
    assert await cid == "cid" and stopped == ["ann"]  # an answered call is not stopped
    assert queue.running == 0 and queue.waiting == 0


# -- the transports ----------------------------------------------------------------------------------------
class _NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


class Endless:
    """A handler that never answers, unless told to; records its calls' cancellation."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.answer = asyncio.Event()

    async def __call__(self, request: Any, ctx: CallContext) -> Message:
        self.entered.set()
        try:
            await self.answer.wait()
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return pb.HintResponse()


def _rpcs(handler: Endless) -> list[Rpc]:
    return [
        Rpc(SERVICE, name, getattr(pb, f"{name}Request"), getattr(pb, f"{name}Response"), handler, public=True)
        for name in ("Hint", "GetGame")
    ]


@pytest.mark.parametrize("how", ["deadline", "cancel"])
async def test_grpc_cancels_the_handler_of_a_call_the_client_gave_up(how: str) -> None:
    handler, metrics = Endless(), Metrics()
    server, _health, port = build_grpc_server(_rpcs(handler), "127.0.0.1:0", Edge(None, _NoLimits()), metrics)  # type: ignore[arg-type]
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            hint = channel.unary_unary(
                "/golf.v1.SolitaireService/Hint",
                request_serializer=pb.HintRequest.SerializeToString,
                response_deserializer=pb.HintResponse.FromString,
            )
            call = hint(pb.HintRequest(game_id="g1", idempotency_key="k"), timeout=0.3 if how == "deadline" else None)
            await asyncio.wait_for(handler.entered.wait(), 10)
            if how == "cancel":
                call.cancel()
            with pytest.raises((grpc.aio.AioRpcError, asyncio.CancelledError)):
                await call
            await asyncio.wait_for(handler.cancelled.wait(), 10)
    finally:
        await server.stop(None)
    assert _count(metrics, "golf_grpc_requests_total", method="Hint", code="CANCELLED") == 1


def _count(metrics: Metrics, name: str, **labels: str) -> float:
    return sum(
        sample.value
        for family in metrics.registry.collect()
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


class Connection:
    """One HTTP request driven over ASGI as uvicorn does: the body, then ``http.disconnect`` when the client hangs
    up (or once the response is sent)."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.hung_up = asyncio.Event()
        self.sent: list[dict[str, Any]] = []
        self.read = False

    async def receive(self) -> dict[str, Any]:
        if not self.read:
            self.read = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.hung_up.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body" and not message.get("more_body"):
            self.hung_up.set()

    @property
    def status(self) -> int:
        return int(self.sent[0]["status"])


def _scope(method: str, path: str, body: bytes) -> dict[str, Any]:
    headers = [(b"host", b"golf"), (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": headers if method == "POST" else headers[:1],
        "client": ("127.0.0.1", 5000),
        "server": ("golf", 80),
    }


ROUTES = [("POST", "/v1/games/g1:hint", b'{"idempotencyKey": "k"}'), ("GET", "/v1/games/g1", b"")]


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_rest_cancels_the_handler_of_a_client_that_hung_up(
    method: str, path: str, body: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    handler, metrics = Endless(), Metrics()
    app = build_rest_app(_rpcs(handler), Edge(None, _NoLimits()), metrics)  # type: ignore[arg-type]
    conn = Connection(body)
    with caplog.at_level(logging.INFO):
        served = asyncio.create_task(app(_scope(method, path, body), conn.receive, conn.send))
        await asyncio.wait_for(handler.entered.wait(), 10)
        conn.hung_up.set()  # the client closes the connection
        await asyncio.wait_for(handler.cancelled.wait(), 10)
        await asyncio.wait_for(served, 10)
    assert conn.status == 499  # into the void; counted in the metrics
    assert _count(metrics, "golf_http_requests_total", method=method, status="499") == 1
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []


@pytest.mark.parametrize(("method", "path", "body"), ROUTES)
async def test_rest_answers_a_client_that_waits(method: str, path: str, body: bytes) -> None:
    handler = Endless()
    handler.answer.set()
    app = build_rest_app(_rpcs(handler), Edge(None, _NoLimits()))  # type: ignore[arg-type]
    conn = Connection(body)
    before = asyncio.all_tasks()
    await asyncio.wait_for(app(_scope(method, path, body), conn.receive, conn.send), 10)
    await _settle()
    assert conn.status == 200 and not handler.cancelled.is_set()
    assert asyncio.all_tasks() == before  # the watch on the connection ended with the request
