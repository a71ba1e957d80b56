"""Live table events through the real stores: the hub on SQLite and PostgreSQL (events in order, the versions read
in bulk, a lost notification caught up by the timer) and, on PostgreSQL, between processes: a commit through one
process wakes the watchers of another at once (LISTEN/NOTIFY on a connection of its own), and a LISTEN connection
that drops is opened again and what was missed meanwhile is read."""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import psycopg
import pytest

from golf.adapters.db.repository import Database
from golf.adapters.table_fanout import TableFanout, TableHub, sql_versions
from golf.app.identity import Caller
from golf.app.tables import TableStatus
from golf.app.tables.events import EventKind, Heartbeat, TableEvent, TableEvents, Watch
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.service import TableService
from golf.engine.cardgolf import Knock, Move

ANN = Caller(str(uuid.UUID(int=11)))
BOB = Caller(str(uuid.UUID(int=12)))
WAIT = 10.0


def now() -> datetime:
    return datetime.now(UTC)


class NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=4)
    yield db
    await db.dispose()


def choose(legal: tuple[Move, ...], rng: random.Random) -> Move:
    plain = [m for m in legal if not isinstance(m, Knock)]
    return rng.choice(plain if plain and rng.random() < 0.9 else list(legal))


async def ann_against_a_bot(tables: TableService) -> TableSnapshot:
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    return await tables.start(ANN, made.table_id, "go")


async def ann_moves(tables: TableService, snap: TableSnapshot, rng: random.Random, count: int) -> TableSnapshot:
    for n in range(count):
        if snap.view.status is not TableStatus.PLAYING:
            break
        mine = await tables.get(ANN, snap.table_id)
        snap = await tables.act(ANN, snap.table_id, choose(mine.view.legal_moves, rng), f"{snap.version}-{n}")
    return snap


async def take_events(watch: Watch, until_seq: int, seconds: float = WAIT) -> list[TableEvent]:
    got: list[TableEvent] = []
    async with asyncio.timeout(seconds):
        while not got or got[-1].seq < until_seq:
            item = await watch.__anext__()
            if isinstance(item, TableEvent):
                got.append(item)
    return got


async def stored_seqs(db: Database, table_id: str) -> list[int]:
    async with db() as uow:
        return [e.seq for e in await uow.tables.get_entries(table_id)]


async def test_events_handed_over_by_a_commit_are_the_events_read_from_the_log(database: Database) -> None:
    """The hub of the process that commits takes the appended entries as they are (no read); a hub that only reads
    the log (another process's) must deliver the very same bytes: same entries, same times, same views."""
    from golf.adapters.proto_json import to_json
    from golf.api.table_watch import event_item

    here, there = TableHub(database, catch_up_seconds=60), TableHub(database, catch_up_seconds=60)
    tables = TableService(database, now, NoLimits())
    tables.publishers.append(here.publish)
    tables.publishers.append(lambda appended: there.wake(appended.table_id, appended.after.version))
    snap = await ann_against_a_bot(tables)
    watches = [
        await TableEvents(database, hub, heartbeat_seconds=30).watch(ANN, snap.table_id) for hub in (here, there)
    ]
    try:
        rng = random.Random(7)
        while snap.view.status is TableStatus.PLAYING:
            snap = await ann_moves(tables, snap, rng, 1)
        taken = [await take_events(watch, snap.version) for watch in watches]
        assert [e.seq for e in taken[0]] == [e.seq for e in taken[1]]
        assert len(taken[0]) > 5 and taken[0][-1].seq == snap.version
        assert here.handed_over > 5 and there.handed_over == 0
        for mine, theirs in zip(*taken, strict=True):
            assert to_json(event_item(mine).data) == to_json(event_item(theirs).data)
    finally:
        for watch in watches:
            await watch.aclose()
        await here.close()
        await there.close()


async def test_the_hub_follows_a_match_on_either_database(database: Database) -> None:
    fanout = TableFanout(database, catch_up_seconds=60)
    tables = TableService(database, now, NoLimits())
    tables.publishers.append(fanout.publish)
    events = TableEvents(database, fanout.hub, heartbeat_seconds=30)
    fanout.start()
    try:
        snap = await ann_against_a_bot(tables)
        spectator = await events.watch(BOB, snap.table_id)
        seated = await events.watch(ANN, snap.table_id, after_seq=0)
        try:
            first = await spectator.__anext__()
            assert isinstance(first, TableEvent) and first.kind is EventKind.SNAPSHOT
            start = first.seq
            rng = random.Random(1)
            while snap.view.status is TableStatus.PLAYING:
                snap = await ann_moves(tables, snap, rng, 1)
            seen = await take_events(spectator, snap.version)
            mine = await take_events(seated, snap.version)
        finally:
            await spectator.aclose()
            await seated.aclose()
        assert [e.seq for e in seen] == list(range(start + 1, snap.version + 1))
        assert [e.seq for e in mine] == await stored_seqs(database, snap.table_id)
        assert all(e.snapshot.seat is None for e in seen) and all(e.snapshot.seat == 0 for e in mine)
        assert mine[-1].snapshot.view.status is TableStatus.OVER
        assert fanout.hub.subscribers == 0
        assert await sql_versions(database)([snap.table_id, "no-such-table"]) == {snap.table_id: snap.version}
    finally:
        await fanout.close()


async def test_sql_versions_reads_many_tables_at_once(database: Database) -> None:
    tables = TableService(database, now, NoLimits())
    made = [await tables.create_table(ANN, "six-card", seats=2, holes=1) for _ in range(3)]
    ids = [m.table_id for m in made] * 400  # more than one query's worth of ids
    assert await sql_versions(database)(ids) == {m.table_id: 1 for m in made}


async def test_a_lost_notification_costs_latency_not_an_event(database: Database) -> None:
    hub = TableHub(database, versions=sql_versions(database), catch_up_seconds=0.1)
    tables = TableService(database, now, NoLimits())  # nothing tells the hub: every notification is lost
    events = TableEvents(database, hub, heartbeat_seconds=30)
    hub.start()
    try:
        snap = await ann_against_a_bot(tables)
        watch = await events.watch(BOB, snap.table_id, after_seq=snap.version)
        try:
            assert await watch.__anext__() == Heartbeat(snap.version)
            start = snap.version
            snap = await ann_moves(tables, snap, random.Random(2), 3)
            got = await take_events(watch, snap.version, seconds=5)
        finally:
            await watch.aclose()
        assert [e.seq for e in got] == list(range(start + 1, snap.version + 1))
        assert hub.caught_up >= 1
    finally:
        await hub.close()


# -- between processes: PostgreSQL only ---------------------------------------------------------------------------
@pytest.fixture
async def two_processes(postgres_url: str) -> AsyncIterator[tuple[Database, Database]]:
    """Two "processes" on one PostgreSQL database: each its own pool (and, below, its own hub and LISTEN)."""
    from golf.adapters.db.migrate import upgrade

    upgrade(postgres_url)
    one, two = Database(postgres_url, pool_size=4), Database(postgres_url, pool_size=4)
    yield one, two
    await one.dispose()
    await two.dispose()


async def _listening(fanout: TableFanout) -> None:
    assert fanout.signals is not None
    await asyncio.wait_for(fanout.signals.listening.wait(), WAIT)


@contextlib.asynccontextmanager
async def across(
    two_processes: tuple[Database, Database], backoff_seconds: float | None = None
) -> AsyncIterator[tuple[TableService, TableFanout, TableFanout, TableSnapshot, Watch]]:
    """Moves made through process one, watched by BOB through process two, both LISTENing (their timers too slow
    to matter: only a NOTIFY wakes process two in time): the service, the two fan-outs, the started table and the
    watch (its heartbeat taken)."""
    one, two = two_processes
    fan_one, fan_two = TableFanout(one, catch_up_seconds=600), TableFanout(two, catch_up_seconds=600)
    assert fan_one.signals is not None and fan_two.signals is not None
    if backoff_seconds is not None:
        fan_two.signals.backoff_seconds = backoff_seconds
    tables = TableService(one, now, NoLimits())
    tables.publishers.append(fan_one.publish)
    events_two = TableEvents(two, fan_two.hub, heartbeat_seconds=30)
    fan_one.start()
    fan_two.start()
    try:
        await _listening(fan_one)
        await _listening(fan_two)
        snap = await ann_against_a_bot(tables)
        watch = await events_two.watch(BOB, snap.table_id, after_seq=snap.version)
        try:
            assert await watch.__anext__() == Heartbeat(snap.version)
            yield tables, fan_one, fan_two, snap, watch
        finally:
            await watch.aclose()
    finally:
        await fan_one.close()
        await fan_two.close()


async def test_a_move_through_one_process_wakes_the_watchers_of_another_at_once(
    two_processes: tuple[Database, Database],
) -> None:
    async with across(two_processes) as (tables, fan_one, fan_two, snap, watch):
        rng = random.Random(3)
        for _ in range(4):
            before = snap.version
            snap = await ann_moves(tables, snap, rng, 1)
            loop = asyncio.get_running_loop()
            sent = loop.time()
            got = await take_events(watch, snap.version, seconds=2.0)
            assert [e.seq for e in got] == list(range(before + 1, snap.version + 1))
            assert loop.time() - sent < 1.0
        assert fan_two.hub.caught_up == 0
        assert fan_one.signals is not None and fan_one.signals.sent >= 4


async def test_a_dropped_listen_connection_is_opened_again_and_what_it_missed_is_read(
    two_processes: tuple[Database, Database], postgres_url: str
) -> None:
    async with across(two_processes, backoff_seconds=0.5) as (tables, _, fan_two, snap, watch):
        assert fan_two.signals is not None
        start = snap.version
        # The server ends process two's LISTEN connection (as a failover or a network fault would), and moves are
        # made before it is back: their notifications never reach process two.
        pid = fan_two.signals.server_pid
        assert pid is not None
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        snap = await ann_moves(tables, snap, random.Random(4), 3)
        for _ in range(200):  # opened again after its back-off
            if fan_two.signals.connects >= 2:
                break
            await asyncio.sleep(0.05)
        got = await take_events(watch, snap.version, seconds=5.0)
        assert [e.seq for e in got] == list(range(start + 1, snap.version + 1))
        assert fan_two.signals.connects >= 2
        # And it works as before once it is back.
        before = snap.version
        snap = await ann_moves(tables, snap, random.Random(5), 1)
        got = await take_events(watch, snap.version, seconds=2.0)
        assert [e.seq for e in got] == list(range(before + 1, snap.version + 1))
        assert fan_two.hub.caught_up == 0  # the reconnect read it, not the (slow) timer
