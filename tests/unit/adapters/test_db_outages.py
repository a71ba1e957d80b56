"""The drivers' view of a database out of reach: connection-level failures become ``StorageUnavailable`` (UNAVAILABLE /
503 with a retry delay), each outage is logged once when it begins and once when it ends, and the driver recovers
by itself. Also the log filters that keep an outage, and a client that hung up, from filling the log."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import grpc
import pytest

from golf.adapters.db import postgres_driver, sqlite_driver
from golf.adapters.db.drivers import Outage
from golf.adapters.db.group_commit import GroupCommit
from golf.adapters.db.migrate import upgrade
from golf.adapters.db.postgres_driver import PostgresDriver
from golf.adapters.db.repository import Database
from golf.adapters.db.sqlite_driver import SqliteDriver
from golf.adapters.health import Readiness
from golf.adapters.logs import ClientGoneQuiet, OutageLoggedOnce
from golf.api.errors import to_api_error
from golf.app.errors import StorageUnavailable
from golf.v1 import errors_pb2
from tests.e2e.support import free_ports


def _lines(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "golf.db" and text in r.getMessage()]


def test_the_error_table_row() -> None:
    failure = to_api_error(StorageUnavailable("connection refused"))
    assert failure.code == grpc.StatusCode.UNAVAILABLE and failure.http_status == 503
    assert failure.retry_after == 2.0 and failure.body.retry_delay.seconds == 2
    assert failure.body.reason == errors_pb2.ERROR_REASON_UNAVAILABLE
    assert "connection refused" not in failure.body.message and "try again" in failure.body.message


def test_an_outage_is_logged_once_when_it_begins_and_once_when_it_ends(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "golf.db")
    outage = Outage("somewhere")
    outage.answered()  # no outage: nothing to say
    errors = [outage.lost("connection refused") for _ in range(5)]
    assert all(isinstance(e, StorageUnavailable) and e.reason == "connection refused" for e in errors)
    outage.answered()
    outage.answered()
    down = _lines(caplog, "database unreachable")
    assert len(down) == 1 and down[0].levelno == logging.ERROR
    assert "connection refused" in down[0].getMessage() and "somewhere" in down[0].getMessage()
    up = _lines(caplog, "database reachable again")
    assert len(up) == 1 and up[0].levelno == logging.WARNING
    outage.lost("connection reset")  # a new outage is a new line
    assert len(_lines(caplog, "database unreachable")) == 2


def test_a_failed_write_ends_only_with_a_write(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "golf.db")
    outage = Outage("somewhere")
    outage.lost("disk I/O error", until_write=True)
    outage.answered()  # a read worked: writes may still fail
    assert outage.since is not None and not _lines(caplog, "reachable again")
    outage.answered(wrote=True)
    assert outage.since is None and len(_lines(caplog, "reachable again")) == 1


# -- SQLite ------------------------------------------------------------------------------------------------------
async def _count_games(db: Database) -> int:
    async with db() as uow:
        row = await uow.tx.fetchone("SELECT COUNT(*) AS n FROM games")
    assert row is not None
    return int(row["n"])


async def test_sqlite_file_moved_away_and_back(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "golf.db")
    folder = tmp_path / "data"
    url = f"sqlite:///{folder / 'golf.db'}"
    folder.mkdir()
    upgrade(url)
    db = Database(url)
    try:
        assert await _count_games(db) == 0
        folder.rename(tmp_path / "away")
        for _ in range(3):
            with pytest.raises(StorageUnavailable) as info:
                await _count_games(db)
            assert "no such file or directory" in info.value.reason
        verdict = await Readiness(db, None, ()).check()
        assert not verdict.ready and verdict.checks["database"].startswith("unreachable: no database file")
        (tmp_path / "away").rename(folder)
        assert await _count_games(db) == 0  # the same connection goes on
        assert len(_lines(caplog, "database unreachable")) == 1
        assert len(_lines(caplog, "database reachable again")) == 1
    finally:
        await db.dispose()


async def test_sqlite_file_replaced_is_opened_again(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    other = f"sqlite:///{tmp_path / 'other.db'}"
    upgrade(url)
    upgrade(other)
    with sqlite3.connect(tmp_path / "other.db") as conn:
        conn.execute("CREATE TABLE marker (x)")
    db = Database(url)
    try:
        await _count_games(db)
        (tmp_path / "other.db").replace(tmp_path / "golf.db")
        async with db() as uow:
            assert await uow.tx.fetchone("SELECT COUNT(*) FROM marker") is not None
    finally:
        await db.dispose()


async def test_sqlite_never_creates_the_file_it_lost(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    upgrade(url)
    driver = SqliteDriver(url)
    try:
        (tmp_path / "golf.db").unlink()
        with pytest.raises(StorageUnavailable):
            await driver.begin()
        assert not (tmp_path / "golf.db").exists()
    finally:
        await driver.close()


class _FailingConn:
    """A sqlite3 connection whose statements fail like a disk that fails."""

    in_transaction = True
    total_changes = 0

    def __init__(self, error: sqlite3.Error) -> None:
        self.error = error

    def execute(self, sql: str, *args: Any) -> Any:
        raise self.error


@pytest.mark.parametrize("message", ["disk I/O error", "unable to open database file", "database or disk is full"])
async def test_sqlite_io_errors_are_unavailable(message: str) -> None:
    tx = sqlite_driver._SqliteTransaction(_FailingConn(sqlite3.OperationalError(message)), Outage("x"))  # type: ignore[arg-type]
    with pytest.raises(StorageUnavailable):
        await tx.execute("UPDATE games SET version = 1")
    with pytest.raises(StorageUnavailable):
        await tx.commit()


async def test_sqlite_other_errors_stay_what_they_are() -> None:
    tx = sqlite_driver._SqliteTransaction(_FailingConn(sqlite3.OperationalError("no such table: x")), Outage("x"))  # type: ignore[arg-type]
    with pytest.raises(sqlite3.OperationalError):
        await tx.fetchone("SELECT * FROM x")


async def test_sqlite_release_frees_the_lock_even_when_rollback_fails(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    upgrade(url)
    driver = SqliteDriver(url)
    real = driver._conn
    try:
        _tx, token = await driver.begin()
        driver._conn = _FailingConn(sqlite3.OperationalError("disk I/O error"))  # type: ignore[assignment]
        await driver.release(token)
        assert not driver._lock.locked()
    finally:
        driver._conn = real
        real.execute("ROLLBACK")
        await driver.close()


# -- PostgreSQL --------------------------------------------------------------------------------------------------
async def test_postgres_refused_is_unavailable_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "golf.db")
    (port,) = free_ports(1)  # nothing listens there
    driver = PostgresDriver(f"postgresql://golf@127.0.0.1:{port}/golf", 2)
    try:
        for _ in range(4):
            with pytest.raises(StorageUnavailable) as info:
                await driver.begin()
        with pytest.raises(StorageUnavailable):
            await driver.ping()
    finally:
        await driver.close()
    assert info.value.reason in ("connection refused", "still unreachable")
    down = _lines(caplog, "database unreachable")
    assert len(down) == 1 and "connection refused" in down[0].getMessage()
    assert f"127.0.0.1:{port}/golf" in down[0].getMessage() and "password" not in down[0].getMessage()


class _Interrupted:
    """asyncpg's transaction after an interrupted BEGIN or COMMIT, on a connection that is still open."""

    def __init__(self) -> None:
        self.terminated = False

    def is_closed(self) -> bool:
        return self.terminated

    def terminate(self) -> None:
        self.terminated = True

    def transaction(self) -> Any:
        import asyncpg

        class Tx:
            async def rollback(self) -> None:
                raise asyncpg.InterfaceError("cannot rollback; the transaction is in error state")

        return Tx()


async def _never_connect() -> Any:
    raise AssertionError("the transaction's own connection is used")


async def test_postgres_interrupted_transaction_closes_its_connection() -> None:
    conn = _Interrupted()
    tx = postgres_driver._PgTransaction(None, Outage("x"), GroupCommit(_never_connect, str, lambda err, conn: err))  # type: ignore[arg-type]
    tx.conn, tx.tx = conn, conn.transaction()  # type: ignore[assignment]
    await tx.rollback()  # no InterfaceError in place of what interrupted it
    assert conn.terminated


# -- log filters -------------------------------------------------------------------------------------------------
def _record(name: str, level: int, exc: BaseException | None) -> logging.LogRecord:
    info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord(name, level, __file__, 1, "something [%s]", ("/golf.v1.X/Y",), info)


def test_outage_records_are_dropped() -> None:
    keep = OutageLoggedOnce()
    assert not keep.filter(_record("golf.app.dealing", logging.ERROR, StorageUnavailable("down")))
    assert keep.filter(_record("golf.app.dealing", logging.ERROR, ValueError("a bug")))
    assert keep.filter(_record("golf", logging.INFO, None))


def test_answers_to_clients_that_left_are_not_errors() -> None:
    class ExecuteBatchError(Exception):
        pass

    quiet = ClientGoneQuiet()
    record = _record("grpc._cython.cygrpc", logging.ERROR, ExecuteBatchError("Failed execute_batch"))
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.INFO)
    try:
        assert not quiet.filter(record)
        assert record.levelno == logging.DEBUG and record.exc_info is None
        assert quiet.filter(_record("grpc._cython.cygrpc", logging.ERROR, RuntimeError("other")))
        assert quiet.filter(_record("golf.grpc", logging.ERROR, ExecuteBatchError()))
    finally:
        root.setLevel(level)
