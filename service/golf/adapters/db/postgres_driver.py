"""The PostgreSQL driver: asyncpg, on connections of its own pool (``postgres_pool.py``), with group commit
(``group_commit.py``) for the hot path's grouped statements.

SQL is written once with ``?`` placeholders (both drivers take it); this driver numbers them ``$1, $2, ...``.
"""

from __future__ import annotations

import asyncio
import errno
import itertools
import re
import socket
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import asyncpg

from golf.adapters.db.drivers import Outage, Row, Transaction, UniqueViolation
from golf.adapters.db.group_commit import GroupCommit, Grouped, ended_while_idle
from golf.adapters.db.postgres_pool import PostgresPool
from golf.adapters.db.urls import sync_url


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

    def __init__(self, pool: PostgresPool, outage: Outage, group: GroupCommit) -> None:
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


class PostgresDriver:
    def __init__(self, url: str, pool_size: int, group_commit_delay: float = 0.0) -> None:
        self.url = url
        self._group_commit_delay = group_commit_delay
        parsed = sync_url(url)
        self._dsn = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        self._pool_size = pool_size
        self._pool: PostgresPool | None = None
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

    async def _get_pool(self) -> PostgresPool:
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    pool = PostgresPool(self._new_connection, self._pool_size)
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
