"""Work due at live tables by time, on SQLite and PostgreSQL: due times stored with every write, claims and their
leases (never two claimers at once while a lease holds, an expired lease claimed again), due work stored exactly once
by concurrent runners and by two table clocks, a restart that keeps the clocks, and quick play (join, open, race for
the last seat, concurrent retries, autofill). A clock the tests move stands in for time: nothing sleeps."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from golf.adapters.db.migrate import upgrade
from golf.adapters.db.repository import Database
from golf.adapters.table_clock import TableClock
from golf.app.identity import Caller
from golf.app.tables import MatchEnd, SeatTimedOut, TableStatus
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.records import TableDue
from golf.app.tables.service import TableService
from golf.app.tables.writer import replay_log
from golf.engine.cardgolf import Reveal

ANN = Caller(str(uuid.UUID(int=1)))
BOB = Caller(str(uuid.UUID(int=2)))
CAT = Caller(str(uuid.UUID(int=3)))
DAN = Caller(str(uuid.UUID(int=4)))


class MovedClock:
    """Time as the test says (microseconds, as the databases keep them)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 6, 1, 9, 30, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=6)
    yield db
    await db.dispose()


@pytest.fixture
def clock() -> MovedClock:
    return MovedClock()


def service(db: Database, clock: MovedClock) -> TableService:
    return TableService(db, clock, NoLimits())


async def due_of(db: Database, table_id: str) -> TableDue:
    async with db() as uow:
        due = await uow.tables.get_due(table_id)
    assert due is not None
    return due


async def claim(db: Database, now: datetime, owner: str, limit: int = 10, lease: float = 10.0) -> list[str]:
    async with db() as uow:
        ids = await uow.tables.claim_due(now, limit, owner, lease)
        await uow.commit()
    return ids


async def paced_table(tables: TableService, caller: Caller = ANN) -> TableSnapshot:
    """A started table whose two bots wait 1 s before each move (due 1 s after the start)."""
    made = await tables.create_table(caller, "six-card", seats=3, holes=1, bot_delay_ms=1000)
    await tables.add_bot(caller, made.table_id, "greedy", "b1")
    await tables.add_bot(caller, made.table_id, "greedy", "b2")
    return await tables.start(caller, made.table_id, "go")


async def log_of(db: Database, table_id: str) -> list[object]:
    async with db() as uow:
        return [e.entry for e in await uow.tables.get_entries(table_id)]


# -- due times and leases ------------------------------------------------------------------------------------------
async def test_claims_hold_leases_until_they_run_out_or_the_table_is_written(
    database: Database, clock: MovedClock
) -> None:
    tables = service(database, clock)
    started = [await paced_table(tables) for _ in range(3)]
    t0 = clock.now
    for snap in started:
        assert await due_of(database, snap.table_id) == TableDue(t0 + timedelta(seconds=1))
    assert await claim(database, t0 + timedelta(seconds=0.5), "proc-a") == []  # not due yet
    clock.advance(1)
    mine = await claim(database, clock.now, "proc-a", limit=2)
    assert len(mine) == 2
    clock.advance(1)
    theirs = await claim(database, clock.now, "proc-b")
    assert len(theirs) == 1 and not set(theirs) & set(mine)  # a held table is never claimed twice
    assert await claim(database, clock.now, "proc-c") == []
    held = await due_of(database, mine[0])
    assert held.lease_owner == "proc-a" and held.lease_until == t0 + timedelta(seconds=11)
    # proc-a dies. Once its leases run out (proc-b's still holds), another process claims its tables.
    clock.now = t0 + timedelta(seconds=11, microseconds=1)
    assert sorted(await claim(database, clock.now, "proc-c")) == sorted(mine)
    # Doing the work ends the lease and stores the next due time; so does finding nothing due.
    assert await tables.run_due(mine[0])
    assert await due_of(database, mine[0]) == TableDue(clock.now + timedelta(seconds=1))
    assert await tables.run_due(mine[0]) is False  # not due again yet: the due time is written again
    assert await due_of(database, mine[0]) == TableDue(clock.now + timedelta(seconds=1))
    # A player's write ends a lease too (and the table is due as that write says).
    assert await claim(database, clock.now, "proc-d") == []
    ann = await tables.get(ANN, theirs[0])
    assert (await due_of(database, theirs[0])).lease_owner == "proc-b"
    await tables.act(ANN, theirs[0], ann.view.legal_moves[0], "ann-reveal")
    assert (await due_of(database, theirs[0])).lease_owner is None


async def test_concurrent_claims_skip_each_others_rows(postgres_url: str, clock: MovedClock) -> None:
    """PostgreSQL: a claim in an open transaction holds its rows; a concurrent claim skips them (never waits)."""
    upgrade(postgres_url)
    db = Database(postgres_url, pool_size=4)
    try:
        tables = service(db, clock)
        for _ in range(4):
            await paced_table(tables)
        clock.advance(5)
        async with db() as first:
            mine = await first.tables.claim_due(clock.now, 2, "proc-a", 10)
            async with db() as second:  # proc-a has not committed: its rows are locked
                theirs = await asyncio.wait_for(second.tables.claim_due(clock.now, 10, "proc-b", 10), 5)
                await second.commit()
            await first.commit()
        assert len(mine) == 2 and len(theirs) == 2 and not set(mine) & set(theirs)
    finally:
        await db.dispose()


# -- exactly once --------------------------------------------------------------------------------------------------
async def test_two_runners_store_due_work_once(database: Database, clock: MovedClock) -> None:
    """Two processes (two services, two caches) run the same due table at the same time, many times over: each
    time exactly one stores the work."""
    first, second = service(database, clock), service(database, clock)
    made = await first.create_table(ANN, "six-card", seats=3, holes=1, turn_seconds=5, missed_turns_limit=1)
    await first.join(BOB, "bob", table_id=made.table_id)
    await first.add_bot(ANN, made.table_id, "greedy", "bot")
    await first.start(ANN, made.table_id, "go")
    await second.get(BOB, made.table_id)  # the second process has it cached too
    rounds = 0
    while (await first.get(ANN, made.table_id)).view.status is TableStatus.PLAYING:
        rounds += 1
        assert rounds < 400
        clock.advance(5)
        stored = await asyncio.gather(first.run_due(made.table_id), second.run_due(made.table_id))
        assert sorted(stored) == [False, True]
    end = await second.get(BOB, made.table_id)
    assert end.view.end is MatchEnd.COMPLETED and end.view.seats[0].away and end.view.seats[1].away
    log = await log_of(database, made.table_id)
    # Every deadline was met once: setup's two timeouts, then one person's turn (or a bot's run) per round.
    assert log.count(SeatTimedOut(0, Reveal((0, 1)))) == 1 and log.count(SeatTimedOut(1, Reveal((0, 1)))) == 1
    async with database() as uow:
        entries = await uow.tables.get_entries(made.table_id)
        loaded = await uow.tables.load_table(made.table_id)
    assert loaded is not None and replay_log(*loaded).version == len(entries)
    commands = Counter(e.created_at for e in entries if e.batch and e.idempotency_key is None)
    assert commands and max(commands.values()) == 1  # one due write per moment


async def test_two_table_clocks_play_paced_tables_to_the_end_once(database: Database, clock: MovedClock) -> None:
    """Two processes' table clocks tick at once over tables of people who never act (timeouts, then away seats'
    bots) and paced bots: every match ends, each deadline met by exactly one write."""
    first, second = service(database, clock), service(database, clock)
    ids = []
    for n in range(3):
        made = await first.create_table(
            ANN, "six-card", seats=2, holes=1, turn_seconds=5, missed_turns_limit=1, bot_delay_ms=500
        )
        await first.add_bot(ANN, made.table_id, "greedy", f"bot-{n}")
        await first.start(ANN, made.table_id, f"go-{n}")
        ids.append(made.table_id)
    clocks = [TableClock(first, database, "proc-a", batch=2), TableClock(second, database, "proc-b", batch=2)]
    for _ in range(2000):
        statuses = [(await first.get(ANN, i)).view.status for i in ids]
        if all(s is TableStatus.OVER for s in statuses):
            break
        clock.advance(0.5)
        await asyncio.gather(*(c.tick() for c in clocks))
        await asyncio.gather(*(c.tick() for c in clocks))  # a table left by a full batch
    else:
        pytest.fail("the matches did not end")
    for table_id in ids:
        async with database() as uow:
            entries = await uow.tables.get_entries(table_id)
            loaded = await uow.tables.load_table(table_id)
            assert loaded is not None
            replay_log(*loaded)  # the whole log replays (TableRecordError otherwise)
            due = await uow.tables.get_due(table_id)
        assert due == TableDue(None)  # over: nothing due, no lease
        commands = Counter(e.created_at for e in entries if e.batch and e.idempotency_key is None)
        assert max(commands.values()) == 1


async def test_the_clocks_survive_a_restart(migrated_url: str, clock: MovedClock) -> None:
    db = Database(migrated_url)
    tables = service(db, clock)
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1, turn_seconds=60)
    await tables.join(BOB, "bob", table_id=made.table_id)
    started = await tables.start(ANN, made.table_id, "go")
    clock.advance(25.123456)
    await tables.act(BOB, made.table_id, Reveal((0, 1)), "bob-reveal")
    await db.dispose()
    db = Database(migrated_url)
    try:
        restarted = service(db, clock)
        ann = await restarted.get(ANN, made.table_id)
        assert ann.turn_deadline == started.turn_deadline == (await due_of(db, made.table_id)).due_at
        clock.advance(34.876543)
        assert not await restarted.run_due(made.table_id)
        clock.advance(0.000001)
        assert await restarted.run_due(made.table_id)
        assert SeatTimedOut(0, Reveal((0, 1))) in await log_of(db, made.table_id)
    finally:
        await db.dispose()


# -- quick play ----------------------------------------------------------------------------------------------------
async def test_quick_play_races_for_the_last_seat_and_retries(database: Database, clock: MovedClock) -> None:
    first, second = service(database, clock), service(database, clock)
    opened = await first.quick_play(ANN, seats=2, wait_seconds=60, idempotency_key="ann")
    assert opened.view.status is TableStatus.SEATING
    bob, cat = await asyncio.gather(
        first.quick_play(BOB, seats=2, wait_seconds=60, idempotency_key="bob"),
        second.quick_play(CAT, seats=2, wait_seconds=60, idempotency_key="cat"),
    )
    assert bob.seat is not None and cat.seat is not None
    assert sorted([bob.table_id == opened.table_id, cat.table_id == opened.table_id]) == [False, True]
    joined = await first.get(ANN, opened.table_id)
    assert joined.view.status is TableStatus.PLAYING and all(s.player_id for s in joined.view.seats)
    other = bob if cat.table_id == opened.table_id else cat
    assert other.view.status is TableStatus.SEATING and other.seat == 0  # the loser opened the next table
    # The same request sent twice at once, by two processes: one table, one seat.
    dan_a, dan_b = await asyncio.gather(
        first.quick_play(DAN, seats=3, wait_seconds=0, idempotency_key="dan"),
        second.quick_play(DAN, seats=3, wait_seconds=0, idempotency_key="dan"),
    )
    assert dan_a.table_id == dan_b.table_id and dan_a.seat == dan_b.seat
    assert {dan_a.replayed, dan_b.replayed} == {False, True}
    dan = await first.get(DAN, dan_a.table_id)
    assert [s.player_id for s in dan.view.seats].count(DAN.player_id) == 1


async def test_quick_play_autofill_through_the_table_clock(database: Database, clock: MovedClock) -> None:
    tables = service(database, clock)
    snap = await tables.quick_play(ANN, "four-card", seats=3, wait_seconds=5, idempotency_key="ann")
    ticker = TableClock(tables, database, "proc-a")
    clock.advance(4)
    assert await ticker.tick() == 0
    clock.advance(1)
    assert await ticker.tick() == 1
    filled = await tables.get(ANN, snap.table_id)
    assert filled.view.status is TableStatus.PLAYING and [s.bot for s in filled.view.seats] == [
        None,
        "greedy",
        "greedy",
    ]
    assert filled.turn_deadline == clock.now + timedelta(seconds=60) == (await due_of(database, snap.table_id)).due_at
    assert await tables.list_open("four-card") == []


async def test_the_table_clock_loop_survives_errors_and_stops(
    database: Database, clock: MovedClock, caplog: pytest.LogCaptureFixture
) -> None:
    tables = service(database, clock)
    started = await paced_table(tables)
    clock.advance(1)
    calls: list[str] = []
    failed, retried = asyncio.Event(), asyncio.Event()
    real = tables.run_due

    async def failing(table_id: str, now: datetime | None = None) -> bool:
        calls.append(table_id)
        if len(calls) == 1:
            failed.set()
            raise RuntimeError("boom")
        stored = await real(table_id, now)
        retried.set()
        return stored

    tables.run_due = failing  # type: ignore[method-assign]
    ticker = TableClock(tables, database, "proc-a", interval=0.01, lease_seconds=1)
    task = ticker.start()
    await asyncio.wait_for(failed.wait(), 10)
    clock.advance(2)  # the failed table's lease runs out: it is claimed again
    await asyncio.wait_for(retried.wait(), 10)
    await ticker.stop()
    assert task.done() and "boom" in caplog.text
    assert (await tables.get(ANN, started.table_id)).version > started.version
