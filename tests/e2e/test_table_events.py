"""Live table events over both transports and both databases: gRPC ``WatchTable`` and REST Server-Sent Events.

A person plays against bots while a spectator and the person watch; both hang up mid-match, more moves are made,
and they come back with ``afterSeq`` (gRPC, REST query) or ``Last-Event-ID`` (REST): every event arrives once, in
order, nothing lost, each payload holding only cards its viewer may know, and the last table equal to what GetTable
gives that viewer. Refusals before the stream are the usual errors (404, 401, 400); a finished match with nothing
more to send is 204 (an ``EventSource`` stops reconnecting); heartbeats keep an idle stream alive; the
``golf_event_subscribers`` gauge counts the open streams; the OpenAPI document shows the route as
``text/event-stream``.

The server runs in this process, in a thread of its own (``LiveServer``): the same container ``golf serve`` builds
(``golf.bootstrap.build``), with its event hub, table clock and WatchTable row.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import httpx
import pytest
import uvicorn
from google.protobuf import json_format

from golf.adapters.grpc_server import build_grpc_server
from golf.adapters.rest import build_rest_app
from golf.adapters.settings import Settings
from golf.bootstrap import build
from golf.v1 import card_golf_pb2 as cg
from golf.v1 import table_service_pb2 as tpb
from golf.v1 import table_service_pb2_grpc
from tests.e2e.identity import new_client
from tests.e2e.support import TEST_TOKEN_KEY, Client, Grpc, R, Reply, Rest, free_ports, migrate
from tests.e2e.tables import Knowledge, Tables, check_hidden

PLAYING, OVER = cg.TABLE_STATUS_PLAYING, cg.TABLE_STATUS_OVER
HEARTBEAT_SECONDS = 1.0
READ_SECONDS = 20.0


# -- a server in this process --------------------------------------------------------------------------------------
@dataclass
class LiveServer:
    """``golf.bootstrap.build``'s container served over both transports in a thread with its own event loop."""

    database_url: str
    http_port: int = 0
    grpc_port: int = 0
    ready: threading.Event = field(default_factory=threading.Event)
    failed: list[BaseException] = field(default_factory=list)
    _loop: asyncio.AbstractEventLoop | None = None
    _stop: asyncio.Event | None = None
    _thread: threading.Thread | None = None

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    def start(self) -> LiveServer:
        self.http_port, self.grpc_port = free_ports(2)
        self._thread = threading.Thread(target=self._run, name="live-server", daemon=True)
        self._thread.start()
        if not self.ready.wait(60) or self.failed:
            raise AssertionError(f"the server did not start: {self.failed}")
        return self

    def stop(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            return
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(60)
            assert not self._thread.is_alive(), "the server did not stop"

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:
            self.failed.append(err)
            self.ready.set()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        settings = Settings(
            database_url=self.database_url,
            host="127.0.0.1",
            pool_size=0,
            token_key=None if self.database_url.startswith("sqlite") else TEST_TOKEN_KEY,
            event_heartbeat_seconds=HEARTBEAT_SECONDS,
            rate_limit_player="",  # the tests call faster than players
            rate_limit_address="",
            rate_limit_solver="",
            rate_limit_create="",
            rate_limit_sign_in="",
            rate_limit_sign_up_network="",
            rate_limit_sign_up_service="",
            rate_limit_join_code_player="",
            rate_limit_join_code_address="",
        )
        container = build(settings)
        rpcs = list(container.rpcs)
        server, _health, _port = build_grpc_server(
            rpcs, f"127.0.0.1:{self.grpc_port}", container.edge, container.metrics
        )
        app = build_rest_app(rpcs, container.edge, container.metrics)
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.http_port, log_level="warning", lifespan="off", log_config=None
        )
        http = uvicorn.Server(config)
        await server.start()
        http_task = asyncio.create_task(http.serve())
        background = [asyncio.create_task(work(), name=name) for name, work in container.background.items()]
        for _ in range(3000):
            if http.started:
                break
            await asyncio.sleep(0.01)
        self.ready.set()
        await self._stop.wait()
        for task in background:  # first: the hub ends its streams, so the HTTP connections can close
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        http.should_exit = True
        await asyncio.gather(server.stop(1), http_task, return_exceptions=True)
        container.solver.close()
        container.background_solver.close()
        await container.limits.close()
        await container.database.dispose()


@pytest.fixture(scope="module")
def live(module_database_url: str) -> Iterator[LiveServer]:
    migrate(module_database_url)
    server = LiveServer(module_database_url).start()
    yield server
    server.stop()


@pytest.fixture(params=["rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clients(live: LiveServer, transport: str) -> Iterator[list[Client]]:
    made = [new_client(live, transport) for _ in range(3)]  # type: ignore[arg-type]
    yield made
    for c in made:
        c.close()


# -- stream clients ------------------------------------------------------------------------------------------------
@dataclass
class Item:
    """One message of a stream: a table event, a heartbeat (``seq``), or (SSE) the error that ended it."""

    kind: str
    seq: int
    event: cg.TableEvent | None = None
    error: dict[str, Any] | None = None


class GrpcWatch:
    def __init__(self, client: Grpc, table_id: str, after_seq: int | None = None, join_code: str = "") -> None:
        req = tpb.WatchTableRequest(table_id=table_id, join_code=join_code)
        if after_seq is not None:
            req.after_seq = after_seq
        stub = table_service_pb2_grpc.TableServiceStub(client.channel)
        self.call = stub.WatchTable(req, metadata=client.metadata, timeout=120)

    def next(self) -> Item:
        msg = next(self.call)  # StopIteration at the end; grpc.RpcError for a refusal
        if msg.HasField("event"):
            return Item("table", msg.event.seq, msg.event)
        return Item("heartbeat", msg.heartbeat.seq)

    def close(self) -> None:
        self.call.cancel()


class SseWatch:
    """Server-Sent Events read line by line (a strict parser: every field is one we send)."""

    def __init__(
        self,
        client: Rest,
        table_id: str,
        after_seq: int | None = None,
        join_code: str = "",
        last_event_id: str | None = None,
    ) -> None:
        params: dict[str, str] = {}
        if after_seq is not None:
            params["afterSeq"] = str(after_seq)
        if join_code:
            params["joinCode"] = join_code
        headers = {"accept": "text/event-stream"}
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        request = client.http.build_request("GET", f"/v1/tables/{table_id}/events", params=params, headers=headers)
        self.response = client.http.send(request, stream=True)
        self.status = self.response.status_code
        self.lines = self.response.iter_lines() if self.status == 200 else iter(())
        if self.status == 200:
            assert self.response.headers["content-type"].startswith("text/event-stream")
            assert self.response.headers["cache-control"] == "no-cache"
        self.retry: int | None = None

    def refusal(self, client: Rest) -> Reply:
        self.response.read()
        return client.reply(self.response, tpb.WatchTableResponse)

    def next(self) -> Item:
        fields: dict[str, str] = {}
        for line in self.lines:
            if not line:
                if fields:
                    return self._item(fields)
                continue
            name, _, value = line.partition(": ")
            assert name in ("id", "event", "data", "retry"), line
            if name == "retry":
                self.retry = int(value)
            else:
                fields[name] = value
        raise StopIteration

    @staticmethod
    def _item(fields: dict[str, str]) -> Item:
        kind, data = fields["event"], fields["data"]
        if kind == "table":
            event = cg.TableEvent()
            json_format.Parse(data, event)  # strict: an unknown field fails
            assert fields["id"] == str(event.seq)
            return Item("table", event.seq, event)
        if kind == "heartbeat":
            beat = tpb.Heartbeat()
            json_format.Parse(data, beat)
            assert "id" not in fields
            return Item("heartbeat", beat.seq)
        assert kind == "error", fields
        return Item("error", -1, error=json.loads(data))

    def close(self) -> None:
        self.response.close()


Watch = GrpcWatch | SseWatch


def watch(client: Client, table_id: str, after_seq: int | None = None, **kw: Any) -> Watch:
    if isinstance(client, Grpc):
        return GrpcWatch(client, table_id, after_seq, **kw)
    return SseWatch(client, table_id, after_seq, **kw)


def read_until(stream: Watch, seq: int) -> list[cg.TableEvent]:
    """The events (heartbeats skipped) up to the one with ``seq``."""
    got: list[cg.TableEvent] = []
    deadline = time.monotonic() + READ_SECONDS
    while not got or got[-1].seq < seq:
        assert time.monotonic() < deadline, f"no event {seq} in time (last: {got[-1].seq if got else None})"
        item = stream.next()
        assert item.kind != "error", item.error
        if item.event is not None:
            got.append(item.event)
    return got


def read_to_end(stream: Watch) -> list[Item]:
    items: list[Item] = []
    while True:
        try:
            items.append(stream.next())
        except StopIteration:
            return items


def _table(reply: Reply) -> cg.Table:
    table: cg.Table = reply.expect_ok().table
    return table


def check_stream(events: list[cg.TableEvent], knows: Knowledge, transport: str) -> None:
    """Each event's table is the viewer's (its seat), and holds no card the viewer may not know (the viewer's own
    peeks learnt from its own moves in the stream itself)."""
    before: cg.Table | None = None
    for event in events:
        assert event.table.version == event.seq
        if (
            before is not None
            and knows.seat is not None
            and event.HasField("seat")
            and event.seat == knows.seat
            and event.HasField("move")
        ):
            knows.moved(before, event.move)
        check_hidden(Reply(transport, message=event, raw=json_format.MessageToJson(event)), knows)
        if event.kind in (cg.TABLE_EVENT_KIND_MOVED, cg.TABLE_EVENT_KIND_TIMED_OUT):
            assert event.HasField("move") and event.HasField("seat")
            assert "card" not in json_format.MessageToDict(event.move)  # a move names positions, never a card
        before = event.table


# -- the tests -------------------------------------------------------------------------------------------------------
def test_watchers_that_hang_up_mid_match_resume_without_losing_or_repeating_an_event(
    clients: list[Client], transport: str
) -> None:
    ann_client, bob_client, _ = clients
    ann = Tables(ann_client)
    made = _table(ann.create(preset="six-card", seats=3, holes=2))
    for level in (cg.BOT_LEVEL_GREEDY, cg.BOT_LEVEL_RANDOM):
        _table(ann.add_bot(made.id, level))
    spectator = watch(bob_client, made.id)  # a snapshot first
    seated = watch(ann_client, made.id, after_seq=0)  # the whole log
    snapshot = spectator.next()
    assert snapshot.event is not None and snapshot.event.kind == cg.TABLE_EVENT_KIND_SNAPSHOT
    assert snapshot.seq == 3 and not snapshot.event.table.HasField("your_seat")
    bob_events, ann_events = [snapshot.event], []
    table = _table(ann.start(made.id))
    rng = random.Random(transport)
    moves = 0

    def play(count: int) -> None:
        nonlocal table, moves
        for _ in range(count):
            if table.status != PLAYING:
                return
            table = _table(ann.act(table.id, rng.choice(list(table.legal_moves)), expected_version=table.version))
            moves += 1

    play(6)
    bob_events += read_until(spectator, table.version)
    ann_events += read_until(seated, table.version)
    # Both hang up; the match goes on without them.
    spectator.close()
    seated.close()
    play(8)
    # They come back: the spectator as a browser's EventSource does (Last-Event-ID), the player with afterSeq.
    if isinstance(bob_client, Rest):
        spectator = SseWatch(bob_client, made.id, last_event_id=str(bob_events[-1].seq))
    else:
        spectator = watch(bob_client, made.id, after_seq=bob_events[-1].seq)
    seated = watch(ann_client, made.id, after_seq=ann_events[-1].seq)
    while table.status == PLAYING:
        play(5)
        bob_events += read_until(spectator, table.version)
        ann_events += read_until(seated, table.version)
    # The match is over: each stream ends after its last event (nothing but heartbeats may come before).
    for stream in (spectator, seated):
        rest = read_to_end(stream)
        assert all(i.kind == "heartbeat" for i in rest), rest
        stream.close()

    final = table.version
    assert moves > 10 and table.status == OVER
    assert [e.seq for e in ann_events] == list(range(1, final + 1))
    assert [e.seq for e in bob_events] == list(range(3, final + 1))
    assert [e.kind for e in ann_events[:4]] == [
        cg.TABLE_EVENT_KIND_SEAT_JOINED,
        cg.TABLE_EVENT_KIND_BOT_ADDED,
        cg.TABLE_EVENT_KIND_BOT_ADDED,
        cg.TABLE_EVENT_KIND_STARTED,
    ]
    assert ann_events[1].bot == cg.BOT_LEVEL_GREEDY and ann_events[1].seat == 1
    check_stream(ann_events, Knowledge(0), transport)
    check_stream(bob_events, Knowledge(None), transport)
    # The last table of each stream is the table GetTable gives that viewer.
    assert ann_events[-1].table == _table(ann.get(made.id))
    assert bob_events[-1].table == _table(Tables(bob_client).get(made.id))
    assert ann_events[-1].table.status == OVER and ann_events[-1].table.your_seat == 0


def test_refusals_come_before_the_stream_as_the_usual_errors(clients: list[Client], transport: str) -> None:
    ann_client, bob_client, _ = clients
    ann = Tables(ann_client)
    private = _table(ann.create(preset="six-card", seats=2, private=True))

    def refused(client: Client, table_id: str, reason: int, **kw: Any) -> None:
        stream = watch(client, table_id, **kw)
        if isinstance(stream, SseWatch):
            assert isinstance(client, Rest)
            reply = stream.refusal(client)
            stream.close()
        else:
            with pytest.raises(grpc.RpcError) as err:
                stream.next()
            reply = Grpc.error_reply(err.value)
        reply.expect_error(reason)

    refused(bob_client, "no-such-table", R.ERROR_REASON_NOT_FOUND)
    refused(bob_client, private.id, R.ERROR_REASON_NOT_FOUND)  # private: as if it did not exist
    refused(bob_client, private.id, R.ERROR_REASON_NOT_FOUND, join_code="WRONGX")
    refused(ann_client, private.id, R.ERROR_REASON_INVALID_ARGUMENT, after_seq=private.version + 1)
    refused(ann_client, "x" * 65, R.ERROR_REASON_INVALID_ARGUMENT)  # the contract's max_len
    token = bob_client.token
    bob_client.use_token(None)
    try:
        refused(bob_client, private.id, R.ERROR_REASON_UNAUTHENTICATED, join_code=private.join_code)
    finally:
        bob_client.use_token(token)
    # With the code, the stream is there (its first message: a snapshot without the code, which is the host's).
    ok = watch(bob_client, private.id, join_code=private.join_code)
    first = ok.next()
    ok.close()
    assert first.event is not None and first.event.kind == cg.TABLE_EVENT_KIND_SNAPSHOT
    assert first.event.table.join_code == "" and not first.event.table.HasField("your_seat")
    host = watch(ann_client, private.id)
    mine = host.next()
    host.close()
    assert mine.event is not None and mine.event.table.join_code == private.join_code


def test_a_bad_last_event_id_is_refused_and_the_header_wins_over_the_query(live: LiveServer) -> None:
    client = Rest(live.http_url)
    try:
        ann = Tables(client)
        made = _table(ann.create(preset="six-card", seats=2))
        for wrong in ("not-a-number", "", "1.0", "-1", "9" * 19):
            bad = SseWatch(client, made.id, last_event_id=wrong)
            assert bad.refusal(client).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "Last-Event-ID"
            bad.close()
        _table(ann.add_bot(made.id, cg.BOT_LEVEL_GREEDY))
        both = SseWatch(client, made.id, after_seq=0, last_event_id="1")
        first = both.next()
        both.close()
        assert first.event is not None and first.seq == 2 and both.retry == 1000
    finally:
        client.close()


def test_a_finished_match_with_nothing_more_is_204_or_an_empty_stream(clients: list[Client]) -> None:
    ann_client = clients[0]
    ann = Tables(ann_client)
    made = _table(ann.create(preset="six-card", seats=2, holes=1))
    _table(ann.add_bot(made.id, cg.BOT_LEVEL_RANDOM))
    _table(ann.start(made.id))
    over = _table(ann.resign(made.id))  # the last person leaves: the match is over
    assert over.status == OVER and over.match_end == cg.MATCH_END_ABANDONED
    done = watch(ann_client, made.id, after_seq=over.version)
    if isinstance(done, SseWatch):
        assert done.status == 204
    assert read_to_end(done) == []
    done.close()
    late = watch(ann_client, made.id, after_seq=over.version - 3)
    items = read_to_end(late)
    late.close()
    assert [i.seq for i in items] == [over.version - 2, over.version - 1, over.version]
    snap = watch(ann_client, made.id)
    (only,) = read_to_end(snap)
    snap.close()
    assert only.event is not None and only.event.kind == cg.TABLE_EVENT_KIND_SNAPSHOT and only.seq == over.version


def _subscribers(live: LiveServer) -> float:
    text = httpx.get(f"{live.http_url}/metrics", timeout=10).text
    (line,) = [x for x in text.splitlines() if x.startswith("golf_event_subscribers ")]
    return float(line.split()[1])


def test_heartbeats_keep_an_idle_stream_alive_and_the_gauge_counts_streams(live: LiveServer, transport: str) -> None:
    client = new_client(live, transport)  # type: ignore[arg-type]
    try:
        made = _table(Tables(client).create(preset="six-card", seats=2))
        before = _subscribers(live)
        one, two = watch(client, made.id, after_seq=made.version), watch(client, made.id, after_seq=made.version)
        started = time.monotonic()
        assert [one.next().kind, two.next().kind] == ["heartbeat", "heartbeat"]  # at once: the stream is there
        beat = one.next()
        assert beat.kind == "heartbeat" and beat.seq == made.version
        assert HEARTBEAT_SECONDS * 0.5 <= time.monotonic() - started <= HEARTBEAT_SECONDS * 5
        assert _subscribers(live) == before + 2
        one.close()
        two.close()
        deadline = time.monotonic() + 10
        while _subscribers(live) != before:  # the server notices the hang-ups: at once over SSE, soon over gRPC
            assert time.monotonic() < deadline, "the streams of clients that hung up are still counted"
            time.sleep(0.05)
    finally:
        client.close()


def test_the_openapi_document_shows_the_event_stream(live: LiveServer) -> None:
    doc = httpx.get(f"{live.http_url}/openapi.json", timeout=10).json()
    op = doc["paths"]["/v1/tables/{tableId}/events"]["get"]
    assert op["operationId"] == "WatchTable"
    content = op["responses"]["200"]["content"]
    assert list(content) == ["text/event-stream"]
    event = content["text/event-stream"]["schema"]  # one event, as OpenAPI 3.1 tools read an event stream's schema
    kinds = {b["properties"]["event"]["const"]: b["properties"]["data"]["contentSchema"] for b in event["oneOf"]}
    assert {name: ref["$ref"].rsplit("/", 1)[-1] for name, ref in kinds.items()} == {
        "table": "golf.v1.TableEvent",
        "heartbeat": "golf.v1.Heartbeat",
        "error": "golf.v1.Error",
    }
    assert "204" in op["responses"] and "404" in op["responses"]
    names = {(p["name"], p["in"]) for p in op["parameters"]}
    assert {("tableId", "path"), ("afterSeq", "query"), ("joinCode", "query"), ("Last-Event-ID", "header")} <= names
    assert "golf.v1.TableEvent" in doc["components"]["schemas"]


def test_stopping_the_server_ends_every_stream_so_clients_reconnect_elsewhere(database_url: str) -> None:
    """A server that stops ends its streams at once (it does not wait for clients to leave): gRPC with UNAVAILABLE
    and a retry delay, SSE with a last ``event: error`` of the same ``Error`` after a ``retry``."""
    migrate(database_url)
    server = LiveServer(database_url).start()
    rest, rpc = Rest(server.http_url), Grpc(server.grpc_target)
    try:
        made = _table(Tables(rest).create(preset="six-card", seats=2))
        sse, stream = SseWatch(rest, made.id, after_seq=made.version), GrpcWatch(rpc, made.id, made.version)
        assert sse.next().kind == stream.next().kind == "heartbeat"
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 10
        (end,) = read_to_end(sse)
        assert end.kind == "error" and end.error is not None and end.error["reason"] == "ERROR_REASON_UNAVAILABLE"
        assert sse.retry == 1000
        with pytest.raises(grpc.RpcError) as err:
            read_to_end(stream)
        reply = Grpc.error_reply(err.value)
        reply.expect_error(R.ERROR_REASON_UNAVAILABLE)
        assert reply.retry_delay() == 1.0
    finally:
        rest.close()
        rpc.close()
        server.stop()
