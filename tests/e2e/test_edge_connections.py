"""The edge's limits on connections, over real sockets (issue 26, section 1): request lines and headers past their
limits are refused (414, 431) and the connection closed; a body the app never read is not read for ever; a
connection that sends nothing, or trickles its headers, is closed (HTTP and gRPC); connections past the cap are
turned away; Connect refuses bodies over the limit (or inflating past it) with 413, not 429.

Each test asserts the refusal and the close, never a duration: costs are measured in ``bench/edge.py``.
"""

from __future__ import annotations

import base64
import gzip
import json
import socket
from collections.abc import Iterator

import pytest

from golf.v1 import errors_pb2
from tests.e2e.support import R, Server, migrate

OWN_SERVER = True
"""A server and database of this module's own (tests/e2e/conftest.py):
it fills its server's connection cap and times its connections."""

MB = 2**20
LIMIT = 64 * 1024  # GOLF_MAX_BODY_BYTES's default
EDGE = {
    "GOLF_HEADER_TIMEOUT_SECONDS": "1",
    "GOLF_IDLE_TIMEOUT_SECONDS": "2",
    "GOLF_MAX_CONNECTIONS": "12",
}


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with short timeouts and a small connection cap (SQLite: nothing here touches the database)."""
    path = tmp_path_factory.mktemp("edge")
    url = f"sqlite:///{path / 'golf.db'}"
    migrate(url)
    srv = Server(url, path, extra_env=EDGE).start()
    try:
        yield srv
    finally:
        assert srv.stop() == 0, srv.log_text()


def _connect(server: Server, port: int | None = None) -> socket.socket:
    return socket.create_connection(("127.0.0.1", port or server.http_port), timeout=10)


def _until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset counts as the close)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:
        pass
    return data


def _reply(data: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode().split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def _error(body: bytes) -> dict[str, object]:
    err: dict[str, object] = json.loads(body)
    assert err["message"], err
    return err


def _send_all(sock: socket.socket, pieces: Iterator[bytes]) -> int:
    """Send ``pieces`` until they run out or the server closes; the bytes sent."""
    sent = 0
    try:
        for piece in pieces:
            sock.sendall(piece)
            sent += len(piece)
    except OSError:  # closed by the server: nothing more can be sent
        pass
    return sent


# -- request line and headers ------------------------------------------------------------------------------------
def test_a_huge_header_is_refused_431_and_the_connection_closed(edge: Server) -> None:
    with _connect(edge) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Huge: ")
        _send_all(sock, iter([b"h" * MB] * 8))
        status, headers, body = _reply(_until_closed(sock))
    assert status == 431 and headers["connection"] == "close", (status, headers)
    assert _error(body)["reason"] == "ERROR_REASON_PAYLOAD_TOO_LARGE"


def test_a_long_request_line_is_refused_414(edge: Server) -> None:
    with _connect(edge) as sock:
        sock.sendall(b"GET /v1/games?x=" + b"q" * (64 * 1024) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, body = _reply(_until_closed(sock))
    assert status == 414 and headers["connection"] == "close"
    assert "path and query" in str(_error(body)["message"])


def test_too_many_headers_are_refused_431(edge: Server) -> None:
    many = b"".join(b"X-H%d: 1\r\n" % i for i in range(101))
    with _connect(edge) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
        status, _, body = _reply(_until_closed(sock))
    assert status == 431 and "more than 100 headers" in str(_error(body)["message"])


def test_heads_within_the_limits_are_served(edge: Server) -> None:
    lines = b"".join(b"X-H%d: %s\r\n" % (i, b"v" * 100) for i in range(98))
    with _connect(edge) as sock:
        sock.sendall(
            b"GET /healthz?x=" + b"q" * 8000 + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + lines + b"\r\n"
        )
        status, _, _ = _reply(_until_closed(sock))
    assert status == 200


# -- bodies of requests refused before their body is read ------------------------------------------------------
def _chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    for _ in range(total // size):
        yield f"{size:x}\r\n".encode() + b"b" * size + b"\r\n"


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/healthz"),  # answered without reading a body
        ("POST", "/v1/nothing"),  # 404
        ("PUT", "/v1/games"),  # 405
        ("POST", "/v1/games"),  # 401: no token
        ("POST", "/golf.v1.SolitaireService/NoSuchMethod"),  # a Connect refusal
    ],
)
def test_an_endless_body_of_a_refused_request_is_not_read_for_ever(edge: Server, method: str, path: str) -> None:
    with _connect(edge) as sock:
        sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        sent = _send_all(sock, _chunks(256 * MB))
        data = _until_closed(sock)
    # The server stops reading at the limit and closes: what was sent past it sits in the sockets' buffers only.
    assert sent < 128 * MB, sent
    assert data.startswith(b"HTTP/1.1 "), data[:100]


def test_a_small_body_of_a_refused_request_keeps_the_connection(edge: Server) -> None:
    with _connect(edge) as sock:
        sock.sendall(b"POST /v1/nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
        first = sock.recv(65536)
        sock.sendall(b"b" * 1000)  # the body comes after the refusal: thrown away
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        rest = _until_closed(sock)
    assert first.startswith(b"HTTP/1.1 404")
    assert b"HTTP/1.1 200" in first + rest


# -- idle and slow connections ---------------------------------------------------------------------------------
def test_a_connection_that_sends_nothing_is_closed(edge: Server) -> None:
    with _connect(edge) as sock:
        assert _until_closed(sock) == b""


def test_trickled_headers_are_refused_408(edge: Server) -> None:
    with _connect(edge) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        data = b""
        sock.settimeout(0.2)
        for _ in range(50):  # a byte each 0.2 s, 10 s in all, far past the 1 s timeout
            try:
                sock.sendall(b"s")
                data += sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if data:
                break
        sock.settimeout(10)
        data += _until_closed(sock)
    status, headers, body = _reply(data)
    assert status == 408 and headers["connection"] == "close"
    assert _error(body)["reason"] == "ERROR_REASON_INVALID_ARGUMENT"


def test_a_grpc_connection_that_never_handshakes_is_closed(edge: Server) -> None:
    with _connect(edge, edge.grpc_port) as sock:
        sock.sendall(b"PRI * HTTP/2.0\r\n")  # the start of the preface, never its end
        _until_closed(sock)  # returns once the server closed it (the socket's own timeout would raise)


def test_connections_past_the_cap_are_turned_away(edge: Server) -> None:
    held = [_connect(edge) for _ in range(12)]
    try:
        for sock in held:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")  # each is open and served
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
        with _connect(edge) as extra:
            status, headers, body = _reply(_until_closed(extra))
        assert status == 503 and headers["retry-after"] == "1"
        assert _error(body)["reason"] == "ERROR_REASON_UNAVAILABLE"
    finally:
        for sock in held:
            sock.close()


# -- Connect: bodies over the limit are 413 --------------------------------------------------------------------
def _connect_post(edge: Server, body: bytes, **headers: str) -> tuple[int, dict[str, str], bytes]:
    head = (
        "POST /golf.v1.PlayerService/CreateGuest HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nConnect-Protocol-Version: 1\r\nContent-Length: {len(body)}\r\n"
        + "".join(f"{k.replace('_', '-')}: {v}\r\n" for k, v in headers.items())
        + "\r\n"
    )
    with _connect(edge) as sock:
        _send_all(sock, iter([head.encode() + body]))
        return _reply(_until_closed(sock))


@pytest.mark.parametrize("case", ["declared", "inflated"])
def test_connect_refuses_a_body_over_the_limit_with_413(edge: Server, case: str) -> None:
    if case == "declared":
        status, _, body = _connect_post(edge, b"{" + b" " * LIMIT + b"}")
    else:  # a gzip bomb: 10 MB of spaces in a few kilobytes
        bomb = gzip.compress(b"{" + b" " * (10 * MB) + b"}")
        assert len(bomb) < LIMIT
        status, _, body = _connect_post(edge, bomb, content_encoding="gzip")
    assert status == 413, (status, body[:300])
    err = json.loads(body)
    assert err["code"] == "resource_exhausted" and "larger than 65536 bytes" in err["message"]
    detail = next(d for d in err["details"] if d["type"] == errors_pb2.Error.DESCRIPTOR.full_name)
    error = errors_pb2.Error.FromString(base64.b64decode(detail["value"] + "=="))
    assert error.reason == R.ERROR_REASON_PAYLOAD_TOO_LARGE


def test_connect_still_answers_within_the_limit(edge: Server) -> None:
    status, _, body = _connect_post(edge, b"{}")
    assert status == 200, body[:300]
