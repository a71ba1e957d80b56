"""The store of live card Golf tables (``golf.adapters.db.table_store``) on SQLite and PostgreSQL: a whole bot
match stored command by command and rebuilt by replay, races at one version, idempotency keys, join codes,
the list of open tables, and a table that survives a restart."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from golf.adapters.db.repository import Database
from golf.adapters.db.table_store import SqlTableStore
from golf.adapters.db.urls import sync_url
from golf.app.errors import Conflict, NotFound
from golf.app.ports import AlreadyStored, TableRepository
from golf.app.tables import (
    Applied,
    BotAdded,
    Entry,
    SeatJoined,
    Table,
    TableOptions,
    TableStarted,
    TableStatus,
    act,
    add_bot,
    join,
    new_table,
    play_bots,
    start,
)
from golf.app.tables.errors import TableChanged
from golf.app.tables.records import TableRecord
from golf.app.tables.writer import replay_log

T0 = datetime(2026, 12, 20, 12, 0, tzinfo=UTC)
OWNER = str(uuid.UUID(int=1))


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=4)
    yield db
    await db.dispose()


def record(options: TableOptions, when: datetime = T0, owner: str = OWNER) -> TableRecord:
    return TableRecord(str(uuid.uuid4()), options, f"seed-{uuid.uuid4().hex}", owner, when)


async def create(db: Database, rec: TableRecord) -> None:
    async with db() as uow:
        await uow.tables.add_table(rec)
        await uow.commit()


async def store(
    db: Database,
    rec: TableRecord,
    before: Table,
    applied: Applied,
    key: str | None = None,
    when: datetime = T0,
    player: str = OWNER,
) -> int:
    """Append one command's entries, as a use case would, in a unit of work of its own (``key`` is ``player``'s)."""
    async with db() as uow:
        version = await uow.tables.append(
            rec.id, before.version, applied.entries, applied.table.status, when, idempotency_key=key, player_id=player
        )
        await uow.commit()
    assert version == applied.table.version
    return version


async def load(db: Database, table_id: str) -> tuple[TableRecord, Table]:
    async with db() as uow:
        loaded = await uow.tables.load_table(table_id)
    assert loaded is not None
    record, log = loaded
    return record, replay_log(record, log)


async def bot_match(db: Database, holes: int = 2) -> tuple[TableRecord, Table, list[Entry]]:
    """A table of bots played to the end, each command stored as it is made (bot turns in several batches)."""
    rec = record(TableOptions.build("six-card", seats=3, holes=holes))
    await create(db, rec)
    table, log = new_table(rec.options, rec.seed), list[Entry]()
    commands = [lambda t: add_bot(t, "strong"), lambda t: add_bot(t, "greedy"), lambda t: add_bot(t, "random"), start]
    for n, command in enumerate(commands):
        applied = command(table)
        await store(db, rec, table, applied, key=f"cmd-{n}")
        table, log = applied.table, [*log, *applied.entries]
    while table.status is TableStatus.PLAYING:
        applied = play_bots(table, max_moves=25)
        await store(db, rec, table, applied)
        table, log = applied.table, [*log, *applied.entries]
    return rec, table, log


async def test_a_whole_bot_match_is_stored_and_replays_to_the_same_table(database: Database) -> None:
    rec, table, log = await bot_match(database)
    assert table.status is TableStatus.OVER and len(table.sheet.holes) == 2
    stored, rebuilt = await load(database, rec.id)
    assert rebuilt == table and rebuilt.version == len(log) == stored.version
    assert stored.status is TableStatus.OVER and stored.options == rec.options and stored.seed == rec.seed
    assert stored.created_at == T0 and stored.owner_id == OWNER and stored.listed and stored.join_code is None
    async with database() as uow:
        entries = await uow.tables.get_entries(rec.id)
        tail = await uow.tables.get_entries(rec.id, after_seq=len(log) - 3)
    assert [e.entry for e in entries] == log and [e.seq for e in entries] == list(range(1, len(log) + 1))
    assert [e.seq for e in tail] == [len(log) - 2, len(log) - 1, len(log)]
    assert entries[0].entry == BotAdded(0, "strong") and entries[3].entry == TableStarted()
    assert [e.idempotency_key for e in entries[:4]] == ["cmd-0", "cmd-1", "cmd-2", "cmd-3"]
    # The bot turns went in batches: the first entry of each says how many the batch wrote.
    batches = [e.batch for e in entries[4:] if e.batch]
    assert sum(batches) == len(log) - 4 and max(batches) == 25 and all(e.batch >= 0 for e in entries)
    assert all(e.created_at == T0 for e in entries)


async def test_two_writers_at_one_version_store_exactly_one_command(database: Database) -> None:
    rec = record(TableOptions.build("six-card", seats=4))
    await create(database, rec)
    table = new_table(rec.options, rec.seed)
    for round_ in range(3):
        tries = [join(table, f"player-{round_}-{n}", seat=round_) for n in range(4)]

        async def attempt(applied: Applied, before: int, key: str) -> int:
            async with database() as uow:
                version = await uow.tables.append(
                    rec.id, before, applied.entries, applied.table.status, T0, key, player_id=OWNER
                )
                await asyncio.sleep(0.01)  # hold the transaction open so the others run into it
                await uow.commit()
                return version

        results = await asyncio.gather(
            *(attempt(a, table.version, f"k-{round_}-{n}") for n, a in enumerate(tries)), return_exceptions=True
        )
        won = [n for n, r in enumerate(results) if not isinstance(r, BaseException)]
        assert len(won) == 1, results
        lost = [r for r in results if isinstance(r, BaseException)]
        assert all(isinstance(r, TableChanged) and isinstance(r, Conflict) and not r.key_taken for r in lost)
        table = tries[won[0]].table
        _, stored = await load(database, rec.id)
        assert stored == table and stored.version == round_ + 1
    # A writer that read an old version stores nothing, not even the entries after the ones that exist.
    late = join(new_table(rec.options, rec.seed), "late", seat=3)
    with pytest.raises(TableChanged, match="version 3, not 0"):
        await store(database, rec, new_table(rec.options, rec.seed), late)
    assert (await load(database, rec.id))[1] == table


async def test_an_idempotency_key_is_stored_once_and_finds_its_command(database: Database) -> None:
    rec = record(TableOptions.build("six-card", seats=2))
    await create(database, rec)
    table = new_table(rec.options, rec.seed)
    seated = join(table, "ann")
    await store(database, rec, table, seated, key="join-ann")
    bots = add_bot(seated.table, "greedy")
    started = start(bots.table)
    both = Applied(started.table, (*bots.entries, *started.entries))  # one command, two entries
    await store(database, rec, seated.table, both, key="fill-and-start")
    # A retry at the version it first read, and one at the table's present version: both find the key taken.
    for before, applied in ((seated.table, both), (both.table, first_move(both.table, 0))):
        with pytest.raises(TableChanged) as info:
            await store(database, rec, before, applied, key="fill-and-start")
        assert info.value.key_taken
    async with database() as uow:
        command = await uow.tables.find_command(rec.id, OWNER, "fill-and-start")
        assert await uow.tables.find_command(rec.id, OWNER, "never-used") is None
        assert await uow.tables.find_command(rec.id, OWNER, "join-ann") is not None
    assert command is not None and [e.entry for e in command] == [BotAdded(1, "greedy"), TableStarted()]
    assert [(e.seq, e.batch, e.idempotency_key) for e in command] == [(2, 2, "fill-and-start"), (3, 0, None)]
    stored, rebuilt = await load(database, rec.id)
    assert stored.version == 3 and stored.status is TableStatus.PLAYING and rebuilt == both.table
    # The database itself refuses a second entry at a seq or a second use of a key, whoever writes the SQL.
    engine = sa.create_engine(sync_url(database.url))
    try:
        for seq, key in ((3, None), (9, "join-ann")):
            with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):
                conn.execute(
                    sa.text(
                        "INSERT INTO card_golf_table_entries (table_id, seq, idempotency_key, player_id, batch, entry,"
                        " seat, created_at) VALUES (:t, :s, :k, :p, 1, :e, NULL, :c)"
                    ),
                    {"t": rec.id, "s": seq, "k": key, "p": OWNER, "e": '{"type":"start","v":1}', "c": T0},
                )
    finally:
        engine.dispose()


async def test_a_command_of_hundreds_of_entries_is_stored_whole_or_not_at_all(database: Database) -> None:
    """More entries than one statement takes (the first ones go with the row's update on PostgreSQL): all are
    stored, in order; at a stale version, or with a key already in the log, none is."""
    rec = record(TableOptions.build("six-card", seats=2, holes=1))
    await create(database, rec)
    many = [SeatJoined(n % 2, f"p{n}") for n in range(250)]
    async with database() as uow:
        assert await uow.tables.append(rec.id, 0, many, TableStatus.SEATING, T0, "big", player_id=OWNER) == 250
        await uow.commit()
    for version, key in ((0, None), (250, "big"), (100, None)):
        async with database() as uow:
            with pytest.raises(TableChanged) as lost:
                await uow.tables.append(rec.id, version, many, TableStatus.SEATING, at(1), key, player_id=OWNER)
        assert lost.value.key_taken is (key == "big")
    async with database() as uow:
        stored = await uow.tables.get_entries(rec.id)
        row = await uow.tables.get_table(rec.id)
    assert [e.entry for e in stored] == many and [e.seq for e in stored] == list(range(1, 251))
    assert [e.batch for e in stored[:2]] == [250, 0] and stored[0].idempotency_key == "big"
    assert row is not None and row.version == 250 and all(e.created_at == T0 for e in stored)


async def test_appending_to_no_table_is_not_found(database: Database) -> None:
    async with database() as uow:
        assert await uow.tables.load_table("no-such-table") is None
        assert await uow.tables.get_table("no-such-table") is None
        with pytest.raises(NotFound):
            await uow.tables.append("no-such-table", 0, [SeatJoined(0, "ann")], TableStatus.SEATING, T0)
        with pytest.raises(ValueError, match="at least one"):
            await uow.tables.append("no-such-table", 0, [], TableStatus.SEATING, T0)


async def test_join_codes_are_unique_among_tables_in_play(database: Database) -> None:
    private = record(TableOptions.build("six-card", seats=2, join_code="golf42"))
    await create(database, private)
    same_code = record(TableOptions.build("four-card", seats=2, join_code="GOLF42"))
    with pytest.raises(AlreadyStored) as info:
        await create(database, same_code)
    assert info.value.constraint == "uq_card_golf_tables_join_code"
    for _ in range(2):  # listed tables have no code: any number of them
        listed = record(TableOptions.build("six-card", seats=2))
        await create(database, listed)
    with pytest.raises(AlreadyStored) as info:
        await create(database, listed)  # the same id again
    assert info.value.constraint == "card_golf_tables_pkey"
    async with database() as uow:
        found = await uow.tables.find_by_join_code(" golf42 ")
        assert await uow.tables.find_by_join_code("GOLF43") is None
    assert found is not None and found.id == private.id and not found.listed and found.join_code == "GOLF42"
    # Once its match is over, its code may open a new table.
    table = new_table(private.options, private.seed)
    for command in (lambda t: add_bot(t, "random"), lambda t: add_bot(t, "random"), start, play_bots):
        applied = command(table)
        await store(database, private, table, applied)
        table = applied.table
    assert table.status is TableStatus.OVER
    await create(database, same_code)
    async with database() as uow:
        found = await uow.tables.find_by_join_code("golf42")
    assert found is not None and found.id == same_code.id and found.options.preset == "four-card"


async def test_open_listed_tables_newest_first(database: Database) -> None:
    made: list[TableRecord] = []
    for n in range(6):
        rec = record(TableOptions.build("six-card" if n % 2 == 0 else "four-card", seats=2), when=at(n))
        await create(database, rec)
        made.append(rec)
    await create(database, record(TableOptions.build("six-card", seats=2, join_code="HIDDEN1"), when=at(10)))
    # A table that started is no longer open.
    started = made[4]
    table = new_table(started.options, started.seed)
    for command in (lambda t: add_bot(t, "random"), lambda t: add_bot(t, "random"), start):
        applied = command(table)
        await store(database, started, table, applied)
        table = applied.table
    async with database() as uow:
        repo: TableRepository = uow.tables
        assert isinstance(repo, SqlTableStore)
        every = await repo.list_open_tables(10)
        first = await repo.list_open_tables(2)
        six = await repo.list_open_tables(10, preset="six-card")
        none = await repo.list_open_tables(10, preset="nine-card")
    assert [r.id for r in every] == [made[n].id for n in (5, 3, 2, 1, 0)]
    assert [r.id for r in first] == [made[5].id, made[3].id]
    assert [r.id for r in six] == [made[2].id, made[0].id] and none == []
    assert all(r.status is TableStatus.SEATING and r.listed and r.version == 0 for r in every)


async def test_a_table_survives_a_restart_mid_hole(migrated_url: str) -> None:
    first = Database(migrated_url)
    # Nine-card: each player chooses the start cards (six-card-jokers turns up its top row at the deal).
    rec = record(TableOptions.build("nine-card", seats=3, holes=2))
    await create(first, rec)
    table = new_table(rec.options, rec.seed)
    log: list[Entry] = []
    for command in (lambda t: join(t, "ann"), lambda t: add_bot(t, "greedy"), lambda t: add_bot(t, "strong"), start):
        applied = command(table)
        await store(first, rec, table, applied, key=f"k{table.version}")
        table, log = applied.table, [*log, *applied.entries]
    applied = play_bots(table)  # the bots choose their start cards; ann must choose hers
    await store(first, rec, table, applied)
    table = applied.table
    await first.dispose()

    second = Database(migrated_url)
    try:
        stored, rebuilt = await load(second, rec.id)
        assert rebuilt == table and stored.status is TableStatus.PLAYING and rebuilt.awaiting() == (0,)
        # It goes on from where it was: a retry of a command stored before the restart still finds its key.
        async with second() as uow:
            again = await uow.tables.find_command(rec.id, OWNER, "k0")
        assert again is not None and [e.entry for e in again] == [SeatJoined(0, "ann")]
        hole = rebuilt.hole
        assert hole is not None
        moved = first_move(rebuilt, 0)
        await store(second, rec, rebuilt, moved, key="ann-reveals")
        assert (await load(second, rec.id))[1] == moved.table
    finally:
        await second.dispose()


def first_move(table: Table, seat: int) -> Applied:
    """``seat``'s first legal move."""
    assert table.hole is not None
    return act(table, seat, table.hole.legal_moves(seat)[0])
