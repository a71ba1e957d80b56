"""The REST gateway's own refusals, in process: bodies over the limit (refused before they are read), unknown
paths and methods (the ``Error`` shape, ``Allow`` listing every method of the path), the setting, and how far the
largest legitimate body stays under the limit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from starlette.requests import Request

from golf.adapters.edge import Edge
from golf.adapters.rest import build_rest_app, read_body
from golf.adapters.settings import Settings
from golf.api.errors import ApiError
from golf.api.rpc import CallContext, Rpc
from golf.app.dealing import MAX_SEED_LENGTH
from golf.app.idempotency import MAX_KEY_LENGTH
from golf.app.players import MAX_DISPLAY_NAME, MAX_REFRESH_TOKEN
from golf.v1 import errors_pb2, player_service_pb2, solitaire_service_pb2

pb = solitaire_service_pb2
R = errors_pb2.ErrorReason
LIMIT = 1000


class _NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


async def _echo(message: Any, ctx: CallContext) -> Message:
    return pb.CreateGameResponse()


def _rpc(name: str) -> Rpc:
    """The contract's RPC ``name`` (its route from the proto), answered by ``_echo``."""
    return Rpc("golf.v1.SolitaireService", name, getattr(pb, f"{name}Request"), getattr(pb, f"{name}Response"),
               _echo, public=True)  # fmt: skip


RPCS = [_rpc(name) for name in ("CreateGame", "GetGame", "ListGames", "PlayMove", "ListMoves", "Hint")]


def _client() -> httpx.AsyncClient:
    app = build_rest_app(RPCS, Edge(None, _NoLimits()), max_body_bytes=LIMIT)  # type: ignore[arg-type]
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://golf")


def _error(resp: httpx.Response) -> errors_pb2.Error:
    assert resp.headers["content-type"] == "application/json"
    err = errors_pb2.Error()
    json_format.Parse(resp.text, err)
    return err


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/v1/games", "GET, HEAD, POST"),
        ("PUT", "/v1/games/g1/moves", "GET, HEAD, POST"),
        ("PATCH", "/v1/games/g1", "GET, HEAD"),
        # A path variable is one segment before any custom verb (google.api.http): "/v1/games/g1:hint" is Hint's
        # path only, not GetGame's with gameId "g1:hint".
        ("DELETE", "/v1/games/g1:hint", "POST"),
        ("OPTIONS", "/v1/games/g1:hint", "POST"),
        ("POST", "/healthz", "GET"),
        ("DELETE", "/openapi.json", "GET, HEAD"),
    ],
)
async def test_405_is_an_error_body_allowing_every_method_of_the_path(method: str, path: str, allow: str) -> None:
    async with _client() as http:
        resp = await http.request(method, path, headers={"x-request-id": "rid-405"})
    assert resp.status_code == 405
    assert resp.headers["allow"] == allow
    assert resp.headers["x-request-id"] == "rid-405"
    err = _error(resp)
    assert err.reason == R.ERROR_REASON_METHOD_NOT_ALLOWED and method in err.message and allow in err.message


async def test_404_is_an_error_body_and_echoes_little_of_the_path() -> None:
    async with _client() as http:
        resp = await http.get("/v1/nothing/" + "x" * 10_000, headers={"x-request-id": "rid-404"})
        ok = [await http.get(p) for p in ("/healthz", "/readyz", "/openapi.json", "/docs")]
    assert resp.status_code == 404 and resp.headers["x-request-id"] == "rid-404"
    err = _error(resp)
    assert err.reason == R.ERROR_REASON_NOT_FOUND and "/v1/nothing/" in err.message
    assert len(resp.content) < 400
    assert [r.status_code for r in ok] == [200] * 4


async def _chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def test_body_limit_over_rest() -> None:
    async with _client() as http:
        at_limit = await http.post("/v1/games", content=b"{}" + b" " * (LIMIT - 2))
        over = await http.post("/v1/games", content=b"{}" + b" " * (LIMIT - 1), headers={"x-request-id": "rid-413"})
        chunked = await http.post("/v1/games", content=_chunks(b"{}", b" " * LIMIT))
    assert at_limit.status_code == 200, at_limit.text
    for resp in (over, chunked):
        assert resp.status_code == 413
        assert resp.headers["connection"] == "close"
        assert _error(resp).reason == R.ERROR_REASON_PAYLOAD_TOO_LARGE
    assert over.headers["x-request-id"] == "rid-413"


def _request(headers: dict[str, str], chunks: list[bytes]) -> tuple[Request, list[int]]:
    """A request whose body arrives in ``chunks``; the list counts the chunks the app took."""
    taken = [0]

    async def receive() -> dict[str, Any]:
        i = taken[0]
        taken[0] += 1
        return {"type": "http.request", "body": chunks[i], "more_body": i + 1 < len(chunks)}

    raw = [(k.encode(), v.encode()) for k, v in headers.items()]
    scope = {"type": "http", "method": "POST", "path": "/", "headers": raw}
    return Request(scope, receive), taken


async def _refused(call: Callable[[], Awaitable[bytes]]) -> errors_pb2.Error:
    with pytest.raises(ApiError) as err:
        await call()
    assert err.value.http_status == 413
    return err.value.body


async def test_a_declared_length_over_the_limit_is_refused_without_reading() -> None:
    request, taken = _request({"content-length": str(500 * 2**20)}, [b"{}"] * 3)
    body = await _refused(lambda: read_body(request, LIMIT))
    assert body.reason == R.ERROR_REASON_PAYLOAD_TOO_LARGE and str(LIMIT) in body.message
    assert taken == [0]


async def test_a_stream_is_read_only_until_it_passes_the_limit() -> None:
    chunks = [b"x" * 300] * 10_000  # 3 MB, chunked (no Content-Length)
    request, taken = _request({}, chunks)
    await _refused(lambda: read_body(request, LIMIT))
    assert taken == [4]  # 1,200 bytes: over 1,000 at the fourth chunk, nothing read after it
    # A Content-Length that understates the body does not let more through.
    request, taken = _request({"content-length": "10"}, chunks)
    await _refused(lambda: read_body(request, LIMIT))
    assert taken == [4]
    request, _ = _request({}, [b"x" * 500, b"y" * 500, b""])
    assert await read_body(request, LIMIT) == b"x" * 500 + b"y" * 500


def test_the_limit_is_a_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().max_body_bytes == 64 * 1024
    monkeypatch.setenv("GOLF_MAX_BODY_BYTES", "4096")
    assert Settings().max_body_bytes == 4096
    monkeypatch.setenv("GOLF_MAX_BODY_BYTES", "0")
    with pytest.raises(ValueError):
        Settings()


# The longest each string of a request may be (longer ones are refused by the use cases); ids are UUIDs,
# card codes two or three characters, times RFC 3339.
_LONGEST = {
    "seed": MAX_SEED_LENGTH,
    "idempotencyKey": MAX_KEY_LENGTH,
    "displayName": MAX_DISPLAY_NAME,
    "refreshToken": MAX_REFRESH_TOKEN,
    "pageToken": 200,
    "preset": len("queens-on-kings"),
    "code": 3,
    "date": len("2026-11-29"),
}


def _largest(desc: Any) -> dict[str, Any]:
    """Every field of ``desc`` set at its widest: strings at their longest in 4-byte characters, which JSON may
    write as 12-byte escapes."""
    F = FieldDescriptor
    out: dict[str, Any] = {}
    for f in desc.fields:
        if f.type == F.TYPE_MESSAGE and f.message_type.full_name == "google.protobuf.Timestamp":
            value: Any = "2026-11-29T12:00:00.123456789+00:00"
        elif f.type == F.TYPE_MESSAGE:
            value = _largest(f.message_type)
        elif f.type == F.TYPE_ENUM:
            value = max((v.name for v in f.enum_type.values), key=len)
        elif f.type == F.TYPE_STRING:
            value = "\U0001f600" * _LONGEST.get(f.json_name, 36)
        elif f.type == F.TYPE_BOOL:
            value = False
        elif f.type in (F.TYPE_INT64, F.TYPE_UINT64, F.TYPE_SINT64):
            value = str(-(2**63))
        else:
            value = -(2**31)
        out[f.json_name] = [value] if f.is_repeated else value
    return out


def test_the_largest_legitimate_body_is_far_under_the_default_limit() -> None:
    posts = [
        pb.CreateDealRequest, pb.CreateGameRequest, pb.PlayMoveRequest, pb.HintRequest, pb.UndoRequest,
        pb.AutoPlayRequest, pb.CreateRoundRequest, pb.StartNextHoleRequest, player_service_pb2.CreateGuestRequest,
        player_service_pb2.RefreshTokenRequest, player_service_pb2.RevokeTokenRequest,
    ]  # fmt: skip
    sizes = {m.DESCRIPTOR.name: len(json.dumps(_largest(m.DESCRIPTOR), indent=2)) for m in posts}
    assert max(sizes.values()) < 4096, sizes
    assert 16 * max(sizes.values()) < Settings().max_body_bytes


def test_openapi_documents_405_everywhere_and_413_on_bodies() -> None:
    app = build_rest_app(RPCS, Edge(None, _NoLimits()), max_body_bytes=LIMIT)  # type: ignore[arg-type]
    paths = app.openapi()["paths"]
    for rpc in RPCS:
        responses = paths[rpc.http_path][rpc.http_method.lower()]["responses"]
        assert "Allow" in responses["405"]["headers"]
        expected = {"405", "413"} if rpc.http_method == "POST" else {"405"}
        assert expected <= set(responses) and ("413" in responses) == (rpc.http_method == "POST")
        for status in expected:
            schema = responses[status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/golf.v1.Error"}
