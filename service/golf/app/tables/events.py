"""Live events of card Golf tables, each delivered to each viewer as that viewer may see it, resumable.

An event is an entry of the table's log (``golf.app.tables.entries``) with its sequence number: nothing else is
stored. A watcher gives the last sequence number it has (``after_seq``) and gets the events after it, read from the
log, then the live ones as the table advances: in order, each once. Each event carries the table as the viewer
sees it right after it, made by the one view function (``view_for``) for the viewer's seat AT that event (a
spectator who takes a seat sees their own cards from that event on; a player who leaves sees the spectator's
view). The move of an event is public: an engine move never names a card (a draw from the stock says where it drew
from, not what).

The work of an event is shared: the table after an entry is computed once per process (``TableTimeline``), and
the view of one (event, viewer) once for every subscriber with that viewer (``SharedEvent.for_viewer``), with a
memo the transports fill with its encodings. Views are kept only while the event is on its way to subscribers
(``hold`` / ``release``), so a process holding many tables does not hold every view it ever made.

Delivery itself (subscribers with bounded queues, the wake-ups after a commit, between processes and on a timer)
is a port, :class:`EventHub`, that ``golf.adapters.table_fanout`` implements.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Protocol

from golf.app.errors import AppError, InvalidArgument, NotFound
from golf.app.identity import Caller
from golf.app.ports import UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.tables.clocks import turn_deadline
from golf.app.tables.code_guard import JoinCodeGuard
from golf.app.tables.entries import (
    BotAdded,
    Entry,
    SeatJoined,
    SeatLeft,
    SeatMoved,
    SeatResigned,
    SeatTimedOut,
    TableStarted,
)
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.records import LoggedEntry, TableRecord, TableRecordError
from golf.app.tables.state import Table, apply_entry, new_table
from golf.app.tables.status import TableStatus
from golf.app.tables.views import view_for
from golf.app.tables.writer import Appended
from golf.engine.cardgolf.moves import Move

DEFAULT_HEARTBEAT_SECONDS = 15.0
"""An idle stream sends a heartbeat this often, so proxies keep it open and clients know it is alive."""
REPLAY_SLICE = 64
"""While a long log is replayed for a watcher far behind, the event loop gets a turn every this many entries."""


class EventKind(Enum):
    """What kind of change an event records (the contract's ``TableEventKind``)."""

    SNAPSHOT = "snapshot"
    """Not a change: the table as it stands, first for a watcher that gave no ``after_seq``."""
    SEAT_JOINED = "seat_joined"
    BOT_ADDED = "bot_added"
    STARTED = "started"
    MOVED = "moved"
    TIMED_OUT = "timed_out"
    """The turn clock ran out and the timeout action (``move``) was made for the seat."""
    SEAT_LEFT = "seat_left"
    RESIGNED = "resigned"


@dataclass(frozen=True, slots=True)
class Change:
    """What an entry says in public: its kind, the seat it is about, the move made, the level of a bot added."""

    kind: EventKind
    seat: int | None = None
    move: Move | None = None
    bot: str | None = None


def change_of(entry: Entry) -> Change:
    """The public side of a log entry. Every field is public: entries record seats, bot levels and engine moves,
    and an engine move holds positions, never cards."""
    if isinstance(entry, SeatJoined):
        return Change(EventKind.SEAT_JOINED, entry.seat)
    if isinstance(entry, BotAdded):
        return Change(EventKind.BOT_ADDED, entry.seat, bot=entry.kind)
    if isinstance(entry, TableStarted):
        return Change(EventKind.STARTED)
    if isinstance(entry, SeatMoved):
        return Change(EventKind.MOVED, entry.seat, entry.move)
    if isinstance(entry, SeatLeft):
        return Change(EventKind.SEAT_LEFT, entry.seat)
    if isinstance(entry, SeatResigned):
        return Change(EventKind.RESIGNED, entry.seat)
    if isinstance(entry, SeatTimedOut):
        return Change(EventKind.TIMED_OUT, entry.seat, entry.move)
    raise TypeError(f"no event for log entry {entry!r}")  # pragma: no cover - a new kind of entry needs a row here


class StreamEnded(AppError):
    """The stream ends before the client left, and the client should connect again with the last sequence number
    it has: it did not keep up (its queue filled), or the server is stopping. Nothing is lost: the events it
    missed are in the log. ``retry_after``: how long to wait first."""

    def __init__(self, message: str, retry_after: float = 0.5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(eq=False, slots=True)
class TableEvent:
    """One event as one viewer sees it (the same object for every subscriber with that viewer)."""

    table_id: str
    seq: int
    """The event's sequence number; ``snapshot.view.version`` equals it."""
    time: datetime
    kind: EventKind
    seat: int | None
    move: Move | None
    bot: str | None
    snapshot: TableSnapshot
    """The table as the viewer sees it right after the event."""
    memo: dict[str, Any] = field(default_factory=dict)
    """For the transports: this event's encodings, made once for every subscriber it goes to."""


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """An idle stream's sign of life: the table is still at ``seq`` (for this watcher)."""

    seq: int


def _viewer_key(record: TableRecord, table: Table, caller: Caller) -> tuple[int | None, bool]:
    """Who the caller is at ``table``: their seat (None: a spectator), and whether they see the join code (the
    creator of a private table). Every caller with the same key sees the same bytes."""
    return table.seat_of(caller.player_id), record.join_code is not None and caller.player_id == record.owner_id


def _event(
    record: TableRecord,
    table: Table,
    key: tuple[int | None, bool],
    times: tuple[datetime, datetime],
    seq: int,
    change: Change,
) -> TableEvent:
    """The event ``seq`` as the viewer ``key`` sees it; ``times``: when the present wait began and when the
    latest entry was written (the turn clock's deadline counts from them)."""
    seat, sees_code = key
    awaited_since, last_at = times
    snapshot = TableSnapshot(
        table_id=record.id,
        owner_id=record.owner_id,
        created_at=record.created_at,
        view=view_for(table, seat),
        seat=seat,
        join_code=record.join_code if sees_code else None,
        turn_deadline=turn_deadline(table, awaited_since, last_at),
    )
    return TableEvent(record.id, seq, last_at, change.kind, change.seat, change.move, change.bot, snapshot)


class SharedEvent:
    """One event of a table, for every viewer: the entry, the whole table right after it (never sent), and the
    views made of it so far, kept while the event is held (on its way to subscribers)."""

    __slots__ = ("_holders", "_views", "awaited_since", "change", "record", "seq", "table", "time")

    def __init__(self, record: TableRecord, logged: LoggedEntry, table: Table, awaited_since: datetime) -> None:
        self.record = record
        self.seq = logged.seq
        self.time = logged.created_at
        self.change = change_of(logged.entry)
        self.table = table
        self.awaited_since = awaited_since
        """When the wait for the awaited seats began (the entry ``table.wait_from``), for the turn deadline."""
        self._views: dict[tuple[int | None, bool], TableEvent] | None = None
        self._holders = 0

    def for_viewer(self, caller: Caller) -> TableEvent:
        """The event as ``caller`` sees it (their seat at this event)."""
        key = _viewer_key(self.record, self.table, caller)
        views = self._views
        found = views.get(key) if views is not None else None
        if found is not None:
            return found
        made = _event(self.record, self.table, key, (self.awaited_since, self.time), self.seq, self.change)
        if self._holders > 0:
            if views is None:
                views = self._views = {}
            views[key] = made
        return made

    def hold(self, subscribers: int = 1) -> None:
        """``subscribers`` more are to receive this event: its views are kept until every holder released it."""
        self._holders += subscribers

    def release(self) -> None:
        """A holder is done with this event (or will never take it); the last one lets its views go."""
        self._holders -= 1
        if self._holders <= 0:
            self._holders = 0
            self._views = None

    @property
    def over(self) -> bool:
        """The match ended with this event: no event comes after it."""
        return self.table.status is TableStatus.OVER


class TableTimeline:
    """A table as this process follows it: the record, the table at ``version``, the times its clock counts from
    (when the present wait began, when the last entry was written), and the latest events (``buffer_size``) for
    watchers that are a few events behind."""

    def __init__(
        self,
        record: TableRecord,
        table: Table,
        times: tuple[datetime, datetime],
        buffer_size: int = 32,
    ) -> None:
        self.record = record
        self.table = table
        self.awaited_since, self.last_time = times
        self.recent: deque[SharedEvent] = deque(maxlen=max(0, buffer_size))
        self._snapshots: dict[tuple[int | None, bool], TableEvent] = {}

    @property
    def table_id(self) -> str:
        return self.record.id

    @property
    def version(self) -> int:
        return self.table.version

    def advance(self, entries: Sequence[LoggedEntry], last: Table | None = None) -> list[SharedEvent]:
        """Apply the entries after ``version`` (older ones are skipped), in order; the new events. ``last``: the
        table after the last entry, when the caller has it (it is not computed again). Raises
        ``TableRecordError`` on a gap in the sequence numbers or an entry the table refuses (a log this service
        did not write), having applied what came before it."""
        made: list[SharedEvent] = []
        final = entries[-1].seq if entries else None
        for logged in entries:
            if logged.seq <= self.table.version:
                continue
            if logged.seq != self.table.version + 1:
                raise TableRecordError(f"table {self.record.id}: entry {logged.seq} follows {self.table.version}")
            if last is not None and logged.seq == final and last.version == final:
                table = last
            else:
                try:
                    table = apply_entry(self.table, logged.entry)
                except Exception as err:
                    raise TableRecordError(f"table {self.record.id}: entry {logged.seq} does not apply: {err}") from err
            if table.wait_from == logged.seq:
                self.awaited_since = logged.created_at
            event = SharedEvent(self.record, logged, table, self.awaited_since)
            self.table, self.last_time = table, logged.created_at
            self.recent.append(event)
            made.append(event)
        if made:
            self._snapshots.clear()
        return made

    def committed(self, appended: Appended) -> list[SharedEvent]:
        """The events of an append this process committed, at the version it started from (``advance`` of its
        entries, written at ``appended.at``; the table after the last one is the service's own)."""
        if appended.before.version != self.version:
            at = f"an append from {appended.before.version} at {self.version}"
            raise TableRecordError(f"table {self.record.id}: {at}")
        first = appended.first_seq
        logged = [LoggedEntry(first + n, entry, appended.at) for n, entry in enumerate(appended.entries)]
        return self.advance(logged, last=appended.after)

    def since(self, after_seq: int) -> list[SharedEvent] | None:
        """The events after ``after_seq`` up to ``version`` from memory, or None when they are not all there."""
        if after_seq >= self.version:
            return []
        recent = self.recent
        if not recent or recent[0].seq > after_seq + 1:
            return None
        return [e for e in recent if e.seq > after_seq]

    def snapshot_for(self, caller: Caller) -> TableEvent:
        """A SNAPSHOT event of the table as it stands, as ``caller`` sees it (shared by every caller with the same
        view until the table moves on)."""
        key = _viewer_key(self.record, self.table, caller)
        found = self._snapshots.get(key)
        if found is None:
            snapshot = Change(EventKind.SNAPSHOT)
            times = (self.awaited_since, self.last_time)
            found = self._snapshots[key] = _event(self.record, self.table, key, times, self.version, snapshot)
        return found


async def load_timeline(uow: UnitOfWorkFactory, table_id: str, buffer_size: int = 32) -> TableTimeline | None:
    """The table rebuilt from its whole log (``None`` when there is no such table)."""
    async with uow() as work:
        record = await work.tables.get_table(table_id)
        if record is None:
            return None
        log = await work.tables.get_entries(table_id, through_seq=record.version)
    if [e.seq for e in log] != list(range(1, record.version + 1)):
        raise TableRecordError(f"table {table_id}: the log does not hold entries 1 to {record.version}")
    table = new_table(record.options, record.seed)
    for n, logged in enumerate(log):
        table = apply_entry(table, logged.entry)
        if n % REPLAY_SLICE == REPLAY_SLICE - 1:
            await asyncio.sleep(0)  # a long log: let the other streams have a turn
    times = _time_of(log, record, table.wait_from), _time_of(log, record, table.version)
    return TableTimeline(record, table, times, buffer_size)


def _time_of(log: Sequence[LoggedEntry], record: TableRecord, seq: int) -> datetime:
    """When entry ``seq`` of ``log`` (the whole log, from 1) was written; the table's creation for 0."""
    return log[seq - 1].created_at if seq > 0 else record.created_at


# -- the port delivery is made through ---------------------------------------------------------------------------
class EventSubscription(Protocol):
    """One watcher's subscription to a table's live events, made by :meth:`EventHub.subscribe`."""

    @property
    def timeline(self) -> TableTimeline:
        """The table as the hub follows it."""
        ...

    @property
    def start(self) -> int:
        """The table's version when the subscription began: every later event comes through ``next``."""
        ...

    @property
    def record(self) -> TableRecord: ...

    @property
    def table(self) -> Table:
        """The table at ``start`` (read before anything awaits after ``subscribe``)."""
        ...

    @property
    def backlog(self) -> list[SharedEvent] | None:
        """The events after the ``after_seq`` given to ``subscribe`` up to ``start``, when the hub still has them
        all in memory; None when they must be read from the log."""
        ...

    async def next(self, wait_seconds: float) -> SharedEvent | None:
        """The next live event (seq ``start + 1``, then each following one), or None when none came within
        ``wait_seconds``. Raises ``StreamEnded`` when the subscription was cut (it did not keep up, or the
        hub is closing)."""
        ...

    def close(self) -> None:
        """End the subscription (idempotent)."""
        ...


class EventHub(Protocol):
    async def subscribe(self, table_id: str, after_seq: int | None, fresh: bool = False) -> EventSubscription:
        """Subscribe to the live events of ``table_id`` (``NotFound`` when there is no such table). With
        ``after_seq`` past the version the hub holds, or ``fresh``, the hub first reads what it lacks from the
        log."""
        ...


# -- the use case ----------------------------------------------------------------------------------------------
def may_watch(caller: Caller, record: TableRecord, table: Table, join_code: str | None) -> bool:
    """Who may see a table, as ``TableService.get`` decides: anyone for a listed table; for a private one its
    creator, its seated players, or someone giving its join code."""
    if record.listed or caller.player_id == record.owner_id or table.seat_of(caller.player_id) is not None:
        return True
    return bool(join_code) and record.options.code_matches(join_code)


class Watch:
    """One watcher's stream of :class:`TableEvent` and :class:`Heartbeat`. Use ``async for``, and ``aclose`` it
    whatever happens (it holds a subscription). It ends by itself once the match is over, and after an event that
    takes the table out of the watcher's sight (a player who leaves a private table they may not see otherwise).
    Events up to the start of the subscription are all sent: the watcher may see the table now, so its history
    too (each event as the watcher's seat at it saw it)."""

    def __init__(
        self,
        events: TableEvents,
        sub: EventSubscription,
        caller: Caller,
        join_code: str | None,
        first: Sequence[TableEvent | Heartbeat],
        behind: int | None,
    ) -> None:
        self._events = events
        self._sub = sub
        self._caller = caller
        self._join_code = join_code
        self._first = first
        self._behind = behind
        """After_seq when the events up to ``start`` must be read from the log (None: they are in ``first``)."""
        self._gen = self._run()

    def __aiter__(self) -> Watch:
        return self

    async def __anext__(self) -> TableEvent | Heartbeat:
        return await self._gen.__anext__()

    async def aclose(self) -> None:
        try:
            await self._gen.aclose()
        finally:
            self._sub.close()

    async def _run(self) -> AsyncGenerator[TableEvent | Heartbeat, None]:
        sub, caller = self._sub, self._caller
        last = sub.start
        for item in self._first:
            yield item
        if self._behind is not None:
            async for shared in self._events.replayed(sub.record, self._behind, sub.start):
                yield shared.for_viewer(caller)
        if sub.table.status is TableStatus.OVER:
            return
        heartbeat = self._events.heartbeat_seconds
        while True:
            live = await sub.next(heartbeat)
            if live is None:
                yield Heartbeat(last)
                continue
            shared = live
            if shared.seq <= last:
                continue
            if shared.seq != last + 1:  # pragma: no cover - the hub delivers every event in order
                raise StreamEnded(f"events {last + 1} to {shared.seq - 1} did not arrive; connect again")
            last = shared.seq
            yield shared.for_viewer(caller)
            if shared.over or not may_watch(caller, shared.record, shared.table, self._join_code):
                return


class TableEvents:
    """The live events of tables for their watchers (``watch``)."""

    def __init__(
        self,
        uow: UnitOfWorkFactory,
        hub: EventHub,
        heartbeat_seconds: float = DEFAULT_HEARTBEAT_SECONDS,
        codes: JoinCodeGuard | None = None,
    ) -> None:
        if heartbeat_seconds <= 0:
            raise ValueError("heartbeat_seconds must be positive")
        self.uow = uow
        self.hub = hub
        self.heartbeat_seconds = heartbeat_seconds
        self.codes = codes
        """Wrong join codes per player and address (``TableService.codes``); None: not limited (tests)."""

    async def watch(
        self,
        caller: Caller,
        table_id: str,
        after_seq: int | None = None,
        join_code: str | None = None,
        address: str | None = None,
    ) -> Watch:
        """The events of ``table_id`` as ``caller`` sees them: with ``after_seq``, those after it (first those
        in the log, then live ones; a heartbeat first when there is none yet); without, a SNAPSHOT of the table as
        it stands, then the live ones. Heartbeats every ``heartbeat_seconds`` on an idle stream.

        Refusals come here, before any event: ``NotFound`` for no such table, or a private one the caller may not
        see (``TableService.get``'s rule); ``InvalidArgument`` for an ``after_seq`` the table has not reached.
        """
        if after_seq is not None and after_seq < 0:
            raise InvalidArgument("afterSeq", "afterSeq must be 0 or more")
        codes = self.codes if join_code else None
        if codes is not None:
            codes.check(caller.player_id, address)
        try:
            return await self._watch(caller, table_id, after_seq, join_code)
        except NotFound:
            if codes is not None:
                await codes.wrong(caller.player_id, address)
            raise

    async def _watch(self, caller: Caller, table_id: str, after_seq: int | None, join_code: str | None) -> Watch:
        sub = await self.hub.subscribe(table_id, after_seq)
        if not may_watch(caller, sub.record, sub.table, join_code):
            # The hub's copy may lag a commit of another process (the caller's join a moment ago, say): a refusal is
            # only decided on the table as the log has it now.
            sub.close()
            sub = await self.hub.subscribe(table_id, after_seq, fresh=True)
        try:
            # From here to the end nothing awaits: what is decided is decided at ``sub.start``.
            if not may_watch(caller, sub.record, sub.table, join_code):
                raise NotFound(f"no table {shown(table_id)}")
            first: list[TableEvent | Heartbeat] = []
            behind: int | None = None
            if after_seq is None:
                first.append(sub.timeline.snapshot_for(caller))
            elif after_seq > sub.start:
                raise InvalidArgument("afterSeq", f"the table has no event {after_seq}: it is at {sub.start}")
            elif sub.backlog is None:
                behind = after_seq
            elif sub.backlog:
                first.extend(shared.for_viewer(caller) for shared in sub.backlog)
            elif sub.table.status is not TableStatus.OVER:
                first.append(Heartbeat(sub.start))  # nothing missed: say at once that the stream is there
            return Watch(self, sub, caller, join_code, first, behind)
        except BaseException:
            sub.close()
            raise

    async def replayed(self, record: TableRecord, after_seq: int, through_seq: int) -> AsyncIterator[SharedEvent]:
        """The events ``after_seq < seq <= through_seq`` of a table rebuilt from its log (for a watcher too far
        behind for the hub's memory); their views are made for this watcher only."""
        async with self.uow() as work:
            log = await work.tables.get_entries(record.id, through_seq=through_seq)
        table = new_table(record.options, record.seed)
        awaited_since = record.created_at
        for n, logged in enumerate(log):
            if logged.seq != n + 1:
                raise TableRecordError(f"table {record.id}: entry {logged.seq} follows {n}")
            table = apply_entry(table, logged.entry)
            if table.wait_from == logged.seq:
                awaited_since = logged.created_at
            if logged.seq > after_seq:
                yield SharedEvent(record, logged, table, awaited_since)
            elif n % REPLAY_SLICE == REPLAY_SLICE - 1:
                await asyncio.sleep(0)


__all__ = [
    "DEFAULT_HEARTBEAT_SECONDS",
    "Change",
    "EventHub",
    "EventKind",
    "EventSubscription",
    "Heartbeat",
    "SharedEvent",
    "StreamEnded",
    "TableEvent",
    "TableEvents",
    "TableTimeline",
    "Watch",
    "change_of",
    "load_timeline",
    "may_watch",
]
