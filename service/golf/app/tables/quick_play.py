"""Quick play: seat a player at an open quick play table of a preset, or open one.

Quick play tables are those quick play opens: listed, the preset's own rules and holes, a turn clock of
:data:`QUICK_PLAY_TURN_SECONDS` (three missed turns in a row: a bot plays for the player until they act), bots
unpaced, and autofill: ``wait_seconds`` (0 to 600, counted in whole seconds, rounded up) after the table opened,
greedy bots fill its empty seats and the match starts (with 0, at once, in the call that opens it).

The oldest open quick play table of the preset with a free seat is joined first (any number of seats; ``seats``,
default :data:`QUICK_PLAY_SEATS`, is for a table the call opens); the person who takes its last seat starts the
match. Two callers racing for a last seat: one gets it, the other tries the next table. A caller already seated at
an open quick play table of the preset is answered with it.

Idempotent by ``idempotency_key``: a retry answers with the table the first call seated the caller at, as it stands
now (``replayed``); the same key for another preset is ``IdempotencyKeyReused``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from golf.app.errors import IdempotencyKeyReused, InvalidArgument
from golf.app.idempotency import check_key, id_from_key
from golf.app.identity import Caller
from golf.app.ports import AlreadyStored, RateLimiter, UnitOfWork
from golf.app.quoting import shown
from golf.app.tables import commands
from golf.app.tables.bots import immediate_bots
from golf.app.tables.clocks import autofill
from golf.app.tables.commands import Applied
from golf.app.tables.entries import Entry, SeatJoined
from golf.app.tables.errors import TableRefusal, TableRefused
from golf.app.tables.options import DEFAULT_PRESET, MAX_AUTOFILL_SECONDS, TableOptions
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.records import TableRecord
from golf.app.tables.state import Table, new_table
from golf.app.tables.writer import TABLE_IDS, TableWriter

QUICK_PLAY_SEATS = 4
"""Seats at a table quick play opens, unless the caller asks for another number."""
QUICK_PLAY_TURN_SECONDS = 60
"""The turn clock of quick play tables: strangers share them, so one who walks away must not stall the others (after
the default three missed turns in a row a bot plays for them until they come back)."""
QUICK_PLAY_CANDIDATES = 10
"""How many open quick play tables one call tries to join (oldest first) before opening one."""


@dataclass
class QuickPlay:
    """Quick play over the table writer; opening a table counts against the caller's ``create`` limit."""

    writer: TableWriter
    limiter: RateLimiter
    seeds: Callable[[], str]
    """Draws a fresh match seed."""

    async def __call__(
        self,
        caller: Caller,
        preset: str = DEFAULT_PRESET,
        seats: int | None = None,
        wait_seconds: float = 0.0,
        *,
        idempotency_key: str,
    ) -> TableSnapshot:
        """Seat the caller at an open quick play table of ``preset``, or open one (see the module docstring); a retry
        with ``idempotency_key`` answers with the table the first call seated the caller at."""
        check_key(idempotency_key)
        if not math.isfinite(wait_seconds) or not 0 <= wait_seconds <= MAX_AUTOFILL_SECONDS:
            raise InvalidArgument("wait", f"the wait for people is 0 to {MAX_AUTOFILL_SECONDS} seconds")
        options = TableOptions.build(
            preset,
            seats=QUICK_PLAY_SEATS if seats is None else seats,
            turn_seconds=QUICK_PLAY_TURN_SECONDS,
            autofill_seconds=math.ceil(wait_seconds),
        )
        answered = await self._answer(caller, idempotency_key, options.preset)
        if answered is not None:
            return answered
        async with self.writer.uow() as uow:
            candidates = await uow.tables.list_quick_play_tables(options.preset, QUICK_PLAY_CANDIDATES)
        for record in candidates:
            joined = await self._join(caller, record.id, idempotency_key, options.preset)
            if joined is not None:
                return joined
        return await self._open(caller, options, idempotency_key)

    async def _answer(self, caller: Caller, key: str, preset: str) -> TableSnapshot | None:
        """The answer to a retried quick play: the table the key seated the caller at, as it stands (or None)."""
        async with self.writer.uow() as uow:
            table_id = await uow.tables.find_quick_play(caller.player_id, key)
            if table_id is None:
                return None
            record, table = await self.writer.load(uow, table_id)
            await self.writer.times_of(uow, record, table)
        if record.options.preset != preset:
            raise IdempotencyKeyReused(f"idempotency key {shown(key)} was already used for another quick play")
        return self.writer.snapshot(caller, record, table, replayed=True)

    async def _join(self, caller: Caller, table_id: str, key: str, preset: str) -> TableSnapshot | None:
        """Take the first free seat of the open quick play table ``table_id`` (and start the match when it was the
        last one); ``None`` when the table has no seat for the caller any more."""
        player = caller.player_id

        def command(_record: TableRecord, table: Table) -> Applied:
            joined = commands.join(table, player)
            if any(seat.empty for seat in joined.table.seats):
                return joined
            started = commands.start(joined.table)  # the last seat taken: no need to wait for the autofill
            return Applied(started.table, (*joined.entries, *started.entries))

        def intent(_before: Table, entry: Entry) -> bool:
            return isinstance(entry, SeatJoined) and entry.player_id == player

        async def remember(uow: UnitOfWork, record: TableRecord) -> None:
            await uow.tables.add_quick_play(player, key, record.id, self.writer.clock())

        try:
            return await self.writer.mutate(caller, table_id, key, None, intent, command, also=remember)
        except TableRefused as refused:
            if refused.reason is not TableRefusal.ALREADY_SEATED:
                return None  # full, started or over since it was listed: the next table
        except AlreadyStored:
            pass  # a concurrent retry with this key seated the caller first
        else:  # pragma: no cover - mutate returns or raises
            return None
        # Already seated here (or by a concurrent retry): remember the key if nobody did, and answer with the table.
        try:
            async with self.writer.uow() as uow:
                await uow.tables.add_quick_play(player, key, table_id, self.writer.clock())
                await uow.commit()
        except AlreadyStored:
            pass
        return await self._answer(caller, key, preset)

    async def _open(self, caller: Caller, options: TableOptions, key: str) -> TableSnapshot:
        """Open a quick play table with the caller at seat 0 (filled and started at once when it does not wait)."""
        player = caller.player_id
        await self.limiter.hit("create", player)
        table_id = id_from_key(TABLE_IDS, "quick-play", player, key)
        now = self.writer.clock()
        record = TableRecord(table_id, options, self.seeds(), player, now)
        table = new_table(options, record.seed)
        seated = commands.join(table, player, 0)
        after, entries = seated.table, seated.entries
        if options.autofill_seconds == 0:
            filled = autofill(after)
            bots = immediate_bots(filled.table)
            after, entries = bots.table, (*entries, *filled.entries, *bots.entries)
        try:
            async with self.writer.uow() as uow:
                await uow.tables.add_table(record)
                await uow.tables.add_quick_play(player, key, table_id, now)
                appended, times = await self.writer.append(uow, record, table, after, entries, now, key, player)
                await uow.commit()
        except AlreadyStored:
            # A concurrent retry with this key opened the table (or took the key) first.
            answered = await self._answer(caller, key, options.preset)
            if answered is None:  # pragma: no cover - the key or the table is stored with its row
                raise
            return answered
        record = appended.record
        self.writer.remember(record, after, times)
        self.writer.publish(appended)
        return self.writer.snapshot(caller, record, after)
