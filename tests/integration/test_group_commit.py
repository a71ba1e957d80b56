"""Group commit on PostgreSQL: concurrent moves stored by one statement, each request with its own outcome."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import asyncpg
import pytest

from golf.adapters.db.drivers import UniqueViolation
from golf.adapters.db.group_commit import Grouped
from golf.adapters.db.migrate import upgrade
from golf.adapters.db.postgres_driver import PostgresDriver
from golf.adapters.db.repository import Database
from golf.app.errors import StorageUnavailable
from golf.app.records import GameRecord, MoveRecord
from golf.engine.solitaire.moves import Draw
from tests.integration.storage_services import PLAYER, now, services

# A counter per name that must only go up by one: the condition of each entry, like a game's version.
STEP = Grouped(
    "UPDATE counters SET value = ? WHERE name = ? AND value = ? RETURNING value",
    """
    WITH d AS (
        SELECT * FROM unnest($1::int[], $2::text[], $3::int[]) WITH ORDINALITY AS d(value, name, expected, entry)
    )
    UPDATE counters SET value = d.value FROM d WHERE counters.name = d.name AND counters.value = d.expected
    RETURNING d.entry, counters.value
    """,
)
LOG = Grouped(
    "INSERT INTO log (key) VALUES (?) RETURNING key",
    """
    WITH d AS (SELECT * FROM unnest($1::text[]) WITH ORDINALITY AS d(key, entry)),
    stored AS (INSERT INTO log (key) SELECT key FROM d RETURNING key)
    SELECT d.entry, stored.key FROM stored JOIN d USING (key)
    """,
)


@pytest.fixture
async def driver(postgres_url: str) -> AsyncIterator[PostgresDriver]:
    conn = await asyncpg.connect(postgres_url)
    await conn.execute("CREATE TABLE counters (name text PRIMARY KEY, value int NOT NULL)")
    await conn.execute("CREATE TABLE log (key varchar(8) PRIMARY KEY)")
    await conn.executemany("INSERT INTO counters VALUES ($1, 0)", [("a",), ("b",), ("c",)])
    await conn.execute(
        "CREATE FUNCTION deadlock() RETURNS int LANGUAGE plpgsql AS "
        "$$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$"
    )
    await conn.close()
    db = Database(postgres_url, pool_size=2)
    assert isinstance(db.driver, PostgresDriver)
    yield db.driver
    await db.dispose()


async def _values(url: str) -> dict[str, int]:
    conn = await asyncpg.connect(url)
    try:
        return {r["name"]: r["value"] for r in await conn.fetch("SELECT name, value FROM counters")}
    finally:
        await conn.close()


async def test_concurrent_entries_are_stored_by_one_statement(driver: PostgresDriver, postgres_url: str) -> None:
    group = driver.group
    rows = await asyncio.gather(*(group.fetchone(STEP, (1, name, 0)) for name in "abc"))
    assert [r["value"] for r in rows] == [1, 1, 1]
    assert (group.batches, group.entries) == (1, 3)
    assert await _values(postgres_url) == {"a": 1, "b": 1, "c": 1}


async def test_an_entry_whose_condition_fails_gets_none_and_the_others_are_stored(
    driver: PostgresDriver, postgres_url: str
) -> None:
    # "a" twice at the same value: one of the two goes ahead; "a" from 1 to 2 in the same batch is too early.
    rows = await asyncio.gather(
        *(driver.group.fetchone(STEP, args) for args in [(1, "a", 0), (1, "a", 0), (2, "a", 1), (1, "b", 0)])
    )
    assert driver.group.batches == 1
    assert sorted(r is None for r in rows[:2]) == [False, True]
    assert rows[2] is None and rows[3]["value"] == 1
    assert await _values(postgres_url) == {"a": 1, "b": 1, "c": 0}
    # Alone, the single statement gives None the same way.
    assert await driver.group.fetchone(STEP, (5, "c", 4)) is None
    assert (await driver.group.fetchone(STEP, (1, "c", 0)))["value"] == 1


async def test_a_batch_that_breaks_a_unique_constraint_is_sent_again_entry_by_entry(driver: PostgresDriver) -> None:
    outcomes = await asyncio.gather(
        *(driver.group.fetchone(LOG, (key,)) for key in ["x", "y", "x", "z"]), return_exceptions=True
    )
    assert driver.group.batches == 1
    assert [o["key"] for o in outcomes if not isinstance(o, BaseException)] == ["x", "y", "z"]
    (refused,) = [o for o in outcomes if isinstance(o, BaseException)]
    assert isinstance(refused, UniqueViolation) and refused.constraint == "log_pkey"
    assert outcomes[2] is refused  # the second "x", in the order sent


# The batch form always fails as a deadlock would; the single form is STEP's.
DEADLOCKED = Grouped(
    STEP.one,
    "SELECT d.entry, deadlock() AS value "
    "FROM unnest($1::int[], $2::text[], $3::int[]) WITH ORDINALITY AS d(v, n, e, entry)",
)


async def test_a_batch_rolled_back_by_a_deadlock_is_sent_again_entry_by_entry(
    driver: PostgresDriver, postgres_url: str
) -> None:
    rows = await asyncio.gather(*(driver.group.fetchone(DEADLOCKED, (1, name, 0)) for name in "ab"))
    assert driver.group.batches == 1
    assert [r["value"] for r in rows] == [1, 1]
    assert await _values(postgres_url) == {"a": 1, "b": 1, "c": 0}


async def test_an_entry_with_a_value_out_of_range_fails_alone(driver: PostgresDriver) -> None:
    outcomes = await asyncio.gather(
        *(driver.group.fetchone(LOG, (key,)) for key in ["p", "far too long a key", "q"]), return_exceptions=True
    )
    assert driver.group.batches == 1
    stored = [o["key"] for o in outcomes if not isinstance(o, BaseException)]
    assert stored == ["p", "q"]
    assert isinstance(outcomes[1], asyncpg.StringDataRightTruncationError)


async def test_a_request_cancelled_before_its_batch_leaves_is_not_sent(
    driver: PostgresDriver, postgres_url: str
) -> None:
    first = asyncio.ensure_future(driver.group.fetchone(STEP, (1, "a", 0)))
    second = asyncio.ensure_future(driver.group.fetchone(STEP, (1, "b", 0)))
    await asyncio.sleep(0)  # both are waiting; the writer has not run yet
    second.cancel()
    assert (await first)["value"] == 1
    with pytest.raises(asyncio.CancelledError):
        await second
    assert await _values(postgres_url) == {"a": 1, "b": 0, "c": 0}


async def _kill_others(url: str) -> int:
    admin = await asyncpg.connect(url)
    try:
        killed: int = await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        )
        return killed
    finally:
        await admin.close()


SLEEP = Grouped(
    "SELECT pg_sleep(?) IS NULL AS slept",
    "SELECT d.entry, pg_sleep(d.s) IS NULL AS slept FROM unnest($1::float8[]) WITH ORDINALITY AS d(s, entry)",
)


async def test_a_connection_lost_mid_statement_is_storage_unavailable_and_the_next_batch_connects_again(
    driver: PostgresDriver, postgres_url: str
) -> None:
    sleeping = asyncio.ensure_future(driver.group.fetchone(SLEEP, (5.0,)))
    for _ in range(100):
        await asyncio.sleep(0.02)
        if driver.group.batches:
            break
    await asyncio.sleep(0.1)  # the statement is on its way
    assert await _kill_others(postgres_url) >= 1
    with pytest.raises(StorageUnavailable):
        await sleeping
    assert (await driver.group.fetchone(STEP, (1, "a", 0)))["value"] == 1
    # Killed while idle: the writer finds its connection closed and connects again, unseen by the request.
    assert await _kill_others(postgres_url) >= 1
    await asyncio.sleep(0.2)
    assert (await driver.group.fetchone(STEP, (2, "a", 1)))["value"] == 2


async def test_closing_refuses_new_entries_and_the_database_opens_again(postgres_url: str) -> None:
    db = Database(postgres_url, pool_size=2)
    assert isinstance(db.driver, PostgresDriver)
    closed = db.driver.group
    await db.dispose()
    with pytest.raises(StorageUnavailable):
        await closed.fetchone(STEP, (1, "a", 0))
    async with db() as uow:  # a closed database opens again on its next unit of work, with a new writer
        assert await uow.tx.fetchone("SELECT 1 AS one") is not None
    assert db.driver.group is not closed
    await db.dispose()


async def test_under_load_a_batch_gathers_until_as_many_wait_as_came_together_or_a_quiet_step(
    driver: PostgresDriver, postgres_url: str
) -> None:
    group = driver.group
    group.delay = 0.8  # a quiet step of 0.1 s
    clock = asyncio.get_running_loop().time
    started = clock()
    assert (await group.fetchone(STEP, (1, "a", 0)))["value"] == 1
    assert clock() - started < 0.09  # no load yet: sent at once
    await asyncio.gather(*(group.fetchone(STEP, (1, name, 0)) for name in "bc"))  # two came together: load
    before = group.batches
    first = asyncio.ensure_future(group.fetchone(STEP, (2, "a", 1)))
    await asyncio.sleep(0.05)  # within a quiet step: the writer still waits for a second entry
    second = group.fetchone(STEP, (2, "b", 1))
    assert [r["value"] for r in await asyncio.gather(first, second)] == [2, 2]
    assert group.batches - before == 1
    started = clock()
    assert (await group.fetchone(STEP, (2, "c", 1)))["value"] == 2  # alone: sent after one quiet step
    assert 0.09 < clock() - started < 0.6
    assert await _values(postgres_url) == {"a": 2, "b": 2, "c": 2}


async def test_a_unit_of_work_that_only_sends_a_grouped_statement_takes_no_pooled_connection(
    postgres_url: str,
) -> None:
    db = Database(postgres_url, pool_size=1)
    upgrade(postgres_url)
    service = services(db)
    game = (await service.create_game(PLAYER, winnable_only=False)).game
    async with db() as holder:  # the pool's only connection, in a transaction
        await holder.tx.execute("SELECT 1")
        stored = await asyncio.wait_for(
            _record(db, MoveRecord(game.id, 1, "T", "k", now()), replace(game, version=1, line=["T"]), 0, None), 5
        )
        assert stored == 0
        await holder.commit()
    assert (await service.get_game(PLAYER, game.id)).game.version == 1
    await db.dispose()


@pytest.fixture
async def pg_database(postgres_url: str) -> AsyncIterator[Database]:
    upgrade(postgres_url)
    db = Database(postgres_url, pool_size=8)
    yield db
    await db.dispose()


async def _record(db: Database, entry: MoveRecord, game: GameRecord, expected: int, undo_of: int | None) -> int | None:
    async with db() as uow:
        hints = await uow.games.record_change(entry, game, expected, undo_of)
        await uow.commit()
        return hints


async def test_moves_of_several_games_stored_together_each_at_its_version(pg_database: Database) -> None:
    service = services(pg_database)
    games = [(await service.create_game(PLAYER, winnable_only=False)).game for _ in range(3)]
    driver = pg_database.driver
    assert isinstance(driver, PostgresDriver)
    before = driver.group.batches

    def moved(game: GameRecord, version: int) -> GameRecord:
        return replace(game, version=version, line=["T"] * version, updated_at=now())

    a, b, c = games
    outcomes = await asyncio.gather(
        _record(pg_database, MoveRecord(a.id, 1, "T", "a1", now()), moved(a, 1), 0, None),
        _record(pg_database, MoveRecord(a.id, 2, "T", "a2", now()), moved(a, 2), 1, None),  # sent too early
        _record(pg_database, MoveRecord(b.id, 1, "T", "b1", now()), moved(b, 1), 0, None),
        _record(pg_database, MoveRecord(c.id, 1, "T", "c1", now()), moved(c, 1), 0, None),
        _record(pg_database, MoveRecord(c.id, 1, "T", "c1", now()), moved(c, 1), 0, None),  # a retry racing
    )
    assert driver.group.batches - before == 1
    # One of the two tries of c1 is stored; the other finds the game moved on, as a lost race does (the service
    # then finds the stored move by its key).
    assert list(outcomes[:3]) == [0, None, 0] and sorted(outcomes[3:], key=str) == [0, None]
    for game, version in [(a, 1), (b, 1), (c, 1)]:
        snap = await service.get_game(PLAYER, game.id)
        assert snap.game.version == version
        assert [m.seq for m in await service.list_moves(PLAYER, game.id)] == [1]


async def test_an_undo_stored_with_other_moves_marks_the_entry_it_takes_back_and_its_game(
    pg_database: Database,
) -> None:
    service = services(pg_database)
    first = (await service.create_game(PLAYER, winnable_only=False)).game
    other = (await service.create_game(PLAYER, winnable_only=False)).game
    await service.play_move(PLAYER, first.id, Draw(), "draw")
    at = (await service.get_game(PLAYER, first.id)).game
    driver = pg_database.driver
    assert isinstance(driver, PostgresDriver)
    before = driver.group.batches
    undo = MoveRecord(first.id, 2, "U", "undo", now())
    # The draw taken back showed a stock card: the batch writes the game's stock_seen too (its own column).
    taken_back = replace(at, version=2, line=[], undos_used=1, updated_at=now(), stock_seen=True)
    outcomes = await asyncio.gather(
        _record(pg_database, undo, taken_back, 1, 1),
        _record(pg_database, MoveRecord(other.id, 1, "T", "d", now()), replace(other, version=1, line=["T"]), 0, None),
    )
    assert list(outcomes) == [0, 0]
    assert driver.group.batches - before == 1
    log = await service.list_moves(PLAYER, first.id)
    assert [(m.seq, m.undone_by) for m in log] == [(1, 2), (2, None)]
    assert (await service.get_game(PLAYER, first.id)).game.stock_seen
    assert not (await service.get_game(PLAYER, other.id)).game.stock_seen
