"""Fixtures of the end-to-end tier: real ``golf serve`` processes on free ports, on SQLite and on PostgreSQL.

``server`` is module-scoped (one process and one database per module and database kind, shared by the module's
tests); tests that stop or restart the server build their own from ``database_url`` (tests/conftest.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ADMIN_URL, _need_postgres
from tests.e2e.support import Grpc, Rest, Server, migrate


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def module_database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Like ``database_url``, but one fresh database per module: each module's tests run on both kinds."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('e2e-db') / 'golf.db'}"
        return
    _need_postgres()
    name = f"golf_e2e_{secrets.token_hex(6)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _run(database_url: str, log_dir: Path) -> Iterator[Server]:
    migrate(database_url)
    srv = Server(database_url, log_dir).start()
    try:
        yield srv
    finally:
        if srv.proc is not None:
            code = srv.stop()
            assert code == 0, f"golf serve exited with {code} after SIGTERM:\n{srv.log_text()}"


@pytest.fixture(scope="module")
def server(module_database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A running server of its own database, shared by the tests of one module."""
    yield from _run(module_database_url, tmp_path_factory.mktemp("e2e-server"))


@pytest.fixture
def own_server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    """A running server of this test alone (the test may stop and restart it)."""
    yield from _run(database_url, tmp_path)


@pytest.fixture(scope="module")
def rest(server: Server) -> Iterator[Rest]:
    client = Rest(server.http_url)
    yield client
    client.close()


@pytest.fixture(scope="module")
def grpc_client(server: Server, rest: Rest) -> Iterator[Grpc]:
    """The same player as ``rest``: tests may start a game over one transport and go on over the other."""
    client = Grpc(server.grpc_target, as_=rest)
    yield client
    client.close()


@pytest.fixture(params=["rest", "grpc"])
def client(request: pytest.FixtureRequest, rest: Rest, grpc_client: Grpc) -> Rest | Grpc:
    """Each test using this runs over both transports."""
    return rest if request.param == "rest" else grpc_client
