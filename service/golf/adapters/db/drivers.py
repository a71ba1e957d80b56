"""What the two database drivers share: the interface the stores use (``Driver``, ``Transaction``, ``Row``),
``UniqueViolation`` and ``Outage``. Each database has its own module: ``postgres_driver.py`` (asyncpg, with its
connection pool in ``postgres_pool.py``) and ``sqlite_driver.py`` (sqlite3); ``repository.open_driver`` picks one for
a URL.

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

import logging
import time
from collections.abc import Sequence
from typing import Any, Protocol

from golf.adapters.db.group_commit import Grouped
from golf.app.errors import StorageUnavailable

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
