"""The gRPC transport's own guarantees, whatever the handlers do: a refusal's details and trailers stay small, and
a request that cannot be decoded reaches the handler as a refusal, not as an exception of the server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import grpc
import pytest
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from golf.adapters.edge import Edge
from golf.adapters.grpc_server import ERROR_TRAILER, MAX_DETAILS, STATUS_TRAILER, build_grpc_server
from golf.api.errors import ApiError, Violation, invalid
from golf.api.rpc import CallContext, Rpc
from golf.app.errors import NotFound, StorageUnavailable
from golf.app.identity import Caller
from golf.v1 import errors_pb2, solitaire_service_pb2

pb = solitaire_service_pb2
R = errors_pb2.ErrorReason
SERVICE = "golf.v1.SolitaireService"
HUGE = "é" * (3 * 1024 * 1024 // 2)


class _Anyone:
    async def verify(self, authorization: str | None) -> Caller:
        raise AssertionError("only public RPCs here")


class _NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


async def _echo_huge_not_found(request: Any, ctx: CallContext) -> Message:
    raise NotFound(f"no game {HUGE!r}")  # (ids longer than 64 characters are refused before any handler)


async def _huge_field(request: Any, ctx: CallContext) -> Message:
    raise invalid("x" * 100_000, HUGE)


async def _many_violations(request: Any, ctx: CallContext) -> Message:
    broken = [Violation(f"f{i}" + "é" * 300, HUGE[:5000], "rule") for i in range(100)]
    raise invalid(broken[0].field, "; ".join(v.description for v in broken), broken)


async def _database_down(request: Any, ctx: CallContext) -> Message:
    raise StorageUnavailable("connection refused")


async def _fine(request: Any, ctx: CallContext) -> Message:
    return pb.GetGameResponse()


def _rpc(name: str, handler: Any) -> Rpc:
    return Rpc(SERVICE, name, getattr(pb, f"{name}Request"), getattr(pb, f"{name}Response"), handler, public=True)


@pytest.fixture
async def channel() -> AsyncIterator[grpc.aio.Channel]:
    rpcs = [
        _rpc("GetGame", _echo_huge_not_found),
        _rpc("GetRound", _huge_field),
        _rpc("ListGames", _database_down),
        _rpc("GetDeal", _fine),
        _rpc("ListRounds", _many_violations),
    ]
    server, _health, port = build_grpc_server(rpcs, "127.0.0.1:0", Edge(_Anyone(), _NoLimits()))
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as chan:
            yield chan
    finally:
        await server.stop(None)


async def _refusal(channel: grpc.aio.Channel, method: str, data: bytes) -> tuple[grpc.aio.AioRpcError, Any]:
    call = channel.unary_unary(f"/{SERVICE}/{method}", request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call(data, timeout=30)
    err = info.value
    trailers: dict[str, Any] = dict(err.trailing_metadata() or ())  # type: ignore[arg-type]
    return err, trailers


def _check_small(err: grpc.aio.AioRpcError, trailers: dict[str, Any]) -> errors_pb2.Error:
    details = err.details() or ""
    assert len(details.encode()) <= MAX_DETAILS
    body = errors_pb2.Error.FromString(trailers[ERROR_TRAILER])
    status = status_pb2.Status.FromString(trailers[STATUS_TRAILER])
    assert body.message == status.message == details
    # The status repeats the message in its details (ErrorInfo, BadRequest, the Error): still far below the 8 KiB
    # of metadata a gRPC client takes by default.
    assert len(trailers[ERROR_TRAILER]) < 2 * MAX_DETAILS and len(trailers[STATUS_TRAILER]) < 6 * MAX_DETAILS
    # All of it on the wire (binary values in base64, the message percent-encoded in grpc-message): far from the
    # 8 KiB past which gRPC clients start refusing calls at random.
    wire = len(quote(details, safe="")) + sum(len(k) + len(v) * 4 // 3 for k, v in trailers.items())
    assert wire < 6 * 1024, wire
    return body


async def test_a_message_echoing_megabytes_is_cut_to_a_short_prefix(channel: grpc.aio.Channel) -> None:
    request = pb.GetGameRequest(game_id="g1").SerializeToString()
    err, trailers = await _refusal(channel, "GetGame", request)
    assert err.code() == grpc.StatusCode.NOT_FOUND, (err.details() or "")[:200]
    body = _check_small(err, trailers)
    assert body.reason == R.ERROR_REASON_NOT_FOUND
    assert body.message.startswith("no game 'éé") and body.message.endswith("…")


async def test_any_number_of_violations_of_any_length_is_cut_too(channel: grpc.aio.Channel) -> None:
    err, trailers = await _refusal(channel, "ListRounds", pb.ListRoundsRequest().SerializeToString())
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    _check_small(err, trailers)
    status = status_pb2.Status.FromString(trailers[STATUS_TRAILER])
    (packed,) = [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    bad_request = error_details_pb2.BadRequest()
    packed.Unpack(bad_request)
    assert 0 < len(bad_request.field_violations) < 100


async def test_a_field_of_any_length_is_cut_too(channel: grpc.aio.Channel) -> None:
    err, trailers = await _refusal(channel, "GetRound", pb.GetRoundRequest(round_id="r1").SerializeToString())
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    body = _check_small(err, trailers)
    assert 0 < len(body.field) <= 256


@pytest.mark.parametrize("data", [b"\xff\xff\xff", b"\x0a\x05ab", b"\x0a\x02\xc3\x28"])
async def test_undecodable_bytes_are_invalid_argument(channel: grpc.aio.Channel, data: bytes) -> None:
    err, trailers = await _refusal(channel, "GetDeal", data)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, err.details()
    body = _check_small(err, trailers)
    assert body.reason == R.ERROR_REASON_INVALID_ARGUMENT
    assert body.message == "the request is not a valid golf.v1.GetDealRequest"


async def test_the_database_out_of_reach_is_unavailable_with_retry_info(channel: grpc.aio.Channel) -> None:
    err, trailers = await _refusal(channel, "ListGames", b"")
    assert err.code() == grpc.StatusCode.UNAVAILABLE
    body = _check_small(err, trailers)
    assert body.reason == R.ERROR_REASON_UNAVAILABLE and body.retry_delay.seconds == 2
    assert "connection refused" not in body.message  # the reason is for the log, not for clients
    status = status_pb2.Status.FromString(trailers[STATUS_TRAILER])
    retry = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
    assert len(retry) == 1


async def test_valid_requests_still_pass(channel: grpc.aio.Channel) -> None:
    call = channel.unary_unary(f"/{SERVICE}/GetDeal", request_serializer=None, response_deserializer=None)
    assert await call(pb.GetGameRequest(game_id="g").SerializeToString(), timeout=30) == b""


def test_api_error_keeps_its_http_parts_when_cut() -> None:
    from golf.adapters.grpc_server import _bounded

    failure = ApiError(
        errors_pb2.Error(reason=R.ERROR_REASON_RATE_LIMITED, message="m" * 5000),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        429,
        retry_after=1.5,
    )
    cut = _bounded(failure)
    assert cut is not failure and failure.body.message == "m" * 5000  # the original is left alone
    assert len(cut.body.message.encode()) <= MAX_DETAILS and cut.retry_after == 1.5 and cut.http_status == 429
    short = ApiError(errors_pb2.Error(message="short"), grpc.StatusCode.NOT_FOUND, 404)
    assert _bounded(short) is short
