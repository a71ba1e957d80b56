"""Database fixtures shared by every tier: a fresh SQLite file and a fresh PostgreSQL database per test.

PostgreSQL is the one this machine runs at 127.0.0.1:5432 (override with GOLF_TEST_POSTGRES_ADMIN_URL). With
GOLF_TEST_POSTGRES=required (as in CI) a missing server fails the run instead of skipping its tests. Redis, for the
rate limits shared by replicas, likewise: 127.0.0.1:6379 (GOLF_TEST_REDIS_URL), GOLF_TEST_REDIS=required.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from golf.adapters.db.migrate import upgrade

ADMIN_URL = os.environ.get("GOLF_TEST_POSTGRES_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
_server_checked: list[str | None] = []


def _postgres_problem() -> str | None:
    """None when the server answers, else why not (checked once per test process)."""
    if not _server_checked:
        try:
            with psycopg.connect(ADMIN_URL, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _server_checked.append(None)
        except psycopg.Error as err:
            _server_checked.append(f"PostgreSQL at {ADMIN_URL} is not reachable: {err}")
    return _server_checked[0]


def _need_postgres() -> None:
    problem = _postgres_problem()
    if problem is None:
        return
    if os.environ.get("GOLF_TEST_POSTGRES") == "required":
        pytest.fail(problem + " (GOLF_TEST_POSTGRES=required)")
    pytest.skip(problem)  # the postgres guard: skips only when GOLF_TEST_POSTGRES is not "required"


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A new, empty PostgreSQL database of our own, dropped afterwards."""
    _need_postgres()
    name = f"golf_test_{secrets.token_hex(6)}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = ADMIN_URL.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'golf.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str:
    """Each test using this runs twice: on SQLite and on PostgreSQL."""
    name = "sqlite_url" if request.param == "sqlite" else "postgres_url"
    url: str = request.getfixturevalue(name)
    return url


@pytest.fixture
def migrated_url(database_url: str) -> str:
    """A database of either kind with every migration applied."""
    upgrade(database_url)
    return database_url


REDIS_URL = os.environ.get("GOLF_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
_redis_checked: list[str | None] = []


def _redis_problem() -> str | None:
    """None when the server answers PING, else why not (checked once per test process)."""
    if not _redis_checked:
        parts = urlsplit(REDIS_URL)
        try:
            with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=3) as sock:
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
            _redis_checked.append(None if reply.startswith(b"+PONG") else f"Redis at {REDIS_URL} answered {reply!r}")
        except OSError as err:
            _redis_checked.append(f"Redis at {REDIS_URL} is not reachable: {err}")
    return _redis_checked[0]


@pytest.fixture
def redis_url() -> str:
    """The test Redis server's URL; skips (or fails, with GOLF_TEST_REDIS=required) when it does not answer."""
    problem = _redis_problem()
    if problem is not None:
        if os.environ.get("GOLF_TEST_REDIS") == "required":
            pytest.fail(problem + " (GOLF_TEST_REDIS=required)")
        pytest.skip(problem)  # the redis guard: skips only when GOLF_TEST_REDIS is not "required"
    return REDIS_URL
