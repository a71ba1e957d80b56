"""Fixtures of the end-to-end tier: real ``golf serve`` processes on free ports, on SQLite and on PostgreSQL.

``server`` is one process per database kind and test process, shared by every module that does not ask for its
own: starting a server costs about a second and a half of CPU and two to four seconds of the clock, and the tier
has some forty modules on two kinds. The shared servers' tests make players of their own, so what one module leaves
behind is another player's. A module that stops, breaks or measures its server (kills its database backends, counts
its memory or its connections, reads its whole log for faults it causes) sets ``OWN_SERVER = True`` and gets one
process and one fresh database of its own, as every module did before. Tests that stop or restart a server build
their own from ``database_url`` (tests/conftest.py).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.conftest import ADMIN_URL, _need_postgres
from tests.e2e.support import Grpc, Rest, Server, migrate


def _new_database(kind: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    if kind == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('e2e-db') / 'golf.db'}"
    name = f"golf_e2e_{secrets.token_hex(6)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"


def _drop_database(url: str) -> None:
    if url.startswith("postgresql"):
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def db_kind(request: pytest.FixtureRequest) -> str:
    """The kind of database a module's tests run on: each module runs on both (a module may narrow it with
    ``pytest.mark.parametrize("db_kind", [...], indirect=True)``)."""
    if request.param == "postgres":
        _need_postgres()
    kind: str = request.param
    return kind


@pytest.fixture(scope="module")
def module_database_url(db_kind: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Like ``database_url``, but one fresh database per module and kind."""
    url = _new_database(db_kind, tmp_path_factory)
    try:
        yield url
    finally:
        _drop_database(url)


def _run(database_url: str, log_dir: Path) -> Iterator[Server]:
    migrate(database_url)
    srv = Server(database_url, log_dir).start()
    try:
        yield srv
    finally:
        if srv.proc is not None:
            code = srv.stop()
            assert code == 0, f"golf serve exited with {code} after SIGTERM:\n{srv.log_text()}"


class SharedServers:
    """One server of each database kind for this test process, started when first asked for."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp = tmp_path_factory
        self._servers: dict[str, Server] = {}
        self._urls: list[str] = []

    def get(self, kind: str) -> Server:
        srv = self._servers.get(kind)
        if srv is None:
            url = _new_database(kind, self._tmp)
            self._urls.append(url)
            migrate(url)
            srv = self._servers[kind] = Server(url, self._tmp.mktemp(f"e2e-shared-{kind}")).start()
        assert srv.proc is not None and srv.proc.poll() is None, f"the shared server died:\n{srv.log_text()}"
        return srv

    def close(self) -> None:
        codes = {kind: srv.stop() for kind, srv in self._servers.items() if srv.proc is not None}
        for url in self._urls:
            _drop_database(url)
        bad = {kind: code for kind, code in codes.items() if code != 0}
        assert not bad, f"shared golf serve exited with {bad} after SIGTERM"


@pytest.fixture(scope="session")
def shared_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedServers]:
    servers = SharedServers(tmp_path_factory)
    try:
        yield servers
    finally:
        servers.close()


@pytest.fixture(scope="module")
def server(
    request: pytest.FixtureRequest,
    db_kind: str,
    shared_servers: SharedServers,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """A running server: this process's shared one of the kind, or the module's own (``OWN_SERVER = True``)."""
    if getattr(request.module, "OWN_SERVER", False):
        url = request.getfixturevalue("module_database_url")
        yield from _run(url, tmp_path_factory.mktemp("e2e-server"))
    else:
        yield shared_servers.get(db_kind)


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
