"""A database that goes away: requests are refused with UNAVAILABLE / 503 and a retry delay on both transports, the
outage is logged once (not a traceback per request), and the server recovers by itself when the database is back.

PostgreSQL goes away through a TCP proxy of the test's own, between the server and the machine's PostgreSQL (the
real server is never touched); SQLite by moving the database's directory away and back.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.e2e.outages import (
    check_log,
    readiness,
    recovered,
    refused_while_down,
    sign_in_and_play,
)
from tests.e2e.support import Grpc, Rest, Server, migrate

OWN_SERVER = True
"""A server and database of this module's own (tests/e2e/conftest.py):
it takes its server's database away and stops it."""


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to ``target``; ``cut`` closes the listener and every connection (the database
    is out of reach: new connections are refused), ``restore`` listens again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._conns: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> TcpProxy:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.1)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._stop = threading.Event()
        self._spawn(self._accept, listener, self._stop)
        return self

    def _spawn(self, target: object, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)  # type: ignore[arg-type]
        thread.start()
        self._threads.append(thread)

    def _accept(self, listener: socket.socket, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            client.settimeout(None)
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            with self._lock:
                self._conns |= {client, upstream}
            self._spawn(self._pump, client, upstream)
            self._spawn(self._pump, upstream, client)

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            self._close(src)
            self._close(dst)

    def _close(self, sock: socket.socket) -> None:
        with self._lock:
            self._conns.discard(sock)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        sock.close()

    def cut(self) -> None:
        self._stop.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # ends an accept() in progress at once
            self._listener.close()
            self._listener = None
        with self._lock:
            conns = list(self._conns)
        for sock in conns:
            self._close(sock)
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads = []

    def restore(self) -> None:
        self.start()  # the same port


@pytest.fixture
def pg_proxy(postgres_url: str) -> Iterator[tuple[TcpProxy, str]]:
    """A migrated database of the test's own, and its URL through a proxy the test can cut."""
    migrate(postgres_url)
    url = make_url(postgres_url)
    proxy = TcpProxy((url.host or "127.0.0.1", url.port or 5432)).start()
    try:
        yield proxy, url.set(port=proxy.port).render_as_string(hide_password=False)
    finally:
        proxy.cut()


def test_postgres_outage_is_unavailable_logged_once_and_recovers(
    pg_proxy: tuple[TcpProxy, str], tmp_path: Path
) -> None:
    proxy, url = pg_proxy
    server = Server(url, tmp_path).start()
    clients: list[Rest | Grpc] = []
    try:
        clients, game_ids = sign_in_and_play(server)
        proxy.cut()
        refused_while_down(clients, game_ids)
        status, checks = readiness(server)
        assert status == 503 and checks["database"].startswith("unreachable: "), checks
        time.sleep(1.5)  # an outage that lasts: still one line in the log
        refused_while_down(clients, game_ids)
        proxy.restore()
        recovered(clients, game_ids)
        assert readiness(server)[0] == 200
        check_log(server)
        assert any(f"unreachable: connection {how}" in server.log_text() for how in ("refused", "lost", "reset"))
    finally:
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0, server.log_text()


def test_sqlite_outage_is_unavailable_logged_once_and_recovers(tmp_path: Path) -> None:
    """The database's directory moved away (a volume gone): the open connection would go on with a file nobody
    can find at the path any more, so the driver checks the path. (As root, permissions would not stop it.)"""
    folder = tmp_path / "data"
    folder.mkdir()
    url = f"sqlite:///{folder / 'golf.db'}"
    migrate(url)
    server = Server(url, tmp_path).start()
    clients: list[Rest | Grpc] = []
    try:
        clients, game_ids = sign_in_and_play(server)
        away = tmp_path / "elsewhere"
        folder.rename(away)
        try:
            refused_while_down(clients, game_ids)
            status, checks = readiness(server)
            assert status == 503 and checks["database"].startswith("unreachable: "), checks
        finally:
            away.rename(folder)
        recovered(clients, game_ids)
        assert readiness(server)[0] == 200
        check_log(server)
        assert "no such file or directory" in server.log_text()
    finally:
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0, server.log_text()
