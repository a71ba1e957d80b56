"""gRPC input the generated stubs would never send: bytes that are not the method's request message, and an id of
megabytes. Both are the client's mistake (INVALID_ARGUMENT, NOT_FOUND) with the usual ``Error`` trailers, and no
refusal sends back more than a short prefix of what the client sent."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from golf.v1 import errors_pb2
from tests.e2e.support import ERROR_TRAILER, STATUS_TRAILER, Grpc, Server, pb
from tests.e2e.support import R as Reason

SMALL = 2048
"""Bytes a refusal's details and each error trailer stay under, whatever the request held."""


def _raw(client: Grpc, method: str, data: bytes) -> grpc.RpcError:
    call = client.channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    with pytest.raises(grpc.RpcError) as info:
        call(data, metadata=client.metadata, timeout=30)
    return info.value


@pytest.mark.parametrize(
    ("method", "message"),
    [
        ("/golf.v1.SolitaireService/PlayMove", "golf.v1.PlayMoveRequest"),
        ("/golf.v1.SolitaireService/GetGame", "golf.v1.GetGameRequest"),
        ("/golf.v1.PlayerService/CreateGuest", "golf.v1.CreateGuestRequest"),
    ],
)
@pytest.mark.parametrize("data", [b"\xff\xff\xff\xff", b"\x0a\x10short", b"\x0a\x02\xc3\x28"])
def test_undecodable_request_bytes_are_invalid_argument(
    grpc_client: Grpc, method: str, message: str, data: bytes
) -> None:
    err = _raw(grpc_client, method, data)
    reply = Grpc.error_reply(err)  # checks the trailers: the Error and the standard google.rpc.Status agree
    error = reply.expect_error(Reason.ERROR_REASON_INVALID_ARGUMENT)
    assert error.message == f"the request is not a valid {message}", error
    details = err.details() or ""
    assert "Exception" not in details and "Error" not in details


def test_undecodable_request_without_a_token_is_unauthenticated_first(server: Server) -> None:
    anonymous = Grpc(server.grpc_target, sign_in=False)
    try:
        err = _raw(anonymous, "/golf.v1.SolitaireService/PlayMove", b"\xff\xff")
        Grpc.error_reply(err).expect_error(Reason.ERROR_REASON_UNAUTHENTICATED)
    finally:
        anonymous.close()


def test_a_game_id_of_megabytes_is_refused_with_small_trailers(grpc_client: Grpc) -> None:
    huge = "g" * (3 * 1024 * 1024)
    try:
        grpc_client.stub.GetGame(pb.GetGameRequest(game_id=huge), metadata=grpc_client.metadata, timeout=30)
    except grpc.RpcError as err:
        reply = Grpc.error_reply(err)
        assert reply.expect_error(Reason.ERROR_REASON_INVALID_ARGUMENT).field == "gameId"  # at most 64 characters
        assert len((err.details() or "").encode()) < SMALL
        trailers: dict[str, Any] = dict(err.trailing_metadata() or ())  # type: ignore[arg-type]
        assert len(trailers[ERROR_TRAILER]) < SMALL and len(trailers[STATUS_TRAILER]) < SMALL
        assert len(errors_pb2.Error.FromString(trailers[ERROR_TRAILER]).message) < SMALL
    else:
        raise AssertionError("a game of that id exists?")
