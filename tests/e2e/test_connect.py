"""The Connect protocol and gRPC-Web on the HTTP port, on both databases, over real sockets: unary calls in JSON and
binary protobuf (plain httpx speaking Connect), a refusal with the Connect code and the same details as the gRPC
status, a call without a token refused, a unary gRPC-Web call, and ``WatchTable`` as a Connect server stream read by
connectrpc's own client and as a gRPC-Web stream read frame by frame (the snapshot, then a later event)."""

from __future__ import annotations

import asyncio
import base64
import struct
from typing import Any, TypeVar

import httpx
from connectrpc.client import ConnectClient
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from google.protobuf import json_format
from google.protobuf.message import Message

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import errors_pb2, player_service_pb2
from golf.v1 import solitaire_service_pb2 as pb
from golf.v1 import table_service_pb2 as tpb
from tests.e2e.support import Grpc, Server, choose_move, metric_sum, move_request, new_key

M = TypeVar("M", bound=Message)
SOLITAIRE, PLAYERS, TABLES = "golf.v1.SolitaireService", "golf.v1.PlayerService", "golf.v1.TableService"


class Connect:
    """Unary calls in the Connect protocol with httpx: ``binary`` sends ``application/proto``, else JSON."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30)
        self.token = ""

    def post(self, service: str, method: str, req: Message, binary: bool = False, token: bool = True) -> httpx.Response:
        headers = {"connect-protocol-version": "1"}
        if token and self.token:
            headers["authorization"] = f"Bearer {self.token}"
        if binary:
            headers["content-type"] = "application/proto"
            body = req.SerializeToString()
        else:
            headers["content-type"] = "application/json"
            body = json_format.MessageToJson(req).encode()
        return self.http.post(f"/{service}/{method}", content=body, headers=headers)

    def call(self, service: str, method: str, req: Message, response: type[M], binary: bool = False) -> M:
        reply = self.post(service, method, req, binary)
        assert reply.status_code == 200, reply.text
        if binary:
            assert reply.headers["content-type"] == "application/proto"
            return response.FromString(reply.content)
        assert reply.headers["content-type"] == "application/json"
        return json_format.Parse(reply.content, response())

    def sign_in(self, name: str) -> player_service_pb2.CreateGuestResponse:
        req = player_service_pb2.CreateGuestRequest(display_name=name)
        guest = self.call(PLAYERS, "CreateGuest", req, player_service_pb2.CreateGuestResponse)
        self.token = guest.credentials.access_token
        return guest


def _details(body: dict[str, Any]) -> list[tuple[str, bytes]]:
    """A Connect error's details as (type, bytes)."""
    return [(d["type"], base64.b64decode(d["value"] + "===")) for d in body.get("details", [])]


def _grpc_details(reply: Any) -> list[tuple[str, bytes]]:
    return [(d.type_url.removeprefix("type.googleapis.com/"), d.value) for d in reply.status.details]


def test_a_guest_signs_in_and_plays_a_move_over_connect_json_and_binary(server: Server) -> None:
    client = Connect(server.http_url)
    guest = client.sign_in("connect")
    assert guest.player.id and client.token
    req = pb.CreateGameRequest(preset="standard", winnable_only=False)
    game = client.call(SOLITAIRE, "CreateGame", req, pb.CreateGameResponse, binary=True).game
    move = move_request(game, choose_move(game), expected=game.version)
    played = client.call(SOLITAIRE, "PlayMove", move, pb.PlayMoveResponse).game
    assert played.version == game.version + 1
    again = client.call(SOLITAIRE, "GetGame", pb.GetGameRequest(game_id=game.id), pb.GetGameResponse, binary=True)
    assert again.game.version == played.version and again.game.id == game.id


def test_refusals_carry_the_connect_code_and_the_details_of_the_grpc_status(server: Server) -> None:
    client = Connect(server.http_url)
    client.sign_in("connect-errors")
    grpc_client = Grpc(server.grpc_target, sign_in=False)
    grpc_client.use_token(client.token)
    try:
        cases = [
            (pb.GetGameRequest(game_id="no-such-game"), "not_found", 404),
            (pb.GetGameRequest(), "invalid_argument", 400),
        ]
        for req, code, http_status in cases:
            for binary in (False, True):
                reply = client.post(SOLITAIRE, "GetGame", req, binary=binary)
                assert reply.status_code == http_status, reply.text
                assert reply.headers["content-type"] == "application/json"  # Connect's errors are JSON either way
                body = reply.json()
                assert body["code"] == code
                got = _details(body)
                assert got[-1][0] == "golf.v1.Error"
                error = errors_pb2.Error.FromString(got[-1][1])
                assert error.status == code.upper() and body["message"] == error.message
                assert reply.headers["x-request-id"]
                over_grpc = grpc_client.get_game(req.game_id)
                assert over_grpc.grpc_code is not None and over_grpc.grpc_code.name == code.upper()
                assert got == _grpc_details(over_grpc)
        # A body that is no request at all: refused with the same Error as the other transports give.
        bad = client.http.post(
            f"/{SOLITAIRE}/GetGame",
            content=b"\xff\xff\xff",
            headers={"content-type": "application/proto", "authorization": f"Bearer {client.token}"},
        )
        assert bad.status_code == 400 and bad.json()["code"] == "invalid_argument", bad.text
        assert _details(bad.json())[-1][0] == "golf.v1.Error"
    finally:
        grpc_client.close()


def test_a_key_given_twice_is_refused_naming_it(server: Server) -> None:
    """``{"preset": "wrap", "preset": "standard"}`` is no request (json_format refuses it): 400 naming the key, at
    any depth, never a game of either preset."""
    client = Connect(server.http_url)
    client.sign_in("connect-twice")
    headers = {"content-type": "application/json", "authorization": f"Bearer {client.token}"}
    for body, field in (
        (b'{"preset": "wrap", "winnableOnly": false, "preset": "standard"}', "preset"),
        (b'{"preset": "standard", "rules": {"wrap": true, "wrap": false}}', "rules.wrap"),
    ):
        reply = client.http.post(f"/{SOLITAIRE}/CreateGame", content=body, headers=headers)
        assert reply.status_code == 400 and reply.json()["code"] == "invalid_argument", reply.text
        error = errors_pb2.Error.FromString(_details(reply.json())[-1][1])
        assert error.field == field and "twice" in error.message, error
    listed = client.call(SOLITAIRE, "ListGames", pb.ListGamesRequest(), pb.ListGamesResponse)
    assert not listed.games


def test_a_call_without_a_token_is_refused(server: Server) -> None:
    client = Connect(server.http_url)
    reply = client.post(SOLITAIRE, "ListGames", pb.ListGamesRequest())
    assert reply.status_code == 401, reply.text
    body = reply.json()
    assert body["code"] == "unauthenticated"
    assert errors_pb2.Error.FromString(_details(body)[-1][1]).status == "UNAUTHENTICATED"
    assert reply.headers["www-authenticate"].startswith("Bearer")


def _grpc_web_frames(data: bytes) -> tuple[list[bytes], dict[str, str]]:
    """A gRPC-Web response body: its messages and its trailers (the frame flagged 0x80)."""
    messages, trailers, at = [], {}, 0
    while at < len(data):
        flags, size = struct.unpack(">BI", data[at : at + 5])
        frame = data[at + 5 : at + 5 + size]
        at += 5 + size
        if flags & 0x80:
            for line in frame.decode().split("\r\n"):
                if line:
                    key, _, value = line.partition(":")
                    trailers[key.strip().lower()] = value.strip()
        else:
            messages.append(frame)
    return messages, trailers


def test_a_unary_call_over_grpc_web(server: Server) -> None:
    client = Connect(server.http_url)
    guest = client.sign_in("grpc-web")
    req = player_service_pb2.GetPlayerRequest(player_id=guest.player.id).SerializeToString()
    headers = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
    reply = client.http.post(
        f"/{PLAYERS}/GetPlayer",
        content=struct.pack(">BI", 0, len(req)) + req,
        headers={**headers, "authorization": f"Bearer {client.token}"},
    )
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/grpc-web+proto"
    messages, trailers = _grpc_web_frames(reply.content)
    assert trailers["grpc-status"] == "0", trailers
    assert player_service_pb2.GetPlayerResponse.FromString(messages[0]).player.id == guest.player.id
    # Refused without a token: the gRPC status, with the rich details, as the gRPC port sends it.
    refused = client.http.post(f"/{PLAYERS}/GetPlayer", content=struct.pack(">BI", 0, len(req)) + req, headers=headers)
    _, trailers = _grpc_web_frames(refused.content) if refused.content else ({}, dict(refused.headers))
    assert trailers["grpc-status"] == "16" and trailers["grpc-status-details-bin"], trailers


def test_watch_table_is_a_connect_server_stream(server: Server) -> None:
    client = Connect(server.http_url)
    client.sign_in("watcher")
    table = client.call(TABLES, "CreateTable", tpb.CreateTableRequest(seats=2), tpb.CreateTableResponse).table
    watch: MethodInfo[tpb.WatchTableRequest, tpb.WatchTableResponse] = MethodInfo(
        name="WatchTable",
        service_name=TABLES,
        input=tpb.WatchTableRequest,
        output=tpb.WatchTableResponse,
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=StreamType.SERVER_STREAM,
    )

    async def events() -> list[tpb.WatchTableResponse]:
        got: list[tpb.WatchTableResponse] = []
        async with ConnectClient(server.http_url, codec=google_protobuf_binary_codec(), timeout_ms=20_000) as conn:
            stream = conn.execute_server_stream(
                request=tpb.WatchTableRequest(table_id=table.id),
                method=watch,
                headers={"authorization": f"Bearer {client.token}"},
            )
            async for message in stream:
                if message.WhichOneof("kind") != "event":
                    continue  # a heartbeat
                got.append(message)
                if len(got) == 1:  # the snapshot is here: make the next event
                    level = cg.BOT_LEVEL_RANDOM
                    req = tpb.AddBotRequest(table_id=table.id, level=level, idempotency_key=new_key())
                    await asyncio.to_thread(client.call, TABLES, "AddBot", req, tpb.AddBotResponse)
                else:
                    break
            await stream.aclose()  # type: ignore[attr-defined]
        return got

    snapshot, later = asyncio.run(asyncio.wait_for(events(), 20))
    assert snapshot.event.kind == cg.TABLE_EVENT_KIND_SNAPSHOT and snapshot.event.table.id == table.id
    assert later.event.kind == cg.TABLE_EVENT_KIND_BOT_ADDED and later.event.seq > snapshot.event.seq


def test_watch_table_is_a_grpc_web_server_stream(server: Server) -> None:
    """The stream a browser's gRPC-Web client reads: length-prefixed frames, one event per message, as they happen."""
    client = Connect(server.http_url)
    client.sign_in("grpc-web watcher")
    table = client.call(TABLES, "CreateTable", tpb.CreateTableRequest(seats=2), tpb.CreateTableResponse).table
    req = tpb.WatchTableRequest(table_id=table.id).SerializeToString()
    headers = {
        "content-type": "application/grpc-web+proto",
        "x-grpc-web": "1",
        "authorization": f"Bearer {client.token}",
    }
    events: list[tpb.WatchTableResponse] = []
    buffer = b""
    with client.http.stream(
        "POST", f"/{TABLES}/WatchTable", content=struct.pack(">BI", 0, len(req)) + req, headers=headers
    ) as reply:
        assert reply.status_code == 200 and reply.headers["content-type"] == "application/grpc-web+proto"
        for chunk in reply.iter_raw():
            buffer += chunk
            while len(buffer) >= 5 and len(buffer) >= 5 + struct.unpack(">BI", buffer[:5])[1]:
                flags, size = struct.unpack(">BI", buffer[:5])
                frame, buffer = buffer[5 : 5 + size], buffer[5 + size :]
                assert not flags & 0x80, f"the stream ended: {frame!r}"
                message = tpb.WatchTableResponse.FromString(frame)
                if message.WhichOneof("kind") == "event":
                    events.append(message)
                    if len(events) == 1:  # the snapshot is here: make the next event
                        add = tpb.AddBotRequest(table_id=table.id, level=cg.BOT_LEVEL_RANDOM, idempotency_key=new_key())
                        client.call(TABLES, "AddBot", add, tpb.AddBotResponse)
            if len(events) == 2:
                break
    snapshot, later = events
    assert snapshot.event.kind == cg.TABLE_EVENT_KIND_SNAPSHOT and snapshot.event.table.id == table.id
    assert later.event.kind == cg.TABLE_EVENT_KIND_BOT_ADDED and later.event.seq > snapshot.event.seq


def test_connect_calls_are_counted_by_method_and_code(server: Server) -> None:
    client = Connect(server.http_url)
    client.sign_in("counted")
    game = client.call(SOLITAIRE, "CreateGame", pb.CreateGameRequest(winnable_only=False), pb.CreateGameResponse).game
    ok = {"method": "GetGame", "code": "OK"}
    missing = {"method": "GetGame", "code": "NOT_FOUND"}
    before = [metric_sum(server, "golf_connect_requests_total", **labels) for labels in (ok, missing)]
    timed = metric_sum(server, "golf_connect_request_duration_seconds_count", method="GetGame")
    over_grpc = metric_sum(server, "golf_grpc_requests_total", method="GetGame")
    client.call(SOLITAIRE, "GetGame", pb.GetGameRequest(game_id=game.id), pb.GetGameResponse, binary=True)
    client.call(SOLITAIRE, "GetGame", pb.GetGameRequest(game_id=game.id), pb.GetGameResponse)
    assert client.post(SOLITAIRE, "GetGame", pb.GetGameRequest(game_id="no-such-game")).status_code == 404
    after = [metric_sum(server, "golf_connect_requests_total", **labels) for labels in (ok, missing)]
    assert [a - b for a, b in zip(after, before, strict=True)] == [2, 1]
    assert metric_sum(server, "golf_connect_request_duration_seconds_count", method="GetGame") == timed + 3
    # Not counted as gRPC calls: those are the gRPC port's.
    assert metric_sum(server, "golf_grpc_requests_total", method="GetGame") == over_grpc
