"""Live table events to this process's subscribers, woken by commits here, by other processes, and by a timer.

``TableHub`` keeps, per table watched in this process, the table as of its latest entry (``TableTimeline``) and
its subscribers, each with a BOUNDED queue: a subscriber whose queue is full is cut off (``StreamEnded``: its
client connects again with the last sequence number it has and reads what it missed from the log), so a slow
client never makes the process hold more. What wakes a table:

- ``publish(table_id, version)``, the ``TableService`` publisher, after every commit in this process;
- ``PgTableSignals`` on PostgreSQL (``golf.adapters.table_signals``): each process sends
  ``NOTIFY golf_tables, '<table_id>:<version>'`` after its commits and LISTENs on a connection of its own, so a
  move made through another process wakes this one at once;
- a timer (``catch_up_seconds``) that compares every watched table with its row in the database: a notification
  that was lost (a LISTEN connection down, a process killed between its commit and its NOTIFY) costs latency,
  never an event.

Whatever woke it, the hub reads the entries after the version it holds (one query per table, however many
notifications came meanwhile), applies them once, and pushes each event to every subscriber of the table.

NOTIFY after the commit, not ``pg_notify`` in the mutation's transaction: the transaction that holds the table's
row lock stays as short as it was (no extra statement in it, and no wait at commit on PostgreSQL's notification
queue lock, which serialises every notifying commit of the database), notifications of many commits are sent in
one statement, several versions of one table as one; and the one thing the transactional form gives, that a
committed move is never left unannounced, the timer gives as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

from golf.adapters.db.repository import Database
from golf.adapters.db.urls import is_sqlite
from golf.adapters.table_signals import PgTableSignals
from golf.app.errors import NotFound, StorageUnavailable
from golf.app.ports import UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.tables.events import SharedEvent, StreamEnded, TableTimeline, load_timeline
from golf.app.tables.records import TableRecord, TableRecordError
from golf.app.tables.state import Table
from golf.app.tables.writer import Appended

log = logging.getLogger("golf.events")

DEFAULT_QUEUE_SIZE = 256
"""Events a subscriber may have waiting before it is cut off (a whole hole of bot moves is well under this)."""
DEFAULT_BUFFER_SIZE = 32
"""Latest events kept per table for watchers a few events behind (more are read from the log)."""
DEFAULT_CATCH_UP_SECONDS = 1.5
DEFAULT_KEEP_SECONDS = 30.0
"""A table nobody watches any more is forgotten after this long (a client reconnecting meanwhile finds it)."""
VersionReader = Callable[[list[str]], Awaitable[dict[str, int]]]
"""The versions of the tables with these ids, as the database has them (absent: no such table)."""


def port_versions(uow: UnitOfWorkFactory) -> VersionReader:
    """A ``VersionReader`` over the unit of work port: one read per table (any store; SQL has a faster one)."""

    async def versions(ids: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        async with uow() as work:
            for table_id in ids:
                record = await work.tables.get_table(table_id)
                if record is not None:
                    found[table_id] = record.version
        return found

    return versions


_IDS_PER_QUERY = 500


def sql_versions(database: Database) -> VersionReader:
    """A ``VersionReader`` over SQL: one query per 500 tables."""

    async def versions(ids: list[str]) -> dict[str, int]:
        found: dict[str, int] = {}
        async with database() as work:
            tx = work.tables.tx
            for at in range(0, len(ids), _IDS_PER_QUERY):
                chunk = ids[at : at + _IDS_PER_QUERY]
                if tx.dialect == "postgresql":
                    rows = await tx.fetchall("SELECT id, version FROM card_golf_tables WHERE id = ANY(?)", chunk)
                else:
                    marks = ", ".join("?" * len(chunk))
                    rows = await tx.fetchall(f"SELECT id, version FROM card_golf_tables WHERE id IN ({marks})", *chunk)
                found.update((row["id"], int(row["version"])) for row in rows)
        return found

    return versions


def _resolve(waiter: asyncio.Future[bool], value: bool) -> None:
    if not waiter.done():
        waiter.set_result(value)


class _Subscription:
    """One subscriber of a table (``golf.app.tables.events.EventSubscription``).

    Its queue holds the events of each read of the log as one batch (the events of one commit, or of a few): the
    bound, ``limit``, counts batches, so a commit of many entries at once (a whole match of bots is one) is
    never taken for a slow client, while a client that stops reading is cut off after ``limit`` commits."""

    __slots__ = (
        "_at",
        "_taken",
        "_waiter",
        "backlog",
        "channel",
        "ended",
        "hub",
        "limit",
        "queue",
        "record",
        "start",
        "table",
        "timeline",
    )

    def __init__(self, hub: TableHub, channel: _Channel, backlog: list[SharedEvent] | None, limit: int) -> None:
        timeline = channel.timeline
        assert timeline is not None
        self.hub = hub
        self.channel = channel
        self.timeline: TableTimeline = timeline
        self.record: TableRecord = timeline.record
        self.table: Table = timeline.table
        self.start = timeline.version
        self.backlog = backlog
        self.limit = limit
        self.queue: deque[list[SharedEvent]] = deque()
        self._at = 0
        """The next event's index in the first batch."""
        self._waiter: asyncio.Future[bool] | None = None
        """While ``next`` waits: resolved True by a push or an end, False by its timer (a heartbeat is due)."""
        self._taken: SharedEvent | None = None
        self.ended: StreamEnded | None = None

    def push(self, batch: list[SharedEvent]) -> None:
        """Queue ``batch`` (its events are held for this subscriber already: see ``TableHub._refresh``)."""
        if self.ended is None and len(self.queue) < self.limit:
            self.queue.append(batch)
            self._wake()
            return
        for event in batch:
            event.release()
        if self.ended is None:
            self.end(StreamEnded(f"the client did not keep up with the table's events ({self.limit} commits waiting)"))

    async def next(self, wait_seconds: float) -> SharedEvent | None:
        self._release_taken()
        while True:
            if self.queue:
                batch = self.queue[0]
                # Released on the next call: by then the caller has taken its view (and its encodings), which
                # the event keeps for its other subscribers until the last of them has too.
                event = self._taken = batch[self._at]
                self._at += 1
                if self._at == len(batch):
                    self.queue.popleft()
                    self._at = 0
                return event
            if self.ended is not None:
                raise self.ended
            # A bare future and a timer: ``asyncio.timeout`` around an ``Event`` cost several times more, once per
            # event and subscriber.
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = loop.call_later(wait_seconds, _resolve, waiter, False)
            try:
                woken = await waiter
            finally:
                timer.cancel()
                self._waiter = None
            if not woken:
                return None

    def end(self, reason: StreamEnded) -> None:
        """Cut the subscription off: what is queued is dropped, ``next`` raises ``reason``."""
        if self.ended is None:
            self.ended = reason
            self._drop()
            self._wake()

    def close(self) -> None:
        if self.ended is None:
            self.ended = StreamEnded("the subscription is closed")
        self._drop()

    @property
    def waiting(self) -> int:
        """Events queued and not yet taken."""
        return sum(len(b) for b in self.queue) - self._at

    def _wake(self) -> None:
        if self._waiter is not None:
            _resolve(self._waiter, True)

    def _release_taken(self) -> None:
        if self._taken is not None:
            self._taken.release()
            self._taken = None

    def _drop(self) -> None:
        self._release_taken()
        for n, batch in enumerate(self.queue):
            for event in batch[self._at if n == 0 else 0 :]:
                event.release()
        self.queue.clear()
        self._at = 0
        self.hub._unsubscribe(self)


class _Channel:
    """A table watched in this process: its timeline (None until loaded) and its subscribers."""

    __slots__ = ("again", "idle_since", "lock", "subs", "table_id", "task", "timeline")

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self.timeline: TableTimeline | None = None
        self.subs: dict[_Subscription, None] = {}
        self.lock = asyncio.Lock()
        self.task: asyncio.Task[None] | None = None
        self.again = False
        self.idle_since: float | None = time.monotonic()


class TableHub:
    """This process's subscribers to live table events (``golf.app.tables.events.EventHub``). ``publish`` is the
    ``TableService`` publisher; ``start`` runs the catch-up timer; ``close`` ends every stream."""

    def __init__(
        self,
        uow: UnitOfWorkFactory,
        versions: VersionReader | None = None,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
        catch_up_seconds: float = DEFAULT_CATCH_UP_SECONDS,
        keep_seconds: float = DEFAULT_KEEP_SECONDS,
    ) -> None:
        if queue_size < 1 or catch_up_seconds <= 0:
            raise ValueError("queue_size must be 1 or more and catch_up_seconds positive")
        self.uow = uow
        self.versions = versions or port_versions(uow)
        self.queue_size = queue_size
        self.buffer_size = buffer_size
        self.catch_up_seconds = catch_up_seconds
        self.keep_seconds = keep_seconds
        self._channels: dict[str, _Channel] = {}
        self._count = 0
        self._timer: asyncio.Task[None] | None = None
        self._closed = False
        self.caught_up = 0
        """Tables the timer found behind the database (a notification lost, or slower than the timer)."""
        self.handed_over = 0
        """Appends of this process whose events were made from the entries committed, without reading them."""

    # -- the port --------------------------------------------------------------------------------------------
    async def subscribe(self, table_id: str, after_seq: int | None, fresh: bool = False) -> _Subscription:
        if self._closed:
            raise StreamEnded("the server is stopping", retry_after=1.0)
        channel = await self._channel(table_id)
        timeline = channel.timeline
        assert timeline is not None
        if fresh or not channel.subs or (after_seq is not None and after_seq > timeline.version):
            # Nobody kept it current (or the client has seen more, or the caller asks): read the log first.
            await self._refresh(channel, quiet=False)
        if self._closed:
            raise StreamEnded("the server is stopping", retry_after=1.0)
        backlog = timeline.since(after_seq) if after_seq is not None else None
        sub = _Subscription(self, channel, backlog, self.queue_size)
        channel.subs[sub] = None
        channel.idle_since = None
        self._count += 1
        return sub

    @property
    def subscribers(self) -> int:
        """Subscriptions open in this process (the ``golf_event_subscribers`` gauge)."""
        return self._count

    # -- wake-ups ----------------------------------------------------------------------------------------------
    def publish(self, appended: Appended) -> None:
        """A commit in this process appended this (a ``TableService`` publisher). A table followed here at the
        version the append started from takes the committed entries as they are, without reading them back;
        otherwise (it is behind: a commit of another process came first) its new entries are read from the log."""
        channel = self._channels.get(appended.table_id)
        if channel is None or self._closed:
            return
        timeline = channel.timeline
        reading = channel.task is not None or channel.lock.locked()
        if timeline is None or reading or timeline.version != appended.before.version:
            # Not loaded yet, a read under way (it reads these too), or not where the append began: read the log.
            self.wake(appended.table_id, appended.after.version)
            return
        try:
            events = timeline.committed(appended)
        except TableRecordError as err:  # pragma: no cover - the service's own append applies to its own table
            self._failed(channel, err, quiet=True)
            return
        self.handed_over += 1
        self._push(channel, events)

    def wake(self, table_id: str, version: int | None = None) -> None:
        """``table_id`` reached ``version`` (None: it may have moved on): read its new entries soon, once."""
        channel = self._channels.get(table_id)
        if channel is None or self._closed:
            return
        timeline = channel.timeline
        if version is not None and timeline is not None and version <= timeline.version:
            return
        if channel.task is None:
            channel.task = asyncio.get_running_loop().create_task(self._refresh_soon(channel))
        else:
            channel.again = True

    def wake_all(self) -> None:
        """Every watched table may have moved on (the notifications of a while may be lost)."""
        for table_id in list(self._channels):
            self.wake(table_id)

    async def catch_up(self) -> None:
        """One round of the timer: forget the tables nobody has watched for ``keep_seconds``, and read the new
        entries of every watched table the database has further than this process."""
        now = time.monotonic()
        for table_id, channel in list(self._channels.items()):
            idle = channel.idle_since
            quiet = channel.task is None and not channel.lock.locked()
            if idle is not None and now - idle >= self.keep_seconds and quiet:
                del self._channels[table_id]
        watched = {c.table_id: c for c in self._channels.values() if c.subs and c.timeline is not None}
        if not watched:
            return
        versions = await self.versions(list(watched))
        for table_id, version in versions.items():
            channel = watched[table_id]
            if channel.timeline is not None and version > channel.timeline.version:
                self.caught_up += 1
                log.debug(
                    "table %s is behind the database (%d < %d): reading it", table_id, channel.timeline.version, version
                )
                self.wake(table_id, version)

    # -- running -----------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Run the catch-up timer (in the running event loop) until ``close``."""
        if self._timer is None:
            self._timer = asyncio.get_running_loop().create_task(self._tick())

    async def close(self) -> None:
        """End every stream (``StreamEnded``: the clients reconnect, to another process) and stop the timer."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._timer
            self._timer = None
        stopping = StreamEnded("the server is stopping; connect again with the last sequence number", retry_after=1.0)
        for channel in list(self._channels.values()):
            for sub in list(channel.subs):
                sub.end(stopping)
            if channel.task is not None:
                channel.task.cancel()
        self._channels.clear()

    async def _tick(self) -> None:
        failing = False
        while True:
            await asyncio.sleep(self.catch_up_seconds)
            try:
                await self.catch_up()
            except Exception as err:  # the database is out of reach (logged by the driver): try again next round
                if not failing:
                    log.warning("table events: could not compare the watched tables with the database: %s", err)
                failing = True
            else:
                failing = False

    # -- inside ------------------------------------------------------------------------------------------------
    async def _channel(self, table_id: str) -> _Channel:
        """The table's channel, loaded from its log if this process does not follow it yet."""
        while True:
            channel = self._channels.get(table_id)
            if channel is None:
                channel = self._channels[table_id] = _Channel(table_id)
                async with channel.lock:  # wake-ups meanwhile wait for the load, then read what follows it
                    try:
                        channel.timeline = await load_timeline(self.uow, table_id, self.buffer_size)
                    finally:
                        if channel.timeline is None and self._channels.get(table_id) is channel:
                            del self._channels[table_id]
                if channel.timeline is None:
                    raise NotFound(f"no table {shown(table_id)}")
                return channel
            if channel.timeline is not None:
                return channel
            async with channel.lock:  # another subscriber is loading it: wait, then look again
                pass

    async def _refresh_soon(self, channel: _Channel) -> None:
        try:
            while True:
                channel.again = False
                await self._refresh(channel, quiet=True)
                if not channel.again or self._closed:
                    return
        finally:
            channel.task = None

    async def _refresh(self, channel: _Channel, quiet: bool) -> None:
        """Read the table's entries after the version held, apply them, push the events to its subscribers."""
        async with channel.lock:
            timeline = channel.timeline
            if timeline is None:
                return
            try:
                async with self.uow() as work:
                    entries = await work.tables.get_entries(channel.table_id, timeline.version)
                events = timeline.advance(entries)
            except Exception as err:
                self._failed(channel, err, quiet)  # a log it cannot follow: the channel goes, its watchers are cut
                if not quiet:
                    raise
                return
            self._push(channel, events)

    @staticmethod
    def _push(channel: _Channel, events: list[SharedEvent]) -> None:
        if not events or not channel.subs:
            return
        subs = list(channel.subs)
        for event in events:
            event.hold(len(subs))
        for sub in subs:
            sub.push(events)

    def _failed(self, channel: _Channel, err: Exception, quiet: bool) -> None:
        if isinstance(err, TableRecordError):
            # A log this process cannot follow: start over from the log (the subscribers reconnect).
            log.error("table events: %s; its watchers are asked to reconnect", err)
            if self._channels.get(channel.table_id) is channel:
                del self._channels[channel.table_id]
            for sub in list(channel.subs):
                sub.end(StreamEnded("the table's events must be read again; connect again"))
        elif quiet and not isinstance(err, StorageUnavailable):  # an outage is the driver's to log; the timer retries
            log.error("table events: reading table %s failed", channel.table_id, exc_info=err)

    def _unsubscribe(self, sub: _Subscription) -> None:
        channel = sub.channel
        if sub in channel.subs:
            del channel.subs[sub]
            self._count -= 1
            if not channel.subs:
                channel.idle_since = time.monotonic()


class TableFanout:
    """The hub with what wakes it, as one thing to wire: ``publish`` is the ``TableService`` publisher (the hub
    and, on PostgreSQL, the NOTIFY to other processes); ``start`` and ``close`` run and stop it all."""

    def __init__(
        self,
        database: Database,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        catch_up_seconds: float = DEFAULT_CATCH_UP_SECONDS,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
    ) -> None:
        self.hub = TableHub(
            database,
            versions=sql_versions(database),
            queue_size=queue_size,
            buffer_size=buffer_size,
            catch_up_seconds=catch_up_seconds,
        )
        self.signals = (
            None if is_sqlite(database.url) else PgTableSignals(database.url, self.hub.wake, self.hub.wake_all)
        )

    def publish(self, appended: Appended) -> None:
        self.hub.publish(appended)
        if self.signals is not None:
            self.signals.publish(appended.table_id, appended.after.version)

    def start(self) -> None:
        self.hub.start()
        if self.signals is not None:
            self.signals.start()

    async def run(self) -> None:
        """``start``, then wait until cancelled, then ``close``: the server's background work, cancelled when it
        stops (every stream then ends, so the HTTP server's connections can close)."""
        self.start()
        try:
            await asyncio.Event().wait()
        finally:
            await self.close()

    async def close(self) -> None:
        await self.hub.close()
        if self.signals is not None:
            await self.signals.close()


__all__ = [
    "TableFanout",
    "TableHub",
    "VersionReader",
    "port_versions",
    "sql_versions",
]
