"""The SQLite driver: the standard library's sqlite3, one connection per process."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import quote

from golf.adapters.db.drivers import Outage, Row, Transaction, UniqueViolation
from golf.adapters.db.group_commit import Grouped
from golf.adapters.db.urls import sync_url
from golf.app.errors import Conflict

log = logging.getLogger("golf.db")


# -- SQLite --------------------------------------------------------------------------------------------------
def _sqlite_arg(value: Any) -> Any:
    # Same text form SQLAlchemy uses for DateTime on SQLite: naive UTC, so text order is time order.
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return value


# SQLite's primary result codes (the low byte of an extended one) of a database that cannot be used right now.
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN = 5, 6, 10, 13, 14


def _sqlite_unusable(err: sqlite3.Error) -> bool:
    """Whether ``err`` says the database file cannot be used now (I/O error, disk full, cannot be opened)."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_IOERR, _SQLITE_FULL, _SQLITE_CANTOPEN)
    text = str(err)
    return text in ("disk I/O error", "unable to open database file") or text.startswith("database or disk is full")


def _sqlite_busy(err: sqlite3.OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED: the database is locked by another connection."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return str(err).startswith(("database is locked", "database table is locked"))


class _SqliteTransaction:
    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, outage: Outage) -> None:
        self.conn = conn
        self.outage = outage
        self.changes = conn.total_changes

    def _failed(self, err: sqlite3.OperationalError) -> NoReturn:
        if _sqlite_unusable(err):
            # Reads may still work when writes fail (a full disk, failing writes): only a write ends the outage.
            raise self.outage.lost(str(err), until_write=True) from err
        if _sqlite_busy(err):
            # Another process (a second server on the file, a migration, a shell) held the write lock past the
            # busy timeout: the request is safe to retry, as after any lost race.
            raise Conflict("the database is busy with another writer; retry") from err
        raise err

    def _run(self, sql: str, args: tuple[Any, ...]) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, tuple(_sqlite_arg(a) for a in args))
        except sqlite3.IntegrityError as err:
            text = str(err)
            if "UNIQUE" in text:
                raise UniqueViolation(text) from err
            raise
        except sqlite3.OperationalError as err:
            self._failed(err)

    async def execute(self, sql: str, *args: Any) -> int:
        return self._run(sql, args).rowcount

    async def fetchone(self, sql: str, *args: Any) -> Row | None:
        row: Row | None = self._run(sql, args).fetchone()
        return row

    async def fetchone_atomic(self, sql: str, *args: Any) -> Row | None:
        return await self.fetchone(sql, *args)

    async def fetchone_grouped(self, statement: Grouped, *args: Any) -> Row | None:
        return await self.fetchone(statement.one, *args)

    async def fetchall(self, sql: str, *args: Any) -> Sequence[Row]:
        rows: Sequence[Row] = self._run(sql, args).fetchall()
        return rows

    async def fetchall_atomic(self, sql: str, *args: Any) -> Sequence[Row]:
        return await self.fetchall(sql, *args)

    async def commit(self) -> None:
        try:
            self.conn.execute("COMMIT")
        except sqlite3.OperationalError as err:
            self._failed(err)
        if self.outage.since is not None:
            self.outage.answered(wrote=self.conn.total_changes != self.changes)

    async def rollback(self) -> None:
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.OperationalError as err:
            # Not in place of what made the unit of work fail: SQLite rolls back from its journal when it can.
            if not _sqlite_unusable(err):
                raise


class SqliteDriver:
    """One connection used from the event loop's thread; transactions run one at a time (SQLite has one writer).

    Statements are microseconds, so they run inline rather than hopping to a thread. The exception is BEGIN
    IMMEDIATE while another process (a second server on the file, a migration, a shell) holds the write lock: it may
    wait up to the busy timeout, so it is tried at once on the loop and, if the lock is taken, waited for in a thread
    of its own (``_begin_at_once``). Once a transaction holds the write lock, its statements wait for no other
    connection (WAL). ``synchronous=FULL`` makes every acknowledged commit durable, even across a power cut.

    Each transaction first checks that the database file is still at its path (a ``stat``, about a microsecond):
    an open connection would go on reading and writing a file deleted or moved away (or on a volume taken away),
    and the writes would be lost to anyone who opens the path. While the path has no file the database is
    unreachable; when the same file is back, the connection goes on; when another file is there, it is opened.
    """

    def __init__(self, url: str, synchronous: str = "FULL", busy_timeout_ms: int = 5000) -> None:
        self.url = url
        self._busy_timeout_ms = busy_timeout_ms
        database = sync_url(url).database or ""
        self._synchronous = synchronous
        self._path: str | None = None
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
            self._path = os.path.abspath(database)
        self.outage = Outage(f"sqlite {self._path or ':memory:'}")
        self._conn = self._connect(database or ":memory:", uri=False)
        self._identity = self._file_identity()
        self._lock = asyncio.Lock()
        self._waiter = ThreadPoolExecutor(1, thread_name_prefix="sqlite-lock-wait")
        """Where BEGIN waits for a write lock another process holds (its thread starts with the first such wait)."""

    def _connect(self, target: str, uri: bool) -> sqlite3.Connection:
        conn = sqlite3.connect(target, isolation_level=None, check_same_thread=False, uri=uri)
        try:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
            conn.execute("PRAGMA foreign_keys=ON")
        except BaseException:
            conn.close()
            raise
        return conn

    def _file_identity(self) -> tuple[int, int] | None:
        if self._path is None:
            return None
        st = os.stat(self._path)
        return st.st_dev, st.st_ino

    def _check_file(self) -> None:
        """Raise ``StorageUnavailable`` unless the file at the path is the open one (or could be opened)."""
        if self._path is None:
            return
        try:
            identity = self._file_identity()
        except OSError as err:
            raise self.outage.lost(f"no database file at its path ({(err.strerror or str(err)).lower()})") from err
        if identity != self._identity:
            # Another file is at the path now (restored, or a volume mounted again): open it, without creating one.
            log.warning("the database file %s is not the one that was open: opening it again", self._path)
            self._conn.close()
            try:
                self._conn = self._connect(f"file:{quote(self._path)}?mode=rw", uri=True)
            except sqlite3.OperationalError as err:
                raise self.outage.lost(str(err)) from err
            self._identity = identity

    async def begin(self) -> tuple[Transaction, Any]:
        await self._lock.acquire()
        waiting: asyncio.Future[Any] | None = None
        try:
            self._check_file()
            if not self._begin_at_once():
                # Another process holds the write lock: wait for it (up to the busy timeout) in the waiting thread.
                waiting = asyncio.get_running_loop().run_in_executor(
                    self._waiter, self._conn.execute, "BEGIN IMMEDIATE"
                )
                await asyncio.shield(waiting)
        except sqlite3.OperationalError as err:
            self._lock.release()
            if _sqlite_unusable(err):
                raise self.outage.lost(str(err)) from err
            if _sqlite_busy(err):
                raise Conflict("the database is busy with another writer; retry") from err
            raise
        except BaseException:
            if waiting is None:
                self._lock.release()
            else:
                # Cancelled (its client hung up) while the thread waits: the connection stays the thread's until its
                # BEGIN ends; then what it began is rolled back and the next unit of work gets the connection.
                waiting.add_done_callback(self._end_abandoned)
            raise
        if self.outage.since is not None:
            self.outage.answered()
        return _SqliteTransaction(self._conn, self.outage), None

    def _begin_at_once(self) -> bool:
        """BEGIN IMMEDIATE without waiting; False if another connection holds the write lock. Waiting here, on the
        event loop, would stop both transports for up to the busy timeout (another process on the file: a second
        server, a migration, a shell); the common case (no other process) costs two PRAGMAs, microseconds."""
        conn = self._conn
        conn.execute("PRAGMA busy_timeout=0")
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            if _sqlite_busy(err):
                return False
            raise
        finally:
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
        return True

    def _end_abandoned(self, waiting: asyncio.Future[Any]) -> None:
        """After a cancelled ``begin``'s BEGIN has ended in the waiting thread: roll back what it began, free the
        connection."""
        try:
            if not waiting.cancelled() and waiting.exception() is None and self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # as in ``release``: SQLite rolls back from its journal on the next transaction
        finally:
            self._lock.release()

    async def release(self, token: Any) -> None:
        try:
            if self._conn.in_transaction:
                self._conn.execute("ROLLBACK")
        except sqlite3.OperationalError as err:
            # SQLite rolls back what could not be (its journal), on the next transaction; the failure is the outage's.
            if not _sqlite_unusable(err):
                raise
        finally:
            self._lock.release()

    async def ping(self) -> None:
        tx, token = await self.begin()
        try:
            await tx.fetchone("SELECT 1")
        finally:
            await self.release(token)

    async def close(self) -> None:
        self._waiter.shutdown(wait=False, cancel_futures=True)
        self._conn.close()
