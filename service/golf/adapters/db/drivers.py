"""The two database drivers behind one small interface: asyncpg for PostgreSQL, sqlite3 for SQLite.

The hot path (one move = one short transaction) goes straight to the drivers: SQLAlchemy's async layer costs
more CPU per statement than the rest of a move. The schema itself is declared in ``tables.py`` (SQLModel) and
changed only by Alembic migrations.

SQL is written once with ``?`` placeholders; the PostgreSQL driver rewrites them to ``$1, $2, ...``.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import asyncpg

from golf.adapters.db.urls import is_sqlite, sync_url


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
    async def fetchall(self, sql: str, *args: Any) -> Sequence[Row]: ...
    async def commit(self) -> None: ...
    async def rollback(self) -> None: ...


class Driver(Protocol):
    url: str

    async def begin(self) -> tuple[Transaction, Any]:
        """A started transaction and a token to hand back to ``release``."""
        ...

    async def release(self, token: Any) -> None: ...
    async def ping(self) -> None: ...
    async def close(self) -> None: ...


# -- PostgreSQL ----------------------------------------------------------------------------------------------
_PLACEHOLDER = re.compile(r"\?")
_pg_sql: dict[str, str] = {}


def _numbered(sql: str) -> str:
    out = _pg_sql.get(sql)
    if out is None:
        counter = iter(range(1, 1000))
        out = _pg_sql[sql] = _PLACEHOLDER.sub(lambda _m: f"${next(counter)}", sql)
    return out


class _PgTransaction:
    """BEGIN is sent with the first statement, not before: a unit of work whose only statement is atomic on
    its own (``fetchone_atomic``) then costs one round trip instead of three."""

    dialect = "postgresql"

    def __init__(self, conn: asyncpg.Connection[Any]) -> None:
        self.conn = conn
        self.tx = conn.transaction()
        self.started = False

    async def _begin(self) -> None:
        if not self.started:
            await self.tx.start()
            self.started = True

    async def execute(self, sql: str, *args: Any) -> int:
        await self._begin()
        try:
            status: str = await self.conn.execute(_numbered(sql), *args)
        except asyncpg.UniqueViolationError as err:
            raise UniqueViolation(err.constraint_name or "") from err
        # Status tags look like "INSERT 0 1" or "UPDATE 1": the last word is the row count.
        return int(status.rsplit(" ", 1)[-1]) if status[-1].isdigit() else 0

    async def fetchone(self, sql: str, *args: Any) -> Row | None:
        await self._begin()
        row: Row | None = await self.conn.fetchrow(_numbered(sql), *args)
        return row

    async def fetchone_atomic(self, sql: str, *args: Any) -> Row | None:
        """One statement that is atomic by itself: outside a transaction it runs (and commits) alone.

        A statement guarded by a division by zero (it aborts itself when a condition fails) gives None.
        """
        try:
            row: Row | None = await self.conn.fetchrow(_numbered(sql), *args)
        except asyncpg.UniqueViolationError as err:
            raise UniqueViolation(err.constraint_name or "") from err
        except asyncpg.DivisionByZeroError:
            return None
        return row

    async def fetchall(self, sql: str, *args: Any) -> Sequence[Row]:
        await self._begin()
        rows: Sequence[Row] = await self.conn.fetch(_numbered(sql), *args)
        return rows

    async def commit(self) -> None:
        if self.started:
            await self.tx.commit()

    async def rollback(self) -> None:
        if self.started:
            await self.tx.rollback()


class PostgresDriver:
    def __init__(self, url: str, pool_size: int) -> None:
        self.url = url
        self._dsn = sync_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        self._pool_size = pool_size
        self._pool: asyncpg.Pool[Any] | None = None
        self._opening = asyncio.Lock()

    async def _get_pool(self) -> asyncpg.Pool[Any]:
        if self._pool is None:
            async with self._opening:
                if self._pool is None:
                    # A server-side statement timeout: asyncpg's command_timeout costs a timer per statement.
                    self._pool = await asyncpg.create_pool(
                        self._dsn,
                        min_size=1,
                        max_size=self._pool_size,
                        server_settings={"statement_timeout": "30000"},
                    )
        return self._pool

    async def begin(self) -> tuple[Transaction, Any]:
        pool = await self._get_pool()
        conn = await pool.acquire()
        return _PgTransaction(conn), conn

    async def release(self, token: Any) -> None:
        pool = await self._get_pool()
        await pool.release(token)

    async def ping(self) -> None:
        pool = await self._get_pool()
        await pool.fetchval("SELECT 1")

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None


# -- SQLite --------------------------------------------------------------------------------------------------
def _sqlite_arg(value: Any) -> Any:
    # Same text form SQLAlchemy uses for DateTime on SQLite: naive UTC, so text order is time order.
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    return value


class _SqliteTransaction:
    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def _run(self, sql: str, args: tuple[Any, ...]) -> sqlite3.Cursor:
        try:
            return self.conn.execute(sql, tuple(_sqlite_arg(a) for a in args))
        except sqlite3.IntegrityError as err:
            text = str(err)
            if "UNIQUE" in text:
                raise UniqueViolation(text) from err
            raise

    async def execute(self, sql: str, *args: Any) -> int:
        return self._run(sql, args).rowcount

    async def fetchone(self, sql: str, *args: Any) -> Row | None:
        row: Row | None = self._run(sql, args).fetchone()
        return row

    async def fetchone_atomic(self, sql: str, *args: Any) -> Row | None:
        return await self.fetchone(sql, *args)

    async def fetchall(self, sql: str, *args: Any) -> Sequence[Row]:
        rows: Sequence[Row] = self._run(sql, args).fetchall()
        return rows

    async def commit(self) -> None:
        self.conn.execute("COMMIT")

    async def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


class SqliteDriver:
    """One connection used from the event loop's thread; transactions run one at a time (SQLite has one writer).

    Statements are microseconds, so they run inline rather than hopping to a thread. ``synchronous=FULL``
    makes every acknowledged commit durable, even across a power cut.
    """

    def __init__(self, url: str, synchronous: str = "FULL") -> None:
        self.url = url
        database = sync_url(url).database or ""
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(database or ":memory:", isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(f"PRAGMA synchronous={synchronous}")
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._lock = asyncio.Lock()

    async def begin(self) -> tuple[Transaction, Any]:
        await self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise
        return _SqliteTransaction(self._conn), None

    async def release(self, token: Any) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")
        self._lock.release()

    async def ping(self) -> None:
        self._conn.execute("SELECT 1").fetchone()

    async def close(self) -> None:
        self._conn.close()


def open_driver(url: str, pool_size: int = 10, sqlite_synchronous: str = "FULL") -> Driver:
    """The driver for a plain database URL."""
    if is_sqlite(url):
        return SqliteDriver(url, sqlite_synchronous)
    return PostgresDriver(url, pool_size)
