"""The two database drivers behind one small interface: asyncpg for PostgreSQL, sqlite3 for SQLite.

The hot path (one move = one short transaction) goes straight to the drivers: SQLAlchemy's async layer costs
more CPU per statement than the rest of a move. The schema itself is declared in ``tables.py`` (SQLModel) and
changed only by Alembic migrations.

SQL is written once with ``?`` placeholders; the PostgreSQL driver rewrites them to ``$1, $2, ...``.

A database that cannot be reached or used (connections refused or lost, a server that refuses the session: the
database missing, not accepting connections, too many connections, starting up; a backend terminated mid
transaction; no answer in time; a database file that cannot be opened or is no longer at its path, disk I/O errors)
raises ``StorageUnavailable``, which clients get as UNAVAILABLE / 503 with a retry delay. Each outage is logged once
when it begins and once when the database answers again, not per request; nothing has to be restarted: the drivers
reconnect on the next unit of work.
"""

from __future__ import annotations

import asyncio
import collections
import errno
import itertools
import logging
import os
import re
import socket
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn, Protocol
from urllib.parse import quote

import asyncpg

from golf.adapters.db.group_commit import GroupCommit, Grouped, ended_while_idle
from golf.adapters.db.urls import is_sqlite, sync_url
from golf.app.errors import Conflict, StorageUnavailable

log = logging.getLogger("golf.db")


class UniqueViolation(Exception):
    """An insert broke a unique constraint; ``constraint`` names it when the driver says."""

    def __init__(self, constraint: str) -> None:
        super().__init__(constraint)
        self.constraint = constraint


class Row(Protocol):
    def __getitem__(self, key: str | int) -> Any: ...


class Transaction(Protocol):
    dialect: str
    """``postgresql`` or ``sqlite``."""

    async def execute(self, sql: str, *args: Any) -> int:
        """Run a statement; the number of rows it changed."""
        ...

    async def fetchone(self, sql: str, *args: Any) -> Row | None: ...
    async def fetchone_atomic(self, sql: str, *args: Any) -> Row | None: ...
    async def fetchone_grouped(self, statement: Grouped, *args: Any) -> Row | None:
        """``fetchone_atomic`` of ``statement.one``, which PostgreSQL may store in one statement with the same
        statement of concurrent requests (``group_commit``) when this transaction has sent nothing yet."""
        ...

    async def fetchall(self, sql: str, *args: Any) -> Sequence[Row]: ...
    async def fetchall_atomic(self, sql: str, *args: Any) -> Sequence[Row]:
        """A read that needs no transaction of its own: outside one it runs alone (no BEGIN and ROLLBACK around
        it, two round trips fewer on PostgreSQL); inside one, in it."""
        ...

    async def commit(self) -> None: ...
    async def rollback(self) -> None: ...


class Driver(Protocol):
    url: str

    async def begin(self) -> tuple[Transaction, Any]:
        """The unit of work's transaction (on PostgreSQL its connection and BEGIN come with its first statement) and a
        token to hand back to ``release``."""
        ...

    async def release(self, token: Any) -> None: ...
    async def ping(self) -> None: ...
    async def close(self) -> None: ...


# -- outages -------------------------------------------------------------------------------------------------
class Outage:
    """Whether the database is out of reach. The first failure of an outage is logged (ERROR, with the reason) and
    so is the first success after it (WARNING); the requests in between are refused without a line each."""

    def __init__(self, where: str) -> None:
        self.where = where
        """What is unreachable, for the log: host, port and database, or the SQLite file (never a password)."""
        self.since: float | None = None
        """``time.monotonic()`` when the current outage began; None while the database answers."""
        self._until_write = False
        self._until_connect = False

    def lost(self, reason: str, *, until_write: bool = False, until_connect: bool = False) -> StorageUnavailable:
        """The error to raise for a failure of the database; logs it if it begins an outage. ``until_write``: the
        failure was of a write (reads may still work), so only a write that succeeds ends the outage.
        ``until_connect``: a new connection was refused (those already open may still work, e.g. past a connection
        limit or with ``ALLOW_CONNECTIONS false``), so only a connection that opens ends it: a request served by an
        open connection between two refused ones does not make a new outage (and two lines) of each."""
        if self.since is None:
            self.since = time.monotonic()
            self._until_write = until_write
            self._until_connect = until_connect
            log.error(
                "database unreachable: %s (%s); requests are refused with UNAVAILABLE until it answers",
                reason,
                self.where,
            )
        elif until_connect:
            self._until_connect = True
        return StorageUnavailable(reason)

    def answered(self, wrote: bool = False, connected: bool = False) -> None:
        """The database just did what was asked; ends the outage, if there was one, with a line in the log."""
        if self.since is not None and (wrote or not self._until_write) and (connected or not self._until_connect):
            log.warning("database reachable again after %.1f s (%s)", time.monotonic() - self.since, self.where)
            self.since = None


def reason_of(err: BaseException) -> str:
    """A short reason for the log, e.g. ``connection refused``."""
    if isinstance(err, ConnectionRefusedError) or (isinstance(err, OSError) and err.errno == errno.ECONNREFUSED):
        return "connection refused"
    if isinstance(err, ConnectionResetError | ConnectionAbortedError | BrokenPipeError):
        return "connection reset"
    if isinstance(err, TimeoutError):
        return "no answer in time"
    if isinstance(err, socket.gaierror):
        return f"host not found ({err.strerror})"
    if isinstance(err, asyncpg.ConnectionDoesNotExistError):
        return "connection lost"
    if isinstance(err, asyncpg.InterfaceError):
        return "connection closed"
    if isinstance(err, asyncpg.InternalClientError):
        return "connection ended by the server"
    if isinstance(err, asyncpg.QueryCanceledError):
        return "no answer in time (statement cancelled)"
    if isinstance(err, OSError) and err.strerror:
        return err.strerror.lower()
    return (str(err) or type(err).__name__)[:200]


# -- PostgreSQL ----------------------------------------------------------------------------------------------
_PG_UNREACHABLE = (
    OSError,  # refused, reset, unreachable, DNS, TLS, and TimeoutError (connect timeouts)
    asyncpg.PostgresConnectionError,  # SQLSTATE class 08, and a connection lost in the middle of a statement
    asyncpg.CannotConnectNowError,  # the server is starting up or shutting down
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.TooManyConnectionsError,
    # A backend the server ended while its connection sat idle in the pool (``pg_terminate_backend``, a restart): its
    # FATAL message came before the socket closed, and asyncpg refuses to send anything more on it.
    asyncpg.InternalClientError,
    # The server's statement_timeout (or an operator's pg_cancel_backend): the database is too slow to answer now.
    asyncpg.QueryCanceledError,
)
_PG_FAILED = (*_PG_UNREACHABLE, asyncpg.InterfaceError)
"""What a statement may raise for a connection that is lost (``InterfaceError``: one already closed, see
``_pg_failure``)."""


def _pg_failure(err: BaseException, conn: asyncpg.Connection[Any] | None, outage: Outage) -> BaseException:
    """``StorageUnavailable`` (logged once per outage) for a connection-level failure on ``conn`` (None: no
    connection any more), else ``err`` itself. A connection in a state asyncpg cannot go on from is closed."""
    lost = isinstance(err, asyncpg.InterfaceError) and (conn is None or _closed(conn))
    if lost or isinstance(err, _PG_UNREACHABLE):
        if isinstance(err, asyncpg.InternalClientError) and conn is not None and not _closed(conn):
            conn.terminate()  # its rollback would raise the same again; the server has ended it anyway
        return outage.lost(reason_of(err))
    return err


def _closed(conn: Any) -> bool:
    """Whether a pooled connection is closed (a proxy already handed back to the pool counts as closed)."""
    try:
        return bool(conn.is_closed())
    except asyncpg.InterfaceError:
        return True


class _QuietPoolFloor(logging.Filter):
    """asyncpg's pool reconnects its minimum of connections in the background and logs each failure with a traceback
    (every 1 s to 60 s through an outage): the outage is this driver's to log, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], _PG_UNREACHABLE))


logging.getLogger("asyncpg.pool").addFilter(_QuietPoolFloor())
CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a new PostgreSQL connection before the database counts as unreachable."""
STATEMENT_TIMEOUT = 30.0
"""Seconds the server lets a statement run before it cancels it (its ``statement_timeout``)."""
ANSWER_TIMEOUT = STATEMENT_TIMEOUT + 5.0
"""Seconds without an answer to a statement after which the connection counts as lost: past the server's own
timeout, only a stalled network or server is that late (asyncpg's ``command_timeout``: a timer per statement)."""
RETRY_CONNECT_AFTER = 1.0
"""During an outage, a new connection is tried at most this often; requests meanwhile are refused at once."""
_PLACEHOLDER = re.compile(r"\?")
_pg_sql: dict[str, str] = {}


def _numbered(sql: str) -> str:
    """``sql`` with its ``?`` placeholders numbered for PostgreSQL (``$1``, ``$2``, ...; it takes up to 65,535)."""
    out = _pg_sql.get(sql)
    if out is None:
        counter = itertools.count(1)
        out = _pg_sql[sql] = _PLACEHOLDER.sub(lambda _m: f"${next(counter)}", sql)
    return out


class _PgTransaction:
    """A unit of work's connection is taken from the pool with its first statement, not before, and BEGIN is sent
    with the first statement that needs one: a unit of work whose only statement is atomic on its own
    (``fetchone_atomic``) costs one round trip instead of three, and one whose only statement is grouped
    (``fetchone_grouped``, a move) takes no connection of the pool at all.

    A pooled connection the server ended while it was idle (``ended_while_idle``) is found out by the first statement
    sent on it, before anything is sent: that statement (and its BEGIN) goes to another connection instead, up to
    ``STALE_RETRIES`` times, so a restarted or killed backend costs no request that had not begun on it."""

    dialect = "postgresql"

    def __init__(self, pool: _PgPool, outage: Outage, group: GroupCommit) -> None:
        self.pool = pool
        self.conn: asyncpg.Connection[Any] | None = None
        self.tx: asyncpg.transaction.Transaction | None = None
        """The transaction, once BEGIN is sent (or being sent: interrupted, it still needs ending, see ``rollback``)."""
        self.outage = outage
        self.group = group
        self.fresh = False
        """Whether the current statement is the first of this unit of work on its connection (with its BEGIN)."""
        self._stale_retries = 0

    async def _conn(self) -> asyncpg.Connection[Any]:
        if self.conn is None:
            try:
                self.conn = await self.pool.acquire()
            except _PG_UNREACHABLE as err:
                raise self.outage.lost(reason_of(err)) from err
            self.fresh = True
        else:
            self.fresh = False  # a second statement: the first one ran on this connection
        return self.conn

    def _lost(self, err: Exception) -> NoReturn:
        """Raise ``StorageUnavailable`` for a connection-level failure, else ``err`` itself."""
        failure = _pg_failure(err, self.conn, self.outage)
        if failure is err:
            raise err
        raise failure from err

    def _again(self, err: Exception) -> bool:
        """Whether the statement that failed with ``err`` may be sent again on another connection (see the class);
        if so, the stale connection is dropped and the unit of work starts afresh."""
        if not (self.fresh and ended_while_idle(err) and self._stale_retries < STALE_RETRIES):
            return False
        self._stale_retries += 1
        if self.conn is not None:
            self.conn.terminate()
        self.release()
        self.tx = None
        return True

    async def _begin(self) -> asyncpg.Connection[Any]:
        conn = await self._conn()
        if self.tx is None:
            self.tx = tx = conn.transaction()  # set before BEGIN is sent
            await tx.start()
        return conn

    def release(self) -> None:
        """Give the connection back to the pool, if the unit of work took one."""
        conn, self.conn = self.conn, None
        if conn is not None:
            self.pool.release(conn)

    async def execute(self, sql: str, *args: Any) -> int:
        try:
            conn = await self._begin()
            status: str = await conn.execute(_numbered(sql), *args)
        except asyncpg.UniqueViolationError as err:
            raise UniqueViolation(err.constraint_name or "") from err
        except _PG_FAILED as err:
            if self._again(err):
                return await self.execute(sql, *args)
            self._lost(err)
        if self.outage.since is not None:
            self.outage.answered()  # a statement answered (a connection taken from the pool is no answer yet)
        # Status tags look like "INSERT 0 1" or "UPDATE 1": the last word is the row count.
        return int(status.rsplit(" ", 1)[-1]) if status[-1].isdigit() else 0

    async def fetchone(self, sql: str, *args: Any) -> Row | None:
        try:
            conn = await self._begin()
            row: Row | None = await conn.fetchrow(_numbered(sql), *args)
        except _PG_FAILED as err:
            if self._again(err):
                return await self.fetchone(sql, *args)
            self._lost(err)
        if self.outage.since is not None:
            self.outage.answered()
        return row

    async def fetchone_atomic(self, sql: str, *args: Any) -> Row | None:
        """One statement that is atomic by itself: outside a transaction it runs (and commits) alone.

        A statement guarded by a division by zero (it aborts itself when a condition fails) gives None.
        """
        try:
            conn = await self._conn()
            row: Row | None = await conn.fetchrow(_numbered(sql), *args)
        except asyncpg.UniqueViolationError as err:
            raise UniqueViolation(err.constraint_name or "") from err
        except asyncpg.DivisionByZeroError:
            return None
        except _PG_FAILED as err:
            if self._again(err):
                return await self.fetchone_atomic(sql, *args)
            self._lost(err)
        if self.outage.since is not None:
            self.outage.answered()
        return row

    async def fetchone_grouped(self, statement: Grouped, *args: Any) -> Row | None:
        if self.tx is not None:
            return await self.fetchone_atomic(statement.one, *args)
        row: Row | None = await self.group.fetchone(statement, args)
        if self.outage.since is not None:
            self.outage.answered(wrote=True)
        return row

    async def fetchall(self, sql: str, *args: Any) -> Sequence[Row]:
        try:
            conn = await self._begin()
            rows: Sequence[Row] = await conn.fetch(_numbered(sql), *args)
        except _PG_FAILED as err:
            if self._again(err):
                return await self.fetchall(sql, *args)
            self._lost(err)
        if self.outage.since is not None:
            self.outage.answered()
        return rows

    async def fetchall_atomic(self, sql: str, *args: Any) -> Sequence[Row]:
        try:
            conn = await self._conn()
            rows: Sequence[Row] = await conn.fetch(_numbered(sql), *args)
        except _PG_FAILED as err:
            if self._again(err):
                return await self.fetchall_atomic(sql, *args)
            self._lost(err)
        if self.outage.since is not None:
            self.outage.answered()
        return rows

    async def commit(self) -> None:
        if self.tx is not None:
            try:
                await self.tx.commit()
            except _PG_FAILED as err:
                self._lost(err)

    async def rollback(self) -> None:
        # A lost connection has nothing to roll back: the server ends its transaction when the connection drops.
        if self.tx is None or self.conn is None or _closed(self.conn):
            return
        try:
            await self.tx.rollback()
        except asyncpg.InterfaceError:
            # BEGIN or COMMIT was interrupted (the request was cancelled mid-statement: a client that hung up or ran
            # out of time), so asyncpg cannot tell where the transaction is. The connection is closed rather than
            # handed back in that state (the server rolls back whatever is left, and the pool connects anew).
            self.conn.terminate()
        except _PG_UNREACHABLE:
            self.conn.terminate()  # lost on the way, or in a state asyncpg cannot go on from: as above


STALE_RETRIES = 3
"""How many pooled connections, found ended by the server, a unit of work's first statement passes over."""
IDLE_LIFETIME = 300.0
"""Seconds an idle pooled connection is kept beyond the first (asyncpg's pool default)."""
_Connect = Callable[[], Awaitable["asyncpg.Connection[Any]"]]


class _PgPool:
    """PostgreSQL connections for one unit of work at a time each, at most ``max_size`` open.

    asyncpg's own pool costs about as much CPU per acquire and release as the statement a move sends (a task to
    shield each release, a timeout scope, a timer per idle connection, a proxy around every call): here a connection
    is taken and given back with a few list operations. A connection given back in a state that is not plainly idle
    (closed, in a transaction, or its statement being cancelled because its request was) is closed, not reused: the
    server rolls back whatever it held, and the next caller that needs one connects anew.

    Nothing is reset between units of work (asyncpg's default reset sends ``RESET ALL``, ``UNLISTEN *``, ``CLOSE ALL``
    and an advisory unlock, a round trip per transaction; its share of the server's CPU in ``bench/tables.py`` is in
    bench/README.md): the service
    sets no session state (``statement_timeout`` is a connect-time setting), holds no advisory locks or cursors past a
    transaction, and LISTENs on a connection of its own.
    """

    def __init__(self, connect: _Connect, max_size: int) -> None:
        self._connect = connect
        self._max = max_size
        self._idle: list[tuple[asyncpg.Connection[Any], float]] = []  # the last given back at the end, with when
        self._open = 0  # connections open or being opened
        self._waiters: collections.deque[asyncio.Future[asyncpg.Connection[Any] | None]] = collections.deque()
        self._closed = False
        self._closing: set[asyncio.Task[None]] = set()

    async def acquire(self) -> asyncpg.Connection[Any]:
        """An idle connection, else a new one while fewer than ``max_size`` are open, else the next given back."""
        while True:
            if self._closed:
                raise asyncpg.InterfaceError("the connection pool is closed")
            while self._idle:
                conn, _ = self._idle.pop()
                if not conn.is_closed():
                    return conn
                self._open -= 1
            if self._open < self._max:
                self._open += 1
                try:
                    return await self._connect()
                except BaseException:
                    self._open -= 1
                    self._wake(None)  # a caller waiting for a connection may try for itself
                    raise
            waiter: asyncio.Future[asyncpg.Connection[Any] | None] = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                handed = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    # Handed a connection (or a turn) just as this caller was cancelled: to the next one.
                    given = waiter.result()
                    if given is not None:
                        self.release(given)
                    else:
                        self._wake(None)
                raise
            if handed is not None:
                return handed
            # A connection was closed: room to open another (or the pool is closing); look again.

    def release(self, conn: asyncpg.Connection[Any]) -> None:
        """Give ``conn`` back: to the first caller waiting, else to the idle ones."""
        if conn.is_closed() or self._closed or conn.is_in_transaction() or _busy(conn):
            if not conn.is_closed():
                conn.terminate()
            self._open -= 1
            self._wake(None)
            return
        if self._wake(conn):
            return
        now = time.monotonic()
        self._idle.append((conn, now))
        oldest, since = self._idle[0]
        if len(self._idle) > 1 and now - since > IDLE_LIFETIME:
            del self._idle[0]
            self._open -= 1
            self._close_later(oldest)

    def _wake(self, conn: asyncpg.Connection[Any] | None) -> bool:
        """Hand ``conn`` (or, with None, a turn to look again) to the first caller still waiting; False if none."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return True
        return False

    def _close_later(self, conn: asyncpg.Connection[Any]) -> None:
        task = asyncio.get_running_loop().create_task(_close_quietly(conn))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Close the idle connections; those in use are closed as they are given back."""
        self._closed = True
        idle, self._idle = self._idle, []
        self._open -= len(idle)
        while self._wake(None):
            pass
        await asyncio.gather(*(_close_quietly(conn) for conn, _ in idle), *self._closing)


def _busy(conn: asyncpg.Connection[Any]) -> bool:
    """Whether ``conn``'s last statement is still being cancelled (its request was: a client that hung up)."""
    cancelling = getattr(conn._protocol, "_is_cancelling", None)
    return bool(cancelling()) if cancelling is not None else False


async def _close_quietly(conn: asyncpg.Connection[Any]) -> None:
    try:
        await conn.close(timeout=CONNECT_TIMEOUT)
    except Exception:
        conn.terminate()


class PostgresDriver:
    def __init__(self, url: str, pool_size: int, group_commit_delay: float = 0.0) -> None:
        self.url = url
        self._group_commit_delay = group_commit_delay
        parsed = sync_url(url)
        self._dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        self._pool_size = pool_size
        self._pool: _PgPool | None = None
        self._opening = asyncio.Lock()
        self._failed_at = float("-inf")
        self._failed_why = ""
        """Why the last connection failed to open (the reason of those refused at once after it)."""
        self.outage = Outage(f"postgresql {parsed.host or 'localhost'}:{parsed.port or 5432}/{parsed.database or ''}")
        self.group = self._new_group()

    def _new_group(self) -> GroupCommit:
        return GroupCommit(self._new_connection, _numbered, self._failure, self._group_commit_delay)

    async def _new_connection(self) -> asyncpg.Connection[Any]:
        """A new connection, or ``StorageUnavailable``: whatever stops a session from opening is the database's
        failure to the requests that wait for it, be it the network's (refused, reset, no answer in time) or the
        server's (the database missing or not accepting connections, too many connections, starting up, a login
        refused)."""
        # Callers coming after a failed attempt are refused at once, not each after a connect timeout, and the server
        # is not sent a connection storm while it refuses.
        if time.monotonic() - self._failed_at < RETRY_CONNECT_AFTER:
            raise self.outage.lost(self._failed_why, until_connect=True)
        try:
            conn = await asyncpg.connect(
                self._dsn,
                timeout=CONNECT_TIMEOUT,
                # The server cancels a statement that runs too long by itself; asyncpg gives up on a connection that
                # does not answer at all (a stalled network or server) a little after that.
                command_timeout=ANSWER_TIMEOUT,
                server_settings={"statement_timeout": str(int(STATEMENT_TIMEOUT * 1000))},
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError) as err:
            self._failed_at, self._failed_why = time.monotonic(), reason_of(err)
            raise self.outage.lost(self._failed_why, until_connect=True) from err
        self._failed_at = float("-inf")
        if self.outage.since is not None:
            self.outage.answered(connected=True)
        return conn

    async def _get_pool(self) -> _PgPool:
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    pool = _PgPool(self._new_connection, self._pool_size)
                    pool.release(await pool.acquire())  # one connection to begin with: the database answers
                    self._pool = pool
        return self._pool

    async def begin(self) -> tuple[Transaction, Any]:
        tx = _PgTransaction(await self._get_pool(), self.outage, self.group)
        return tx, tx

    async def release(self, token: Any) -> None:
        # A lost connection is dropped there; the next acquire connects anew.
        token.release()

    async def ping(self) -> None:
        tx, token = await self.begin()
        try:
            await tx.fetchone_atomic("SELECT 1")
        finally:
            await self.release(token)

    def _failure(self, err: BaseException, conn: asyncpg.Connection[Any] | None) -> BaseException:
        """What a request gets for ``err`` of a grouped statement: as ``_PgTransaction`` raises it."""
        if isinstance(err, asyncpg.UniqueViolationError):
            return UniqueViolation(err.constraint_name or "")
        return _pg_failure(err, conn, self.outage)

    async def close(self) -> None:
        group, self.group = self.group, self._new_group()
        await group.close()
        if self._pool is not None:
            await self._pool.close()
            self._pool = None


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

    Statements are microseconds, so they run inline rather than hopping to a thread. ``synchronous=FULL``
    makes every acknowledged commit durable, even across a power cut.

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
        try:
            self._check_file()
            self._conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as err:
            self._lock.release()
            if _sqlite_unusable(err):
                raise self.outage.lost(str(err)) from err
            if _sqlite_busy(err):
                raise Conflict("the database is busy with another writer; retry") from err
            raise
        except BaseException:
            self._lock.release()
            raise
        if self.outage.since is not None:
            self.outage.answered()
        return _SqliteTransaction(self._conn, self.outage), None

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
        self._conn.close()


def open_driver(
    url: str, pool_size: int = 10, sqlite_synchronous: str = "FULL", group_commit_delay: float = 0.0
) -> Driver:
    """The driver for a plain database URL (``group_commit_delay``: seconds, see ``GroupCommit``)."""
    if is_sqlite(url):
        return SqliteDriver(url, sqlite_synchronous)
    return PostgresDriver(url, pool_size, group_commit_delay)
