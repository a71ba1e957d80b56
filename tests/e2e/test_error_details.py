"""Google's rich error model on both transports, on a real server: a REST refusal's ``details`` decode to the same
``google.rpc.ErrorInfo`` / ``BadRequest`` / ``RetryInfo`` a gRPC client reads from its ``google.rpc.Status`` for
the same request, and the deprecated ``golf-error-bin`` trailer still carries the ``Error``; unknown JSON keys are
ignored and named in ``x-golf-unknown-fields``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from golf.v1 import errors_pb2, solitaire_pb2
from tests.e2e.support import ERROR_TRAILER, STATUS_TRAILER, Grpc, Rest, Server, draw, migrate, new_key, pb

R = errors_pb2.ErrorReason
ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"
BAD_REQUEST = "type.googleapis.com/google.rpc.BadRequest"
RETRY_INFO = "type.googleapis.com/google.rpc.RetryInfo"
HEADER = "x-golf-unknown-fields"
NO_GAME = "00000000-0000-0000-0000-000000000000"
_TYPES: dict[str, type[Message]] = {
    ERROR_INFO: error_details_pb2.ErrorInfo,
    BAD_REQUEST: error_details_pb2.BadRequest,
    RETRY_INFO: error_details_pb2.RetryInfo,
}
GrpcRefusal = tuple[grpc.StatusCode, status_pb2.Status, bytes]


def _unpacked(details: Any) -> list[Message]:
    out = []
    for packed in details:
        message = _TYPES[packed.type_url]()
        assert packed.Unpack(message), packed.type_url
        out.append(message)
    return out


def _grpc_refusal(target: str, method: str, req: Message, token: str | None) -> GrpcRefusal:
    """The code, the standard status and the old trailer of a refused call, read with a plain stub."""
    client = Grpc(target, sign_in=False)
    client.use_token(token)
    try:
        with pytest.raises(grpc.RpcError) as info:
            getattr(client.stub, method)(req, timeout=30, metadata=client.metadata)
    finally:
        client.close()
    err: Any = info.value
    trailers = dict(err.trailing_metadata() or ())
    return err.code(), status_pb2.Status.FromString(trailers[STATUS_TRAILER]), trailers[ERROR_TRAILER]


def _same_refusal(resp: httpx.Response, refusal: GrpcRefusal) -> list[Message]:
    """Check that the REST body says what the gRPC status says; return the standard details, decoded."""
    code, status, old_trailer = refusal
    raw = resp.json()
    assert raw["status"] == code.name, raw
    assert [d["@type"] for d in raw["details"]] == [d.type_url for d in status.details[:-1]], (raw, status)
    rest_error = errors_pb2.Error()
    json_format.Parse(resp.text, rest_error)
    # The status's details: the standard ones (REST's ``details``), then the whole Error: the old trailer's bytes.
    assert status.details[-1].Is(errors_pb2.Error.DESCRIPTOR) and status.details[-1].value == old_trailer
    grpc_error = errors_pb2.Error.FromString(old_trailer)
    assert not grpc_error.details and grpc_error.status == code.name
    assert (grpc_error.reason, grpc_error.field, grpc_error.message) == (
        rest_error.reason,
        rest_error.field,
        rest_error.message,
    )
    rest_details, grpc_details = _unpacked(rest_error.details), _unpacked(status.details[:-1])
    for i, (r, g) in enumerate(zip(rest_details, grpc_details, strict=True)):
        if isinstance(r, error_details_pb2.RetryInfo) and isinstance(g, error_details_pb2.RetryInfo):
            # Two calls a moment apart: the time left in the limit's window may differ a little.
            gap = r.retry_delay.ToTimedelta() - g.retry_delay.ToTimedelta()
            assert abs(gap.total_seconds()) <= 5 and r.retry_delay.ToNanoseconds() > 0, (r, g)
            rest_details[i] = grpc_details[i] = error_details_pb2.RetryInfo()
    assert rest_details == grpc_details
    return rest_details


def _info(reason: str, **metadata: str) -> error_details_pb2.ErrorInfo:
    return error_details_pb2.ErrorInfo(reason=reason, domain="golf.v1", metadata=metadata)


def test_an_invalid_argument_has_the_same_details_on_both(server: Server, rest: Rest) -> None:
    game = rest.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)).expect_ok().game
    resp = rest.http.post(f"/v1/games/{game.id}/moves", json={"move": {"drawStock": {}}})  # no idempotencyKey
    assert resp.status_code == 400, resp.text
    req = pb.PlayMoveRequest(game_id=game.id, move=draw())
    details = _same_refusal(resp, _grpc_refusal(server.grpc_target, "PlayMove", req, rest.token))
    message = resp.json()["message"]
    violation = error_details_pb2.BadRequest.FieldViolation(
        field="idempotencyKey",
        description=message,
        reason="required",  # the contract's rule id
    )
    assert details == [
        _info("INVALID_ARGUMENT", field="idempotencyKey"),
        error_details_pb2.BadRequest(field_violations=[violation]),
    ]
    # As JSON: proto3 JSON of each message under its "@type", as Google's HTTP APIs send them.
    raw = resp.json()
    assert raw["details"][0] == {
        "@type": ERROR_INFO,
        "reason": "INVALID_ARGUMENT",
        "domain": "golf.v1",
        "metadata": {"field": "idempotencyKey"},
    }
    assert raw["details"][1]["@type"] == BAD_REQUEST
    assert raw["details"][1]["fieldViolations"][0]["field"] == "idempotencyKey"
    assert raw["field"] == "idempotencyKey" and raw["reason"] == "ERROR_REASON_INVALID_ARGUMENT"  # as before


def test_not_found_and_unauthenticated_have_the_same_details_on_both(server: Server, rest: Rest) -> None:
    resp = rest.http.get(f"/v1/games/{NO_GAME}")
    assert resp.status_code == 404, resp.text
    refusal = _grpc_refusal(server.grpc_target, "GetGame", pb.GetGameRequest(game_id=NO_GAME), rest.token)
    assert _same_refusal(resp, refusal) == [_info("NOT_FOUND")]
    resp = httpx.get(f"{server.http_url}/v1/games", timeout=30)  # no token
    assert resp.status_code == 401, resp.text
    refusal = _grpc_refusal(server.grpc_target, "ListGames", pb.ListGamesRequest(), None)
    assert _same_refusal(resp, refusal) == [_info("UNAUTHENTICATED")]


def test_the_gateways_own_refusals_carry_details_too(rest: Rest) -> None:
    for method, path, status, reason in [
        ("GET", "/v1/nothing", 404, "NOT_FOUND"),
        ("DELETE", "/v1/games", 405, "METHOD_NOT_ALLOWED"),
    ]:
        raw = rest.http.request(method, path).json()
        assert raw["details"] == [{"@type": ERROR_INFO, "reason": reason, "domain": "golf.v1", "metadata": {}}]
        assert raw["status"] == {404: "NOT_FOUND", 405: "UNIMPLEMENTED"}[status]


@pytest.fixture
def limited(database_url: str, tmp_path: Path) -> Iterator[Server]:
    migrate(database_url)
    srv = Server(database_url, tmp_path, extra_env={"GOLF_RATE_LIMIT_CREATE": "2/minute"}).start()
    yield srv
    assert srv.stop() == 0, srv.log_text()


def test_a_rate_limited_call_has_the_same_details_on_both(limited: Server) -> None:
    rest = Rest(limited.http_url)
    try:
        new = {"preset": "standard", "winnableOnly": False}
        for _ in range(5):
            resp = rest.http.post("/v1/games", json=new)
            if resp.status_code == 429:
                break
            assert resp.status_code == 200, resp.text
        assert resp.status_code == 429, resp.text
        req = pb.CreateGameRequest(preset="standard", winnable_only=False)
        details = _same_refusal(resp, _grpc_refusal(limited.grpc_target, "CreateGame", req, rest.token))
        assert details == [_info("RATE_LIMITED"), error_details_pb2.RetryInfo()]  # (delays compared, then left out)
        retry = resp.json()["details"][1]
        assert retry["@type"] == RETRY_INFO and retry["retryDelay"] == resp.json()["retryDelay"]
        assert float(retry["retryDelay"].removesuffix("s")) <= int(resp.headers["retry-after"])
    finally:
        rest.close()


# -- unknown JSON keys: ignored as binary protobuf ignores unknown fields, and named in a header -----------------
def test_unknown_keys_are_ignored_and_named(rest: Rest) -> None:
    resp = rest.http.post("/v1/games", json={"preset": "standard", "winnableOnly": False, "colour": "red"})
    assert resp.status_code == 200 and resp.headers[HEADER] == "colour", resp.text
    game = resp.json()["game"]
    move = {"move": {"drawStock": {}, "drawTwice": True}, "idempotencyKey": new_key(), "hurry": {"a": [1]}}
    resp = rest.http.post(f"/v1/games/{game['id']}/moves", json=move)
    assert resp.status_code == 200, resp.text
    assert resp.headers[HEADER] == "move.drawTwice, hurry"
    assert resp.json()["game"]["version"] == 1
    # Query parameters too; a reply to a request without unknown keys has no header.
    resp = rest.http.get("/v1/games", params={"pageSize": 1, "pageSze": 2})
    assert resp.status_code == 200 and resp.headers[HEADER] == "pageSze"
    assert len(resp.json()["games"]) == 1
    resp = rest.http.get("/v1/games", params={"pageSize": 1})
    assert resp.status_code == 200 and HEADER not in resp.headers
    # Proto (snake_case) names are not unknown: proto3 JSON parsers take both.
    move = {"move": {"draw_stock": {}}, "idempotency_key": new_key()}
    resp = rest.http.post(f"/v1/games/{game['id']}/moves", json=move)
    assert resp.status_code in (200, 409) and HEADER not in resp.headers, resp.text


def test_a_typo_is_named_when_it_makes_the_request_fail(rest: Rest) -> None:
    game = rest.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)).expect_ok().game
    resp = rest.http.post(f"/v1/games/{game.id}/moves", json={"move": {"drawStock": {}}, "idempotencyKy": "k"})
    assert resp.status_code == 400 and resp.json()["field"] == "idempotencyKey", resp.text
    assert resp.headers[HEADER] == "idempotencyKy"
    # Malformed known fields are still refused, whatever unknown keys come with them.
    resp = rest.http.post("/v1/deals", json={"colour": "red", "rules": {"undoPolicy": "UNDO_POLICY_NOPE"}})
    assert resp.status_code == 400 and resp.json()["field"] == "rules.undoPolicy", resp.text
    assert rest.get_game(game.id).expect_ok().game.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS


def test_the_openapi_document_declares_the_header(rest: Rest) -> None:
    doc = rest.http.get("/openapi.json").json()
    for path in doc["paths"].values():
        for op in path.values():
            assert HEADER in op["responses"]["200"]["headers"], op["operationId"]
