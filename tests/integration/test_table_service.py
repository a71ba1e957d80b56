"""The live table use cases (``golf.app.tables.service``) on SQLite and PostgreSQL through the real unit of work:
a whole match against a bot, a race of two moves at one version (exactly one stored), idempotent retries, and a
restart (a new service over the same database) that goes on identically."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from golf.adapters.db.repository import Database
from golf.app.identity import Caller
from golf.app.tables import MatchEnd, TableStatus
from golf.app.tables.read_model import StaleTableVersion, TableSnapshot
from golf.app.tables.service import TableService
from tests.integration.table_play import choose

ANN = Caller(str(uuid.UUID(int=1)))
BOB = Caller(str(uuid.UUID(int=2)))
CAT = Caller(str(uuid.UUID(int=3)))


def now() -> datetime:
    return datetime.now(UTC)


class NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


def service(db: Database) -> TableService:
    return TableService(db, now, NoLimits())


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=4)
    yield db
    await db.dispose()


async def stored_versions(db: Database, table_id: str) -> list[int]:
    async with db() as uow:
        return [e.seq for e in await uow.tables.get_entries(table_id)]


async def two_people_and_a_bot(tables: TableService, holes: int = 2) -> TableSnapshot:
    made = await tables.create_table(ANN, "six-card", seats=3, holes=holes, private=True)
    assert made.join_code is not None
    await tables.join(BOB, "bob", join_code=made.join_code)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    return await tables.start(ANN, made.table_id, "go")


async def play(
    tables: TableService, snap: TableSnapshot, rng: random.Random, prefix: str, max_moves: int | None = None
) -> TableSnapshot:
    """Random legal moves of whichever person is awaited, until the match ends (or ``max_moves``)."""
    players = {ANN.player_id: ANN, BOB.player_id: BOB}
    n = 0
    while snap.view.status is TableStatus.PLAYING and (max_moves is None or n < max_moves):
        seat = rng.choice(snap.view.awaiting)
        player = snap.view.seats[seat].player_id
        assert player is not None
        mine = await tables.get(players[player], snap.table_id)
        snap = await tables.act(
            players[player], snap.table_id, choose(mine.view.legal_moves, rng), f"{prefix}-{n}", mine.version
        )
        n += 1
    return snap


async def test_a_whole_match_is_stored_and_read_back(database: Database) -> None:
    tables = service(database)
    started = await two_people_and_a_bot(tables)
    over = await play(tables, started, random.Random(7), "m")
    assert over.view.status is TableStatus.OVER and over.view.end is MatchEnd.COMPLETED
    assert len(over.view.results) == 2
    assert await stored_versions(database, over.table_id) == list(range(1, over.version + 1))
    fresh = service(database)
    code = started.join_code
    for caller in (ANN, BOB, CAT):
        seen = await fresh.get(caller, over.table_id, join_code=code)
        assert seen.view == (await tables.get(caller, over.table_id, join_code=code)).view
    retried = await tables.start(ANN, over.table_id, "go")
    assert retried.replayed and retried.version == started.version


async def test_two_moves_at_one_version_store_exactly_one(database: Database) -> None:
    # Two replicas (two services, two caches) over one database; both people choose start cards at once.
    first, second = service(database), service(database)
    started = await two_people_and_a_bot(first)
    assert set(started.view.awaiting) == {0, 1}
    ann = await first.get(ANN, started.table_id)
    bob = await second.get(BOB, started.table_id)
    outcomes = await asyncio.gather(
        first.act(ANN, started.table_id, ann.view.legal_moves[0], "ann-reveal", started.version),
        second.act(BOB, started.table_id, bob.view.legal_moves[0], "bob-reveal", started.version),
        return_exceptions=True,
    )
    won = [o for o in outcomes if isinstance(o, TableSnapshot)]
    lost = [o for o in outcomes if isinstance(o, StaleTableVersion)]
    assert len(won) == 1 and len(lost) == 1, outcomes
    assert lost[0].current.version == won[0].version
    assert await stored_versions(database, started.table_id) == list(range(1, won[0].version + 1))
    # Without an expected version the loser's move goes through on a fresh read.
    loser = ANN if won[0].seat == 1 else BOB
    mine = await (first if loser is ANN else second).get(loser, started.table_id)
    done = await (first if loser is ANN else second).act(
        loser, started.table_id, mine.view.legal_moves[0], "retry-reveal"
    )
    assert done.version > won[0].version


async def test_idempotency_keys_are_each_players_own(database: Database) -> None:
    """Bob's key ``move-1`` is his: Ann's own ``move-1`` is another command (it was refused as a reused key), and
    each one's retry answers with what their own command stored."""
    tables = service(database)
    started = await two_people_and_a_bot(tables)
    bob = await tables.get(BOB, started.table_id)
    bob_moved = await tables.act(BOB, started.table_id, bob.view.legal_moves[0], "move-1")
    ann = await tables.get(ANN, started.table_id)
    ann_moved = await tables.act(ANN, started.table_id, ann.view.legal_moves[0], "move-1")
    assert not ann_moved.replayed and ann_moved.version > bob_moved.version
    fresh = service(database)  # retries read from the log, not this process's cache
    bob_again = await fresh.act(BOB, started.table_id, bob.view.legal_moves[0], "move-1")
    ann_again = await fresh.act(ANN, started.table_id, ann.view.legal_moves[0], "move-1")
    assert bob_again.replayed and bob_again.view == bob_moved.view
    assert ann_again.replayed and ann_again.view == ann_moved.view
    assert await stored_versions(database, started.table_id) == list(range(1, ann_moved.version + 1))
    async with database() as uow:
        mine = await uow.tables.find_command(started.table_id, ANN.player_id, "move-1")
        theirs = await uow.tables.find_command(started.table_id, BOB.player_id, "move-1")
        nobody = await uow.tables.find_command(started.table_id, CAT.player_id, "move-1")
    assert mine is not None and theirs is not None and nobody is None
    assert mine[0].player_id == ANN.player_id and theirs[0].player_id == BOB.player_id


async def test_same_key_races_store_once(database: Database) -> None:
    first, second = service(database), service(database)
    started = await two_people_and_a_bot(first)
    await second.get(ANN, started.table_id)
    move = started.view.legal_moves[0]
    a, b = await asyncio.gather(
        first.act(ANN, started.table_id, move, "same-key"), second.act(ANN, started.table_id, move, "same-key")
    )
    assert a.view == b.view and {a.replayed, b.replayed} == {True, False}
    assert await stored_versions(database, started.table_id) == list(range(1, a.version + 1))


async def test_a_restarted_service_goes_on_identically(migrated_url: str) -> None:
    first_db = Database(migrated_url)
    tables = service(first_db)
    started = await two_people_and_a_bot(tables, holes=2)
    mid = await play(tables, started, random.Random(11), "before", max_moves=9)
    assert mid.view.status is TableStatus.PLAYING
    await first_db.dispose()

    second_db = Database(migrated_url)
    try:
        restarted = service(second_db)
        again = await restarted.get(ANN if mid.seat == 0 else BOB, started.table_id)
        assert again.view == mid.view
        # A retry sent before the restart is answered from the log, and play goes on to the end.
        last_key = f"before-{8}"
        async with second_db() as uow:
            found = [await uow.tables.find_command(started.table_id, p.player_id, last_key) for p in (ANN, BOB)]
        assert sum(command is not None for command in found) == 1  # the key of the one who moved
        end = await play(restarted, again, random.Random(5), "after")
        assert end.view.status is TableStatus.OVER and len(end.view.results) == 2
        assert await stored_versions(second_db, started.table_id) == list(range(1, end.version + 1))
    finally:
        await second_db.dispose()
