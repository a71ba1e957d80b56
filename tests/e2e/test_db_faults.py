"""PostgreSQL's own faults against a running server (issue 26, section 2), made on databases the tests create: a
database that refuses connections (SQLSTATE 55000), backends terminated again and again, the database dropped, and a
server started before its database exists. Each is UNAVAILABLE / 503 with a retry delay on both transports (never a
500), one line in the log rather than a traceback per request, `/readyz` naming the cause, and the server heals
without a restart."""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from grpc_health.v1 import health_pb2

from tests.conftest import ADMIN_URL, _need_postgres
from tests.e2e.outages import check_log, readiness, recovered, refused_while_down, sign_in_and_play
from tests.e2e.support import START_TIMEOUT, Grpc, Rest, Server, health_status, migrate, pb
from tests.e2e.support import R as Reason
from tests.pg_faults import admin, database_of, terminate_backends

OWN_SERVER = True
"""A server and database of this module's own (tests/e2e/conftest.py):
it kills its server's database backends and stops it."""

READY_TIMEOUT = 30.0


def _no_tracebacks(server: Server) -> None:
    text = server.log_text()
    assert "Traceback" not in text and "unhandled error" not in text, text


def _new_players_play(server: Server) -> None:
    """New players sign in and start games on both transports (the old ones went with a dropped database)."""
    for client in (Rest(server.http_url), Grpc(server.grpc_target)):
        try:
            client.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)).expect_ok()
        finally:
            client.close()


def _make_migrated(url: str) -> None:
    """The test's database at ``url`` made and migrated at once: migrated under another name of the test's own, then
    renamed (a server between the two would meet a database without its tables, a window this test is not about)."""
    name = database_of(url)
    building = f"golf_test_{secrets.token_hex(6)}"
    admin(f'CREATE DATABASE "{building}"')
    try:
        migrate(f"{url.rsplit('/', 1)[0]}/{building}")
        terminate_backends(building)
        admin(f'ALTER DATABASE "{building}" RENAME TO "{name}"')
    finally:
        admin(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')


def _until_ready(server: Server) -> dict[str, str]:
    deadline = time.monotonic() + READY_TIMEOUT
    while True:
        status, checks = readiness(server)
        if status == 200:
            return checks
        assert time.monotonic() < deadline, f"not ready after the database came back: {checks}"
        time.sleep(0.2)


def test_a_database_not_accepting_connections(postgres_url: str, tmp_path: Path) -> None:
    """``ALLOW_CONNECTIONS false`` and the open connections ended: was a 500 and a traceback per request."""
    name = database_of(postgres_url)
    migrate(postgres_url)
    server = Server(postgres_url, tmp_path).start()
    clients: list[Rest | Grpc] = []
    try:
        clients, game_ids = sign_in_and_play(server)
        admin(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            terminate_backends(name)
            refused_while_down(clients, game_ids)
            status, checks = readiness(server)
            assert status == 503 and "not currently accepting connections" in checks["database"], checks
        finally:
            admin(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        recovered(clients, game_ids)
        assert readiness(server)[0] == 200
        check_log(server)
    finally:
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0, server.log_text()


def test_backends_terminated_again_and_again_are_never_a_500(postgres_url: str, tmp_path: Path) -> None:
    """``pg_terminate_backend`` of the server's backends every 0.1 s while players read and play: each call answers
    or is refused with UNAVAILABLE and a retry delay (the clients fail on any 500)."""
    name = database_of(postgres_url)
    migrate(postgres_url)
    server = Server(postgres_url, tmp_path).start()
    clients: list[Rest | Grpc] = []
    stop = threading.Event()

    def kill() -> None:
        while not stop.wait(0.1):
            terminate_backends(name)

    killer = threading.Thread(target=kill, daemon=True)
    try:
        clients, game_ids = sign_in_and_play(server)
        killer.start()
        for i in range(15):
            for client in clients:
                for reply in (
                    client.get_game(game_ids[client.name]),
                    client.list_games(),
                    client.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)),
                ):
                    if not reply.ok:
                        reply.expect_error(Reason.ERROR_REASON_UNAVAILABLE)
                        assert reply.retry_delay() == 2.0, (i, reply.raw)
        stop.set()
        killer.join()
        recovered(clients, game_ids)
        _no_tracebacks(server)
    finally:
        stop.set()
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0, server.log_text()


def test_a_dropped_database_is_unavailable_until_it_is_made_again(postgres_url: str, tmp_path: Path) -> None:
    """The server's own test database dropped (a 500 before): 503 naming it on /readyz; made and migrated again, the
    same server serves it."""
    name = database_of(postgres_url)
    migrate(postgres_url)
    server = Server(postgres_url, tmp_path).start()
    clients: list[Rest | Grpc] = []
    try:
        clients, game_ids = sign_in_and_play(server)
        admin(f'DROP DATABASE "{name}" WITH (FORCE)')
        refused_while_down(clients, game_ids)
        status, checks = readiness(server)
        assert status == 503 and f'database "{name}" does not exist' in checks["database"], checks
        _make_migrated(postgres_url)
        _until_ready(server)
        _new_players_play(server)
        _no_tracebacks(server)
    finally:
        for client in clients:
            client.close()
        code = server.stop()
    assert code == 0, server.log_text()


class LiveServer(Server):
    """A server that counts as started once it is live (its database need not be there)."""

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT
        while health_status(self.grpc_target, "liveness") != health_pb2.HealthCheckResponse.SERVING:
            code = self.proc.poll()
            assert code is None, f"golf serve exited with {code} while starting:\n{self.log_text()}"
            assert time.monotonic() < deadline, f"golf serve not live in {START_TIMEOUT}s:\n{self.log_text()}"
            time.sleep(0.05)


@pytest.fixture
def missing_database() -> Iterator[str]:
    """The URL of a database of the test's own that does not exist yet; dropped afterwards if it was made."""
    _need_postgres()
    name = f"golf_test_{secrets.token_hex(6)}"
    try:
        yield f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_serve_starts_before_its_database_and_is_ready_once_it_comes(missing_database: str, tmp_path: Path) -> None:
    name = database_of(missing_database)
    server = LiveServer(missing_database, tmp_path).start()
    try:
        status, checks = readiness(server)
        assert status == 503 and checks["database"] == f'unreachable: database "{name}" does not exist', checks
        guest = httpx.post(f"{server.http_url}/v1/players:guest", json={}, timeout=10)
        assert guest.status_code == 503 and guest.headers["retry-after"] == "2", guest.text
        _make_migrated(missing_database)
        assert _until_ready(server) == {"database": "ok", "migrations": "ok"}
        _new_players_play(server)
        text = server.log_text()
        assert text.count("database unreachable") == 1 and "Traceback" not in text, text
    finally:
        code = server.stop()
    assert code == 0, server.log_text()
