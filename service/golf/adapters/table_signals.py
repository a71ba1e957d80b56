"""PostgreSQL's NOTIFY and LISTEN between the processes of the service, for the live table events
(``golf.adapters.table_fanout``): each process sends ``NOTIFY golf_tables, '<table_id>:<version>'`` after its
commits and LISTENs on a connection of its own, so a move made through another process wakes its hub at once.

NOTIFY after the commit, not ``pg_notify`` in the mutation's transaction: see ``golf.adapters.table_fanout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg

from golf.adapters.db.urls import sync_url

log = logging.getLogger("golf.events")

NOTIFY_CHANNEL = "golf_tables"


def _dsn(url: str) -> str:
    return sync_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _where(url: str) -> str:
    parsed = sync_url(url)
    return f"{parsed.host or 'localhost'}:{parsed.port or 5432}/{parsed.database or ''}"


class PgTableSignals:
    """``NOTIFY golf_tables, '<table_id>:<version>'`` after this process's commits, and a LISTEN connection of its
    own that wakes the hub (``on_signal``) when another process's commit moves a table on.

    Notifications wait in a map (one per table: the latest version), sent together in one statement: a burst of
    commits costs one round trip. The connection is checked every ``ping_seconds``; when it is lost the loss is
    logged once, it is opened again with a growing delay (``backoff_seconds`` up to ``max_backoff_seconds``), and
    once it LISTENs again every watched table is read again (``on_reconnect``): what was missed meanwhile costs
    latency, never an event (and the hub's timer reads them anyway)."""

    def __init__(
        self,
        url: str,
        on_signal: Callable[[str, int], None],
        on_reconnect: Callable[[], None],
        channel: str = NOTIFY_CHANNEL,
        ping_seconds: float = 10.0,
        backoff_seconds: float = 0.25,
        max_backoff_seconds: float = 15.0,
        connect: Callable[[str], Awaitable[Any]] | None = None,
    ) -> None:
        self._dsn = _dsn(url)
        self._where = _where(url)
        self._on_signal = on_signal
        self._on_reconnect = on_reconnect
        self.channel = channel
        self.ping_seconds = ping_seconds
        self.backoff_seconds = backoff_seconds
        self.max_backoff_seconds = max_backoff_seconds
        self._connect = connect or (lambda dsn: asyncpg.connect(dsn, timeout=5.0))
        self._pending: dict[str, int] = {}
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._conn: Any = None
        self.listening = asyncio.Event()
        """Set while the LISTEN connection is up (tests wait for it)."""
        self.connects = 0
        """How many times the LISTEN connection was opened."""
        self.sent = 0
        """Notifications sent (one per table per batch)."""

    def publish(self, table_id: str, version: int) -> None:
        """A commit in this process took ``table_id`` to ``version`` (a ``TableService`` publisher): tell the
        other processes, soon (never blocks, never raises)."""
        if version > self._pending.get(table_id, -1):
            self._pending[table_id] = version
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    @property
    def server_pid(self) -> int | None:
        """The PostgreSQL backend of the LISTEN connection while it is up (for operators and tests)."""
        return int(self._conn.get_server_pid()) if self._conn is not None else None

    async def _run(self) -> None:
        delay = self.backoff_seconds
        down = False
        while True:
            try:
                conn = await self._connect(self._dsn)
            except asyncio.CancelledError:
                raise
            except Exception as err:
                if not down:
                    down = True
                    log.warning("table events: cannot LISTEN on PostgreSQL (%s: %s); retrying", self._where, err)
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.max_backoff_seconds)
                continue
            down = False
            self._conn = conn
            opened = time.monotonic()
            try:
                await self._serve(conn)  # returns only by raising
            except asyncio.CancelledError:
                raise
            except Exception as err:
                log.warning(
                    "table events: the LISTEN connection to PostgreSQL (%s) was lost (%s); reconnecting",
                    self._where,
                    str(err) or type(err).__name__,
                )
            finally:
                self.listening.clear()
                self._conn = None
                conn.terminate()
            if time.monotonic() - opened > 4 * self.max_backoff_seconds:
                delay = self.backoff_seconds  # it had been up a good while: not the same outage
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_backoff_seconds)

    async def _serve(self, conn: Any) -> None:
        lost = asyncio.Event()
        conn.add_termination_listener(lambda _conn: lost.set())
        own_pid = conn.get_server_pid()

        def heard(_conn: Any, pid: int, _channel: str, payload: str) -> None:
            if pid == own_pid:
                return  # this process's own commit: the hub was told already
            table_id, _, version = payload.rpartition(":")
            try:
                seq = int(version)
            except ValueError:
                log.warning("table events: a notification that is not '<table>:<version>': %r", payload[:100])
                return
            self._on_signal(table_id, seq)

        await conn.add_listener(self.channel, heard)
        self.connects += 1
        if self.connects > 1:
            log.warning("table events: LISTEN on PostgreSQL (%s) again; reading every watched table", self._where)
        self.listening.set()
        self._on_reconnect()  # whatever was notified while nobody listened
        while True:
            if not self._pending:
                self._wake.clear()
                waiter = asyncio.ensure_future(self._wake.wait())
                gone = asyncio.ensure_future(lost.wait())
                try:
                    await asyncio.wait({waiter, gone}, timeout=self.ping_seconds, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
                    gone.cancel()
            if lost.is_set() or conn.is_closed():
                raise ConnectionError("connection closed")
            if self._pending:
                batch, self._pending = self._pending, {}
                try:
                    await conn.execute(
                        "SELECT pg_notify($1, x) FROM unnest($2::text[]) AS x",
                        self.channel,
                        [f"{t}:{v}" for t, v in batch.items()],
                    )
                except BaseException:
                    for table_id, version in batch.items():  # sent after the reconnect
                        if version > self._pending.get(table_id, -1):
                            self._pending[table_id] = version
                    raise
                self.sent += len(batch)
            else:
                await asyncio.wait_for(conn.fetchval("SELECT 1"), timeout=5.0)


__all__ = ["NOTIFY_CHANNEL", "PgTableSignals"]
