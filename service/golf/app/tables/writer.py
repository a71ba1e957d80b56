"""Writing a live table: its log appended at the version read, under the request's idempotency key, with the table's
next due time and the clock times of its log, and a cache of the tables this process last read or wrote.

Every mutation is one unit of work: read the table (from this process's cache, else the store), run the pure
command, let every bot whose turn has come play at once (``immediate_bots``; a table that paces its bots leaves them
to fall due), and append the command's entries and the bots' entries in ONE append at the version read, under the
request's idempotency key, with the table's next due time (``golf.app.tables.clocks.due_at``). Of two writers at one
version the store keeps exactly one; the loser reads again and runs its command again, unless the client named
the version it saw (``expected_version``): then it is told its view is stale. A retry with a used key answers with
the table as that command left it (``replayed``), without writing anything. Keys are each caller's own: another
player's same key at the table is an independent command.

The use cases over it: ``golf.app.tables.service`` (the commands), ``quick_play`` and ``due`` (work due by time).
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from golf.app.errors import AppError, Conflict, IdempotencyKeyReused, NotFound
from golf.app.idempotency import until_stored
from golf.app.identity import Caller
from golf.app.ports import Clock, UnitOfWork, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.tables.access import check_visible
from golf.app.tables.bots import immediate_bots, pending_bot_seat
from golf.app.tables.clocks import due_at, turn_deadline
from golf.app.tables.commands import Applied
from golf.app.tables.entries import Entry
from golf.app.tables.errors import TableChanged, TableMoveRefused, TableRefused
from golf.app.tables.read_model import StaleTableVersion, TableSnapshot
from golf.app.tables.records import LoggedEntry, TableRecord, TableRecordError
from golf.app.tables.state import Table, apply_entry, replay
from golf.app.tables.status import TableStatus
from golf.app.tables.views import view_for

TABLE_IDS = uuid.UUID("6f1c3a52-5d8e-4f0b-9a57-2b7c9e1d4a60")
"""The namespace of table ids made from (creator, idempotency key), so a retried create finds its table."""


@dataclass(frozen=True, slots=True)
class Appended:
    """What one mutation appended to a table's log: the table before and after, the entries (sequence numbers
    ``first_seq`` onwards) and when. Observers see it inside the mutation's transaction."""

    record: TableRecord
    """The table's record after the append (its version is ``after.version``)."""
    before: Table
    after: Table
    entries: tuple[Entry, ...]
    at: datetime

    @property
    def table_id(self) -> str:
        return self.record.id

    @property
    def first_seq(self) -> int:
        """The sequence number of the first entry appended (the log's entries are numbered from 1)."""
        return self.before.version + 1


AppendObserver = Callable[[UnitOfWork, Appended], Awaitable[None]]
"""Runs inside a mutation's transaction, after its append and before its commit (a webhook outbox, the table's
due time): what it writes commits with the entries or not at all; what it raises refuses the mutation."""
Publisher = Callable[[Appended], None]
"""Told after a commit what it appended (live events, the table clock, the webhook sender; must not block or
raise)."""

Also = Callable[[UnitOfWork, TableRecord], Awaitable[None]]
"""More to write in a mutation's transaction after its append (quick play remembers its key)."""
Intent = Callable[[Table, Entry], bool]
"""Whether a command's stored first entry (on the table as it was before it) is what a retried request asks."""
Command = Callable[[TableRecord, Table], Applied]
"""A table command bound to its request: raises an ``AppError`` (refusal) or returns the entries to store."""


@dataclass(frozen=True, slots=True)
class ClockTimes:
    """The log's times a table's clocks count from (``golf.app.tables.clocks``), at ``version``."""

    version: int
    awaited_since: datetime
    """When the entry ``Table.wait_from`` was written (the table's creation for 0)."""
    last_at: datetime
    """When the latest entry was written (the table's creation at version 0)."""


def replay_log(record: TableRecord, log: Sequence[LoggedEntry]) -> Table:
    """The table ``record`` stands for, rebuilt from its whole ``log`` (entries 1 to the record's version, as the
    store's ``load_table`` reads them). Raises ``TableRecordError`` for a log with a gap or an entry the table
    refuses: the stored log was not made by the table's own commands."""
    if [e.seq for e in log] != list(range(1, record.version + 1)):
        raise TableRecordError(f"table {record.id}: the log does not hold entries 1 to {record.version}")
    try:
        return replay(record.options, record.seed, (e.entry for e in log))
    except Exception as err:
        raise TableRecordError(f"table {record.id}: the log does not replay: {err}") from err


@dataclass
class TableWriter:
    """Appends to tables' logs for the use cases, with the observers and publishers of every append."""

    uow: UnitOfWorkFactory
    clock: Clock
    cache_size: int = 4096
    observers: list[AppendObserver] = field(default_factory=list)
    """Called inside every mutation's transaction with what it appended (see ``AppendObserver``)."""
    publishers: list[Publisher] = field(default_factory=list)
    """Told after every commit what it appended (a table created without a seat taken appends nothing)."""
    # The tables this process last read or wrote. A mutation goes ahead on a cached table without reading it: if
    # another writer (or replica) moved the table on, the store refuses the append at the stale version and the
    # command runs again on a fresh read. Refusals are only ever decided on a fresh read.
    _tables: OrderedDict[str, tuple[TableRecord, Table]] = field(default_factory=OrderedDict)
    # The clock times of the cached tables that have clocks (by id; valid at their version only).
    _clock_times: dict[str, ClockTimes] = field(default_factory=dict)

    # -- one mutation ---------------------------------------------------------------------------------------
    async def mutate(
        self,
        caller: Caller,
        table_id: str,
        key: str,
        expected_version: int | None,
        intent: Intent,
        command: Command,
        also: Also | None = None,
        join_code: str | None = None,
    ) -> TableSnapshot:
        """Run ``command`` for ``caller`` at table ``table_id`` and append what it returns (and the bots' turns that
        follow) under ``key``, then ``also``; the table as the caller sees it after. A retry of a stored command
        (``intent`` says whether the stored one is what is asked) answers with the table as it left it."""

        def visible_command(record: TableRecord, table: Table) -> Applied:
            # A private table is NotFound to whoever may not see it, whatever they ask of it: no refusal (a 403 for
            # acting without a seat, say) tells a stranger that the table exists.
            check_visible(caller, record, table, join_code)
            return command(record, table)

        async def attempt() -> TableSnapshot:
            async with self.uow() as uow:
                return await self._try(uow, caller, table_id, key, expected_version, intent, visible_command, also)

        async def lost(race: TableChanged) -> TableSnapshot | None:
            self.forget(table_id)  # another writer (or replica) got there first
            if not race.key_taken:
                return None  # run the command again on a fresh read; with an expected version the fresh read refuses it
            async with self.uow() as uow:
                return await self.stored(uow, caller, table_id, key, intent)

        gave_up = f"table {shown(table_id)} changed too often while this request was tried; retry"
        return await until_stored(attempt, TableChanged, lost, gave_up)

    async def _try(
        self,
        uow: UnitOfWork,
        caller: Caller,
        table_id: str,
        key: str,
        expected_version: int | None,
        intent: Intent,
        command: Command,
        also: Also | None = None,
    ) -> TableSnapshot:
        applied: Applied | None = None
        loaded = self._tables.get(table_id)
        if loaded is not None and expected_version in (None, loaded[1].version):
            try:
                applied = command(*loaded)
            except AppError:
                applied = None  # decided on a fresh read below
        if applied is None or loaded is None:
            loaded = await self.load(uow, table_id)
            record, table = loaded
            if expected_version is not None and expected_version != table.version:
                stored = await self.stored(uow, caller, table_id, key, intent)
                if stored is not None:
                    return stored
                check_visible(caller, record, table, None)
                raise StaleTableVersion(
                    f"the table is at version {table.version}, not {expected_version}",
                    self.snapshot(caller, record, table),
                )
            try:
                applied = command(record, table)
            except AppError as refused:
                stored = await self.stored(uow, caller, table_id, key, intent)
                if stored is not None:
                    return stored
                self._attach_current(refused, caller, record, table)
                raise
        record, table = loaded
        # Bots act as soon as their turn comes, in the same append: no reply ever waits on a bot's turn. (A table
        # that paces its bots leaves them pending: they fall due one by one, see ``golf.app.tables.due``.)
        bots = immediate_bots(applied.table)
        final = bots.table
        now = self.clock()
        entries = (*applied.entries, *bots.entries)
        appended, times = await self.append(uow, record, table, final, entries, now, key, caller.player_id)
        record = appended.record
        if also is not None:
            await also(uow, record)
        await uow.commit()
        self.remember(record, final, times)
        self.publish(appended)
        return self.snapshot(caller, record, final)

    def _attach_current(self, refused: AppError, caller: Caller, record: TableRecord, table: Table) -> None:
        """A refusal at the table carries the table as the caller sees it (the wire's ``Error.table``), unless the
        caller may not see the table."""
        if isinstance(refused, TableRefused | TableMoveRefused):
            try:
                check_visible(caller, record, table, None)
            except NotFound:
                return
            refused.current = self.snapshot(caller, record, table)

    async def stored(
        self, uow: UnitOfWork, caller: Caller, table_id: str, key: str, intent: Intent
    ) -> TableSnapshot | None:
        """The table as the command the caller stored under ``key`` left it, or None when the caller never used the
        key here (another player's same key is theirs, not this one); a key used for another command is
        ``IdempotencyKeyReused``."""
        command = await uow.tables.find_command(table_id, caller.player_id, key)
        if not command:
            return None
        record = await uow.tables.get_table(table_id)
        assert record is not None
        first, last = command[0], command[-1]
        log = await uow.tables.get_entries(table_id, through_seq=first.seq - 1)
        before = replay(record.options, record.seed, (e.entry for e in log))
        if not intent(before, first.entry):
            raise IdempotencyKeyReused(f"idempotency key {shown(key)} was already used for another command")
        after = before
        for logged in command:
            after = apply_entry(after, logged.entry)
        assert after.version == last.seq
        at = replace(record, version=after.version, status=after.status)
        times = None
        if record.options.clocked:  # the clocks as they stood after the command, from the log's own times
            written = {e.seq: e.created_at for e in (*log, *command)} | {0: record.created_at}
            times = ClockTimes(after.version, written[after.wait_from], written[after.version])
        return self.snapshot(caller, at, after, replayed=True, times=times)

    # -- appending ------------------------------------------------------------------------------------------
    async def append(
        self,
        uow: UnitOfWork,
        record: TableRecord,
        before: Table,
        after: Table,
        entries: tuple[Entry, ...],
        now: datetime,
        key: str | None,
        player_id: str | None = None,
    ) -> tuple[Appended, ClockTimes | None]:
        """Append ``entries`` (they took ``before`` to ``after``) at ``now`` under ``player_id``'s ``key`` (keys are
        each player's own: another's same key is another command), with the table's next due
        time, and tell the observers; the caller commits. The one place a table's due time is decided. Returns
        what was appended (with the record after it) and the clock times after it (for the cache and the
        publishers, once committed)."""
        times = await self._times_after(uow, record, before, after, now)
        if times is not None:
            due = due_at(after, times.awaited_since, times.last_at)
        else:  # no clock: due only when bot moves are left over by the bot budget, and then at once
            due = now if after.status is TableStatus.PLAYING and pending_bot_seat(after) is not None else None
        version = await uow.tables.append(
            record.id, before.version, entries, after.status, now, key, due_at=due, player_id=player_id
        )
        assert version == after.version
        record = replace(record, version=after.version, status=after.status)
        appended = Appended(record, before, after, entries, now)
        for observer in self.observers:
            await observer(uow, appended)
        return appended, times

    async def times_of(self, uow: UnitOfWork, record: TableRecord, table: Table) -> ClockTimes | None:
        """The clock times of ``table`` (``None`` for a table without a clock): cached, else read from its log."""
        if not record.options.clocked:
            return None
        cached = self._clock_times.get(record.id)
        if cached is not None and cached.version == table.version:
            return cached
        written = await uow.tables.entry_times(record.id, {table.wait_from, table.version} - {0})
        written[0] = record.created_at
        times = ClockTimes(table.version, written[table.wait_from], written[table.version])
        self._clock_times[record.id] = times  # read from committed entries: facts that never change
        return times

    async def _times_after(
        self, uow: UnitOfWork, record: TableRecord, before: Table, after: Table, now: datetime
    ) -> ClockTimes | None:
        """The clock times once ``after`` is appended at ``now`` on ``before``: the latest entry is written now, and
        so is the entry that began the wait, unless the wait began before (then ``before`` tells when)."""
        if not record.options.clocked:
            return None
        if after.wait_from > before.version:
            return ClockTimes(after.version, now, now)
        earlier = await self.times_of(uow, record, before)
        assert earlier is not None
        return ClockTimes(after.version, earlier.awaited_since, now)

    def publish(self, appended: Appended) -> None:
        """Tell the publishers what a committed mutation appended."""
        for publish in self.publishers:
            publish(appended)

    # -- reading and caching ---------------------------------------------------------------------------------
    def cached(self, table_id: str) -> tuple[TableRecord, Table] | None:
        """The table as this process last read or wrote it (it may have moved on since), if it is cached."""
        return self._tables.get(table_id)

    def forget(self, table_id: str) -> None:
        """Drop a table from the cache (another writer moved it on): the next use reads it afresh."""
        self._tables.pop(table_id, None)

    async def load(self, uow: UnitOfWork, table_id: str) -> tuple[TableRecord, Table]:
        """The table ``table_id`` as stored now (``NotFound`` for no such table)."""
        record = await uow.tables.get_table(table_id)
        if record is None:
            raise NotFound(f"no table {shown(table_id)}")
        return await self.catch_up(uow, record)

    async def catch_up(self, uow: UnitOfWork, record: TableRecord) -> tuple[TableRecord, Table]:
        """The table at ``record``'s version: the cached table when it is there, the cached table with the entries
        written since (by another process) when it is behind, else a replay of the whole log."""
        cached = self._tables.get(record.id)
        if cached is not None and cached[1].version == record.version:
            table = cached[1]
        elif cached is not None and cached[1].version < record.version:
            table = cached[1]
            for logged in await uow.tables.get_entries(record.id, table.version, record.version):
                table = apply_entry(table, logged.entry)
        else:
            loaded = await uow.tables.load_table(record.id)
            if loaded is None:  # pragma: no cover - a table is never deleted
                raise NotFound(f"no table {shown(record.id)}")
            record, log = loaded
            table = replay_log(record, log)
        if table.version != record.version:  # pragma: no cover - a log with a gap fails in the replay
            raise Conflict(f"table {shown(record.id)} could not be read at one version; retry")
        self.remember(record, table)
        return record, table

    def remember(self, record: TableRecord, table: Table, times: ClockTimes | None = None) -> None:
        """Cache ``table`` at ``record``'s version (and its clock ``times``, if known)."""
        self._tables[record.id] = (record, table)
        self._tables.move_to_end(record.id)
        if times is not None:
            self._clock_times[record.id] = times
        if len(self._tables) > self.cache_size:
            gone, _ = self._tables.popitem(last=False)
            self._clock_times.pop(gone, None)

    def snapshot(
        self,
        caller: Caller,
        record: TableRecord,
        table: Table,
        replayed: bool = False,
        times: ClockTimes | None = None,
    ) -> TableSnapshot:
        """``table`` as ``caller`` sees it; its turn deadline from ``times``, else from the cached clock times when
        they are this version's (a table without a clock has none)."""
        seat = table.seat_of(caller.player_id)
        code = record.join_code if caller.player_id == record.owner_id else None
        if times is None:
            cached = self._clock_times.get(record.id)
            times = cached if cached is not None and cached.version == table.version else None
        deadline = None if times is None else turn_deadline(table, times.awaited_since, times.last_at)
        view = view_for(table, seat)
        return TableSnapshot(record.id, record.owner_id, record.created_at, view, seat, code, replayed, deadline)
