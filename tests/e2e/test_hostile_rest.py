"""Hostile REST input on a real server, on both databases: enums given objects or numbers they do not have, bodies
far over the limit (refused before they are read, without the server's memory growing), unknown paths and
methods (the documented ``Error`` shape, ``Allow`` listing every method), and huge client text never echoed back."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import json_format

from golf.v1 import errors_pb2, solitaire_service_pb2
from tests.e2e.support import R, Rest, Server, migrate

OWN_SERVER = True
"""A server and database of this module's own (tests/e2e/conftest.py):
it measures its server's memory."""

LIMIT = 64 * 1024  # the default GOLF_MAX_BODY_BYTES
MB = 2**20
GAME = "/v1/games/00000000-0000-0000-0000-000000000000"
SUIT = "move.playColumn.card.suit"


@pytest.fixture(scope="module")
def roomy(module_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rest]:
    """A second server on the module's database taking bodies up to 4 MB, for megabyte-long field names and
    values; signed in."""
    migrate(module_database_url)
    srv = Server(module_database_url, tmp_path_factory.mktemp("roomy"), extra_env={"GOLF_MAX_BODY_BYTES": str(4 * MB)})
    srv.start()
    client = Rest(srv.http_url)
    try:
        yield client
    finally:
        client.close()
        assert srv.stop() == 0, srv.log_text()


def _error(resp: httpx.Response, status: int, reason: int) -> errors_pb2.Error:
    assert resp.status_code == status, (resp.status_code, resp.text[:300])
    assert resp.headers["content-type"] == "application/json"
    assert resp.headers.get("x-request-id")
    err = errors_pb2.Error()
    json_format.Parse(resp.text, err)
    assert err.reason == reason, err
    assert err.message
    return err


def _post(rest: Rest, path: str, content: Any, **headers: str) -> httpx.Response:
    body = content if isinstance(content, bytes) else json.dumps(content)
    return rest.http.post(path, content=body, headers={"content-type": "application/json", **headers})


# -- 1. enums given objects, lists or numbers outside the enum ---------------------------------------------------
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/deals", {"difficulty": {}}, "difficulty"),
        ("/v1/deals", {"difficulty": []}, "difficulty"),
        ("/v1/deals", {"difficulty": 42}, "difficulty"),
        ("/v1/deals", {"rules": {"undoPolicy": []}}, "rules.undoPolicy"),
        ("/v1/games", {"rules": {"undoPolicy": {"x": 1}}}, "rules.undoPolicy"),
        ("/v1/rounds", {"difficulty": [{}]}, "difficulty"),
        (GAME + "/moves", {"move": {"playColumn": {"card": {"suit": {}}}}}, "move.playColumn.card.suit"),
        (GAME + "/moves", {"move": {"playColumn": {"card": {"rank": 14, "suit": 1}}}}, "move.playColumn.card.rank"),
        (GAME + "/moves", {"move": {"drawStock": {"card": {"rank": []}}}}, "move.drawStock.card.rank"),
        (GAME + "/moves", {"move": {"playColumn": {"column": {}}}}, "move.playColumn.column"),
        (GAME + "/moves", {"idempotencyKey": ["k"]}, "idempotencyKey"),
        (GAME + ":undo", {"expectedVersion": {}}, "expectedVersion"),
        ("/v1/deals", {"winnableOnly": {}}, "winnableOnly"),
        ("/v1/deals", {"seed": {"a": "b"}}, "seed"),
    ],
)
def test_mistyped_fields_are_400_naming_the_field(rest: Rest, path: str, body: Any, field: str) -> None:
    err = _error(_post(rest, path, body), 400, R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == field


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/games", b'{"preset": "wrap", "winnableOnly": false, "preset": "standard"}', "preset"),
        ("/v1/games", b'{"preset": "standard", "rules": {"wrap": true, "wrap": false}}', "rules.wrap"),
        (GAME + "/moves", b'{"move": {"playColumn": {"column": 0, "column": 1}}}', "move.playColumn.column"),
        ("/v1/deals", b'{"winnableOnly": false, "winnable_only": true, "winnable_only": false}', "winnable_only"),
    ],
)
def test_a_key_given_twice_is_400_naming_it(rest: Rest, path: str, body: bytes, field: str) -> None:
    """Not last-wins (which dealt ``standard`` for the first body): protobuf's json_format refuses such a text."""
    err = _error(_post(rest, path, body), 400, R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == field and "twice" in err.message, err
    # A string value holding what looks like a key and a colon is no key given twice.
    made = _post(rest, "/v1/games", b'{"preset": "standard", "winnableOnly": false, "note": "\\":x\\":"}')
    assert made.status_code == 200 and made.headers["x-golf-unknown-fields"] == "note", made.text


@pytest.mark.parametrize("query", ["status={}", "status=9", "status=GAME_STATUS_NOPE", "createdAfter=yesterday"])
def test_mistyped_query_parameters_are_400(rest: Rest, query: str) -> None:
    err = _error(rest.http.get("/v1/games?" + query), 400, R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == query.split("=")[0]


def test_enums_are_taken_by_number_in_query_strings_as_in_bodies(rest: Rest) -> None:
    """``status=2`` was a 400 though the OpenAPI document lists 2 and bodies take it: one rule for both."""
    for query in ("status=2", "status=GAME_STATUS_WON", "status=1", "status=GAME_STATUS_IN_PROGRESS"):
        assert rest.http.get("/v1/games?" + query).status_code == 200, query
    for query in ("status=2", "status=ROUND_STATUS_FINISHED"):
        assert rest.http.get("/v1/rounds?" + query).status_code == 200, query
    made = _post(rest, "/v1/deals", {"winnableOnly": False, "difficulty": "1"})  # a number in a string, as a query
    assert made.status_code == 200, made.text
    for query in ("status=4", "status=-1", "status=2.0", "status=" + "2" * 100):
        err = _error(rest.http.get("/v1/games?" + query), 400, R.ERROR_REASON_INVALID_ARGUMENT)
        assert err.field == "status" and "GAME_STATUS_WON (2)" in err.message
    status = rest.http.get("/openapi.json").json()["components"]["schemas"]["golf.v1.GameStatus"]
    assert 2 in status["enum"] and "by number, in a body and in a query string alike" in status["description"]


# -- 2. bodies over the limit --------------------------------------------------------------------------------------
def _rss_kb(server: Server) -> int:
    assert server.proc is not None
    for line in Path(f"/proc/{server.proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _head(server: Server, rest: Rest | None, path: str, **headers: str) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{server.http_port}"]
    lines += [f"Authorization: Bearer {rest.token}"] if rest is not None else []
    lines += ["Content-Type: application/json", *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _read_reply(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one HTTP/1.1 reply (read until the server closes the connection)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    return int(status_line.split()[1]), headers, body


def _parse_error(body: bytes) -> errors_pb2.Error:
    err = errors_pb2.Error()
    json_format.Parse(body.decode(), err)
    return err


def test_a_huge_declared_body_is_refused_before_it_is_read(server: Server, rest: Rest) -> None:
    rest.list_games().expect_ok()  # warm: the server's memory settles first
    before = _rss_kb(server)
    # Signed in or not (the size is checked before the token): 413, not 401.
    for caller in (rest, rest, None):
        with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
            start = time.monotonic()
            sock.sendall(_head(server, caller, "/v1/games", content_length=str(500 * MB)) + b"{" + b" " * 4096)
            status, headers, body = _read_reply(sock)  # the server answers and closes without the rest
            took = time.monotonic() - start
        assert status == 413 and took < 5, (status, took)
        assert headers["content-type"] == "application/json" and headers["connection"] == "close"
        assert headers.get("x-request-id")
        assert _parse_error(body).reason == R.ERROR_REASON_PAYLOAD_TOO_LARGE
    after = _rss_kb(server)
    assert after - before < 8 * 1024, (before, after)
    rest.list_games().expect_ok()  # and it goes on serving


def _chunked(size: int, piece: int = 4096) -> Iterator[bytes]:
    sent = 0
    while sent < size:
        part = min(piece, size - sent)
        yield f"{part:x}\r\n".encode() + b" " * part + b"\r\n"
        sent += part
    yield b"0\r\n\r\n"


def test_a_chunked_stream_is_cut_off_once_past_the_limit(server: Server, rest: Rest) -> None:
    before = _rss_kb(server)
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
        sock.sendall(_head(server, rest, "/v1/games", transfer_encoding="chunked"))
        sent = 0
        try:
            for chunk in _chunked(200 * MB, 64 * 1024):
                sock.sendall(chunk)
                sent += len(chunk)
        except OSError:  # the server answered 413 and closed: the rest cannot be sent
            pass
    assert sent < 100 * MB, "the server kept reading a body far past the limit"
    assert _rss_kb(server) - before < 8 * 1024
    rest.list_games().expect_ok()


def test_a_chunked_body_one_byte_over_the_limit_is_refused(server: Server, rest: Rest) -> None:
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
        sock.sendall(_head(server, rest, "/v1/games", transfer_encoding="chunked"))
        sock.sendall(b"".join(_chunked(LIMIT + 1)))
        status, headers, body = _read_reply(sock)
    assert status == 413 and headers["connection"] == "close"
    assert _parse_error(body).reason == R.ERROR_REASON_PAYLOAD_TOO_LARGE


def test_bodies_up_to_the_limit_are_parsed(rest: Rest) -> None:
    game = b'{"preset": "wrap"}'
    at_limit = game + b" " * (LIMIT - len(game))
    assert rest.reply(_post(rest, "/v1/games", at_limit), _game_reply()).expect_ok().game.id
    # The same through a generator (chunked, no Content-Length).
    chunked = rest.http.post("/v1/games", content=iter([game, b" " * (LIMIT - len(game))]))
    assert rest.reply(chunked, _game_reply()).expect_ok().game.id
    # A body at the limit that is not a valid request is refused for what it holds, not for its size.
    err = _error(_post(rest, "/v1/games", b"[" + b" " * (LIMIT - 2) + b"]"), 400, R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == "body"
    over = _post(rest, "/v1/games", at_limit + b" ")
    assert "larger than 65536 bytes" in _error(over, 413, R.ERROR_REASON_PAYLOAD_TOO_LARGE).message


def _game_reply() -> Any:
    return solitaire_service_pb2.CreateGameResponse


# -- 3. unknown paths and methods ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("DELETE", "/v1/games", "GET, HEAD, POST"),
        ("PUT", "/v1/rounds", "GET, HEAD, POST"),
        ("DELETE", GAME + "/moves", "GET, HEAD, POST"),
        ("PATCH", GAME, "GET, HEAD"),
        ("GET", "/v1/players:guest", "POST"),
        ("POST", "/healthz", "GET"),
        ("POST", "/openapi.json", "GET, HEAD"),
    ],
)
def test_wrong_methods_are_405_with_every_allowed_method(rest: Rest, method: str, path: str, allow: str) -> None:
    resp = rest.http.request(method, path, headers={"x-request-id": "hostile-405"})
    err = _error(resp, 405, R.ERROR_REASON_METHOD_NOT_ALLOWED)
    assert resp.headers["allow"] == allow
    assert resp.headers["x-request-id"] == "hostile-405"
    assert method in err.message


@pytest.mark.parametrize(("method", "path"), [("GET", "/v1/nothing"), ("POST", "/v2/games"), ("GET", "/")])
def test_unknown_paths_are_404_error_bodies(rest: Rest, method: str, path: str) -> None:
    resp = rest.http.request(method, path, headers={"x-request-id": "hostile-404"})
    _error(resp, 404, R.ERROR_REASON_NOT_FOUND)
    assert resp.headers["x-request-id"] == "hostile-404"


def test_the_operations_pages_still_answer(server: Server) -> None:
    for path in ("/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"):
        assert httpx.get(server.http_url + path, timeout=10).status_code == 200, path


# -- 4. huge client text is never echoed back --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/deals", b'{"' + b"k" * MB + b'": 1, "difficulty": []}', "difficulty"),
        ("/v1/deals", b'{"difficulty": "' + b"D" * MB + b'"}', "difficulty"),
        (GAME + "/moves", b'{"move": {"playColumn": {"card": {"suit": "' + b"S" * MB + b'"}}}}', SUIT),
        ("/v1/deals", b'{"seed": "' + b"s" * MB + b'"}', "seed"),
    ],
)
def test_megabytes_of_client_text_give_a_short_error(roomy: Rest, path: str, body: bytes, field: str) -> None:
    resp = _post(roomy, path, body)
    err = _error(resp, 400, R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == field
    assert len(resp.content) < 2048, resp.text[:500]


def test_megabyte_unknown_keys_are_ignored_and_named_by_a_short_prefix(roomy: Rest) -> None:
    body = b'{"' + b"k" * MB + b'": 1, "rules": {"' + b"k" * MB + b'": true}}'
    resp = _post(roomy, "/v1/deals", body)
    assert resp.status_code == 200, resp.text[:300]
    assert resp.headers["x-golf-unknown-fields"] == f"{'k' * 64}%E2%80%A6, rules.{'k' * 64}%E2%80%A6"


def _raw_get(server: Server, rest: Rest, target: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``target`` exactly as given, on a connection the server is asked to close."""
    head = f"GET {target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {rest.token}\r\nConnection: close\r\n\r\n"
    with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
        sock.sendall(head.encode())
        return _read_reply(sock)


# Under GOLF_MAX_REQUEST_LINE_BYTES (16 KiB; longer ones get 414: tests/e2e/test_edge_connections.py).
LONG = 15_000


@pytest.mark.parametrize(
    ("target", "status", "field"),
    [
        ("/v1/games?status=" + "S" * LONG, 400, "status"),
        ("/v1/games?createdAfter=" + "2" * LONG, 400, "createdAfter"),
        ("/v1/nothing/" + "n" * LONG, 404, ""),
    ],
)
def test_long_urls_give_a_short_error(server: Server, rest: Rest, target: str, status: int, field: str) -> None:
    got, headers, body = _raw_get(server, rest, target)
    assert got == status and headers["content-type"] == "application/json", (got, body[:300])
    assert _parse_error(body).field == field
    assert len(body) < 2048


def test_a_long_unknown_query_parameter_is_ignored_and_named_short(server: Server, rest: Rest) -> None:
    got, headers, body = _raw_get(server, rest, "/v1/games?pageSize=1&" + "x" * LONG + "=1")
    assert got == 200, body[:300]
    assert headers["x-golf-unknown-fields"] == "x" * 64 + "%E2%80%A6"
