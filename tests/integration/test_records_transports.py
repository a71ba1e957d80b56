"""``ExportRecords`` over both transports in process, on SQLite and PostgreSQL: REST streams newline-delimited JSON
(one ``Record`` per line) and gRPC a stream of ``ExportRecordsResponse``, the same records; a refusal before the
first record is an ordinary error, one after it the stream's last line; an empty export is an empty 200; the
OpenAPI document describes the ndjson response; another player's solitaire game on a deal still in play is left
out. (``tests/e2e/test_records_export.py`` does it on real servers.)"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import httpx
import pytest
from google.protobuf import json_format

from golf.adapters.db.record_index import SqlRecordIndex
from golf.adapters.db.repository import Database
from golf.adapters.edge import Edge
from golf.adapters.grpc_server import ERROR_TRAILER, build_grpc_server
from golf.adapters.rest import build_rest_app
from golf.api.export_handlers import ExportHandlers
from golf.app.dealing import DealSettings
from golf.app.errors import StorageUnavailable, Unauthenticated
from golf.app.exports import Exported, Exporter, ExportQuery
from golf.app.identity import Caller
from golf.app.solving import InlineSolver
from golf.bootstrap import build_services
from golf.commands.record_checks import check_record
from golf.v1 import errors_pb2, record_service_pb2_grpc
from golf.v1 import record_service_pb2 as rpb
from tests.finished import Clock, NoLimits, Tokens, finish_game, finish_match

ANN = Caller(str(uuid.UUID(int=11)))
BOB = Caller(str(uuid.UUID(int=12)))
NDJSON = "application/x-ndjson"


class BearerIsPlayer:
    """``Bearer <player id>``: the player (the real tokens are tested in tests/unit/adapters/auth)."""

    async def verify(self, authorization: str | None) -> Caller:
        if not authorization or not authorization.startswith("Bearer "):
            raise Unauthenticated("sign in first", invalid_token=False)
        return Caller(authorization.removeprefix("Bearer "))


class FailsAfterOne(Exporter):
    """An export whose database goes away after its first record."""

    async def export(self, query: ExportQuery) -> AsyncIterator[Exported]:
        async for item in super().export(query):
            yield item
            raise StorageUnavailable("connection lost")


@dataclass
class Transports:
    http: httpx.AsyncClient
    stub: record_service_pb2_grpc.RecordServiceStub
    failing: httpx.AsyncClient
    ids: list[str]


@pytest.fixture
async def transports(migrated_url: str) -> AsyncIterator[Transports]:
    db = Database(migrated_url, pool_size=4)
    services = build_services(db, Clock(), InlineSolver(), DealSettings(pool_size=0), Tokens(), NoLimits())
    game = await finish_game(services, ANN, "transports")
    match = await finish_match(services, ANN, (BOB,), holes=1)
    edge = Edge(BearerIsPlayer(), NoLimits())
    rpcs = ExportHandlers(Exporter(db, SqlRecordIndex(db))).rpcs()
    app = build_rest_app(rpcs, edge)
    failing = build_rest_app(ExportHandlers(FailsAfterOne(db, SqlRecordIndex(db))).rpcs(), edge)
    server, _health, port = build_grpc_server(rpcs, "127.0.0.1:0", edge)
    await server.start()
    try:
        async with (
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://golf") as http,
            httpx.AsyncClient(transport=httpx.ASGITransport(app=failing), base_url="http://golf") as bad,
        ):
            stub = record_service_pb2_grpc.RecordServiceStub(channel)
            yield Transports(http, stub, bad, [game.game.id, match.table_id])
    finally:
        await server.stop(None)
        await db.dispose()


def lines_of(resp: httpx.Response) -> list[dict[str, object]]:
    assert resp.headers["content-type"] == NDJSON, resp.text[:300]
    assert resp.text == "" or resp.text.endswith("\n")
    return [json.loads(line) for line in resp.text.splitlines()]


AUTH = {"authorization": f"Bearer {ANN.player_id}"}
"""Ann, who played both records: her own solitaire game is hers to export at once (``golf.app.reveals``)."""


async def test_rest_and_grpc_give_the_same_records(transports: Transports) -> None:
    resp = await transports.http.get("/v1/records:export", headers=AUTH)
    assert resp.status_code == 200
    rest = []
    for line in lines_of(resp):
        record = rpb.Record()
        json_format.ParseDict(line, record)  # strict: a line is one Record, nothing else
        rest.append(record)
    call = transports.stub.ExportRecords(
        rpb.ExportRecordsRequest(), metadata=(("authorization", AUTH["authorization"]),)
    )
    grpc_records = [reply.record async for reply in call]
    assert [r.id for r in rest] == transports.ids
    assert rest == grpc_records
    for record in rest:
        check_record(record)


async def test_another_players_game_on_a_deal_in_play_is_left_out(transports: Transports) -> None:
    """Bob sees the match he played in, not Ann's game: its deal (a client's seed) may be dealt for good."""
    bob = f"Bearer {BOB.player_id}"
    resp = await transports.http.get("/v1/records:export", headers={"authorization": bob})
    assert [line["id"] for line in lines_of(resp)] == transports.ids[1:] and "transports" not in resp.text
    call = transports.stub.ExportRecords(rpb.ExportRecordsRequest(), metadata=(("authorization", bob),))
    assert [reply.record.id async for reply in call] == transports.ids[1:]


async def test_filters_travel_in_the_query(transports: Transports) -> None:
    params = {"family": "GAME_FAMILY_CARD_GOLF", "playerId": "me", "since": "2000-01-01T00:00:00Z", "max": "5"}
    resp = await transports.http.get("/v1/records:export", params=params, headers=AUTH)
    assert [line["id"] for line in lines_of(resp)] == transports.ids[1:]
    resp = await transports.http.get("/v1/records:export", params={"until": "2000-01-01T00:00:00Z"}, headers=AUTH)
    assert resp.status_code == 200 and resp.text == ""  # nothing matched: no lines


async def test_refusals_before_the_first_record_are_plain_errors(transports: Transports) -> None:
    resp = await transports.http.get("/v1/records:export", params={"max": "100001"}, headers=AUTH)
    assert resp.status_code == 400 and resp.headers["content-type"] == "application/json"
    assert json.loads(resp.text)["field"] == "max"
    resp = await transports.http.get("/v1/records:export")
    assert resp.status_code == 401
    call = transports.stub.ExportRecords(
        rpb.ExportRecordsRequest(max=100_001), metadata=(("authorization", AUTH["authorization"]),)
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        [reply async for reply in call]
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    trailers = dict(caught.value.trailing_metadata() or ())  # type: ignore[arg-type]
    assert errors_pb2.Error.FromString(trailers[ERROR_TRAILER]).field == "max"


async def test_a_failure_after_the_first_record_is_the_last_line(transports: Transports) -> None:
    resp = await transports.failing.get("/v1/records:export", headers=AUTH)
    assert resp.status_code == 200
    first, last = lines_of(resp)
    assert first["id"] == transports.ids[0]
    error = last["error"]
    assert set(last) == {"error"} and isinstance(error, dict) and error["reason"] == "ERROR_REASON_UNAVAILABLE"


async def test_openapi_describes_the_ndjson_stream(transports: Transports) -> None:
    doc = (await transports.http.get("/openapi.json")).json()
    operation = doc["paths"]["/v1/records:export"]["get"]
    content = operation["responses"]["200"]["content"]
    assert list(content) == [NDJSON]
    refs = [s.get("$ref") for s in content[NDJSON]["schema"]["oneOf"]]
    assert "#/components/schemas/golf.v1.Record" in refs and "golf.v1.Record" in doc["components"]["schemas"]
    names = {p["name"] for p in operation["parameters"]}
    assert {"since", "until", "playerId", "preset", "family", "max"} <= names and "Last-Event-ID" not in names
