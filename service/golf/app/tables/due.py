"""Work due at a live table by time: quick play's autofill, the timeout action for people past their turn clock, an
away seat's bot turn, one paced bot move (``golf.app.tables.clocks.due_work``), and bot moves a request's bot budget
left over. The table clock (``golf.adapters.table_clock``) runs it for the tables it claims, through
``TableService.run_due``.
"""

from __future__ import annotations

from datetime import datetime

from golf.app.idempotency import until_stored
from golf.app.ports import UnitOfWork
from golf.app.quoting import shown
from golf.app.tables.bots import immediate_bots
from golf.app.tables.clocks import due_at, due_work
from golf.app.tables.commands import Applied
from golf.app.tables.errors import TableChanged
from golf.app.tables.records import TableRecord
from golf.app.tables.state import Table
from golf.app.tables.status import TableStatus
from golf.app.tables.writer import ClockTimes, TableWriter


async def run_due(writer: TableWriter, table_id: str, now: datetime | None = None) -> bool:
    """Do the work due at table ``table_id`` by ``now`` (default: the clock). It is stored through the same append
    at the version read as every mutation, without an idempotency key, and its entries are written at ``now``: when
    another process (or a player) appended first, the table is read again and what is still due is done, so due
    work is stored exactly once. With nothing due, the table's due time is written again and any lease on it ends.
    Returns whether anything was stored."""
    tries = 0

    async def attempt() -> bool:
        nonlocal tries
        tries += 1
        when = writer.clock() if now is None else now
        async with writer.uow() as uow:
            # Work found on the table as this process last wrote it is appended at that version (the store refuses
            # it if the table moved on meanwhile: then it is read again); "nothing due" is only ever decided on a
            # fresh read.
            cached = writer.cached(table_id) if tries == 1 else None
            record, table = cached if cached is not None else await writer.load(uow, table_id)
            work, times = await _due(writer, uow, record, table, when)
            if not work.entries and cached is not None:
                record, table = await writer.load(uow, table_id)
                work, times = await _due(writer, uow, record, table, when)
            if not work.entries:
                due = None if times is None else due_at(table, times.awaited_since, times.last_at)
                await uow.tables.release_due(table_id, table.version, due)
                await uow.commit()
                return False
            appended, after_times = await writer.append(uow, record, table, work.table, work.entries, when, None)
            await uow.commit()
        writer.remember(appended.record, work.table, after_times)
        writer.publish(appended)
        return True

    async def lost(_race: TableChanged) -> bool | None:
        writer.forget(table_id)  # a player (or another process) got there first: read again
        return None

    gave_up = f"table {shown(table_id)} changed too often while its due work was tried; retry"
    return await until_stored(attempt, TableChanged, lost, gave_up)


async def _due(
    writer: TableWriter, uow: UnitOfWork, record: TableRecord, table: Table, when: datetime
) -> tuple[Applied, ClockTimes | None]:
    """The work due at ``table`` by ``when``, and the table's clock times (``None``: it has no clock)."""
    times = await writer.times_of(uow, record, table)
    if times is None:  # no clock: only bot moves left over by a request's bot budget
        work = immediate_bots(table) if table.status is TableStatus.PLAYING else Applied(table, ())
    else:
        work = due_work(table, times.awaited_since, times.last_at, when)
    return work, times
