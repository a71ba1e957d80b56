"""The PostgreSQL driver's connection pool: connections for one unit of work at a time each."""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

IDLE_LIFETIME = 300.0
"""Seconds an idle pooled connection is kept beyond the first (asyncpg's pool default)."""
_Connect = Callable[[], Awaitable["asyncpg.Connection[Any]"]]

CLOSE_TIMEOUT = 5.0
"""Seconds a connection the pool no longer keeps may take to close gracefully before it is terminated."""


class PostgresPool:
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
    """Whether ``conn``'s last statement is still being cancelled (its request was: a client that hung up).

    asyncpg says so only in private (``Protocol._is_cancelling``, what its own pool reads before reusing a
    connection); no public call tells it (``is_in_transaction`` and ``is_closed`` are both False then). Hence the
    pinned range of asyncpg in pyproject.toml, and ``tests/integration/test_pg_cancelling.py``, which fails when a
    new asyncpg drops or renames it: raise the pin only with that test passing."""
    cancelling = getattr(conn._protocol, "_is_cancelling", None)
    return bool(cancelling()) if cancelling is not None else False


async def _close_quietly(conn: asyncpg.Connection[Any]) -> None:
    try:
        await conn.close(timeout=CLOSE_TIMEOUT)
    except Exception:
        conn.terminate()
