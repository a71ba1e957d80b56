"""The SQL adapter on SQLite and PostgreSQL: migrations, constraints, races, and a game across restarts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from golf.adapters.db.migrate import at_head, upgrade
from golf.adapters.db.repository import Database
from golf.adapters.db.urls import sync_url
from golf.app.dealing import DealSettings
from golf.app.errors import Conflict
from golf.app.identity import AccessToken, Caller
from golf.app.ports import DuplicateMove
from golf.app.records import DealStanding, MoveRecord
from golf.app.solitaire import SolitaireService
from golf.app.solving import InlineSolver
from golf.bootstrap import Services, build_services
from golf.engine.solitaire.moves import Draw
from golf.engine.solitaire.state import Status

PLAYER = Caller("00000000-0000-0000-0000-000000000001")
EVICTED = datetime(2026, 3, 2, 8, 30, tzinfo=UTC)


def now() -> datetime:
    return datetime.now(UTC)


class NoLimits:
    """Rate limits are not what these tests are about."""

    async def hit(self, limit: str, key: str) -> None:
        return None


class NoTokens:
    def issue(self, player_id: str) -> AccessToken:
        raise AssertionError("these tests sign no one in")


def built(database: Database) -> Services:
    return build_services(database, now, InlineSolver(), DealSettings(solver_budget=300_000), NoTokens(), NoLimits())


def services(database: Database) -> SolitaireService:
    return built(database).games


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=4)
    yield db
    await db.dispose()


def test_migrations_reach_head_and_go_back(database_url: str) -> None:
    assert not at_head(database_url)
    upgrade(database_url)
    assert at_head(database_url)
    upgrade(database_url)  # idempotent
    from alembic import command

    from golf.adapters.db.migrate import alembic_config

    command.downgrade(alembic_config(database_url), "base")
    assert not at_head(database_url)
    upgrade(database_url)
    assert at_head(database_url)


async def test_the_database_refuses_a_second_move_per_seq_and_per_key(database: Database) -> None:
    service = services(database)
    game = (await service.create_game(PLAYER, winnable_only=False)).game
    moved = replace(game, version=1, line=["T"])
    async with database() as uow:
        assert await uow.repo.record_change(MoveRecord(game.id, 1, "T", "a", now()), moved, 0, None) == 0
        await uow.commit()
    for move, key_taken in (
        (MoveRecord(game.id, 1, "T", "b", now()), False),
        (MoveRecord(game.id, 2, "T", "a", now()), True),
    ):
        async with database() as uow:
            with pytest.raises(DuplicateMove) as err:
                await uow.repo.record_change(move, replace(moved, version=2), 1, None)
            assert err.value.key_taken is key_taken
    # A game no longer at the expected version stores nothing, not even the log entry.
    async with database() as uow:
        assert await uow.repo.record_change(MoveRecord(game.id, 2, "T", "c", now()), moved, 0, None) is None
    async with database() as uow:
        assert [m.seq for m in await uow.repo.get_moves(game.id)] == [1]
        stored = await uow.repo.get_game(game.id)
        assert stored is not None and stored.version == 1
    # The constraint holds for raw SQL too, not only through our code.
    engine = sa.create_engine(sync_url(database.url))
    try:
        with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):
            conn.execute(
                sa.text(
                    "INSERT INTO moves (game_id, seq, code, idempotency_key, created_at) VALUES (:g, 1, 'T', 'z', :t)"
                ),
                {"g": game.id, "t": now()},
            )
    finally:
        engine.dispose()


async def test_concurrent_moves_are_serialised(database: Database) -> None:
    service = services(database)
    game = (await service.create_game(PLAYER, "", "wrap", winnable_only=False)).game
    results = await asyncio.gather(
        *(service.play_move(PLAYER, game.id, Draw(), f"k{i}") for i in range(8)), return_exceptions=True
    )
    done = [r for r in results if not isinstance(r, BaseException)]
    assert all(isinstance(r, Conflict) for r in results if isinstance(r, BaseException))
    versions = sorted(r.game.version for r in done)
    assert versions == list(range(1, len(done) + 1))
    async with database() as uow:
        log = await uow.repo.get_moves(game.id)
        stored = await uow.repo.get_game(game.id)
    assert [m.seq for m in log] == versions
    assert stored is not None and stored.version == len(done) == len(stored.line)


async def test_concurrent_retries_store_once(database: Database) -> None:
    service = services(database)
    game = (await service.create_game(PLAYER, "", "wrap", winnable_only=False)).game
    results = await asyncio.gather(*(service.play_move(PLAYER, game.id, Draw(), "same") for _ in range(6)))
    assert {r.game.version for r in results} == {1}
    assert sum(not r.replayed for r in results) == 1
    async with database() as uow:
        assert len(await uow.repo.get_moves(game.id)) == 1


async def test_game_survives_a_restart_and_replays_from_its_log(migrated_url: str) -> None:
    first = Database(migrated_url)
    service = services(first)
    snap = await service.create_game(PLAYER, "", "wrap", winnable_only=False)
    for i in range(5):
        snap = await service.play_move(PLAYER, snap.game.id, snap.state.legal_moves()[0], f"k{i}")
    await first.dispose()

    second = Database(migrated_url)
    try:
        again = services(second)
        restored = await again.get_game(PLAYER, snap.game.id)
        assert restored.state == snap.state and restored.game.version == 5
        async with second() as uow:
            log = await uow.repo.get_moves(snap.game.id)
        assert [m.code for m in log] == restored.game.line
        while restored.state.status is Status.IN_PROGRESS:
            restored = await again.play_move(
                PLAYER, restored.game.id, restored.state.legal_moves()[0], f"n{restored.game.version}"
            )
        assert restored.game.finished_at is not None
    finally:
        await second.dispose()


async def test_listing_pages_through_everything(database: Database) -> None:
    service = services(database)
    other = Caller("00000000-0000-0000-0000-000000000002")
    made = {(await service.create_game(PLAYER, winnable_only=False)).game.id for _ in range(7)}
    theirs = (await service.create_game(other, winnable_only=False)).game.id
    seen: list[str] = []
    page, token = await service.list_games(PLAYER, 3)
    seen += [s.game.id for s in page]
    while token:
        page, token = await service.list_games(PLAYER, 3, token)
        seen += [s.game.id for s in page]
    assert set(seen) == made and len(seen) == 7
    assert [s.game.id for s in (await service.list_games(other))[0]] == [theirs]


def test_migrations_match_the_table_declarations(migrated_url: str) -> None:
    """Alembic's autogenerate finds nothing to add: the SQLModel tables and the migrations agree."""
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from golf.adapters.db.tables import metadata

    engine = sa.create_engine(sync_url(migrated_url))
    try:
        with engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), metadata)
    finally:
        engine.dispose()
    assert diff == []


async def test_the_pool_deals_the_least_dealt_first_and_evicts_the_most_dealt(database: Database) -> None:
    service = services(database)
    deals = [await service.create_deal(PLAYER, "wrap", seed=f"s{i}") for i in range(3)]
    async with database() as uow:
        for deal in deals:
            await uow.repo.pool_add("wrap", "easy", deal.id)
        await uow.commit()
    taken = []
    for _ in range(4):
        async with database() as uow:
            taken.append(await uow.repo.pool_take("wrap", None, PLAYER.player_id))
            await uow.commit()
    assert taken == [deals[0].id, deals[1].id, deals[2].id, deals[0].id]
    async with database() as uow:
        assert await uow.repo.pool_take("wrap", "hard", PLAYER.player_id) is None
        assert await uow.repo.pool_counts("wrap", "easy") == (0, 3)
        await uow.repo.pool_evict("wrap", "easy", EVICTED)  # deals[0] was dealt twice
        await uow.commit()
    async with database() as uow:
        assert await uow.repo.pool_counts("wrap", "easy") == (0, 2)
        # The deal that left the pool is closed (never dealt fresh again); the others are not.
        assert await uow.repo.deal_standing(deals[0].id) == DealStanding(closed_at=EVICTED, ranked_in_play=False)
        assert await uow.repo.deal_standing(deals[1].id) == DealStanding(closed_at=None, ranked_in_play=False)
        assert await uow.repo.deal_standing("no-such-deal") is None
        assert await uow.repo.pool_take("wrap", "easy", PLAYER.player_id) == deals[1].id


async def test_two_requests_for_the_next_hole_start_one_hole(database: Database) -> None:
    both = built(database)
    snap, game = await both.rounds.create_round(PLAYER, "wrap", winnable_only=False)
    while game.state.status is Status.IN_PROGRESS:
        game = await both.games.play_move(PLAYER, game.game.id, game.state.legal_moves()[-1], f"m{game.game.version}")
    first, second = await asyncio.gather(
        both.rounds.start_next_hole(PLAYER, snap.round.id), both.rounds.start_next_hole(PLAYER, snap.round.id)
    )
    assert first[1].game.id == second[1].game.id and first[1].game.hole == 2
    final = await both.rounds.get_round(PLAYER, snap.round.id)
    assert [h.game.hole for h in final.holes] == [1, 2]


def test_migrate_makes_the_sqlite_directory(tmp_path: Path) -> None:
    """``golf migrate`` into a directory that does not exist yet makes it (it printed a long traceback)."""
    url = f"sqlite:///{tmp_path / 'new' / 'dir' / 'golf.db'}"
    upgrade(url)
    assert (tmp_path / "new" / "dir" / "golf.db").exists() and at_head(url)


async def test_a_statement_may_take_more_than_999_parameters(database: Database) -> None:
    """PostgreSQL takes up to 65,535 placeholders; the driver numbered only 999 and then failed with an unclear
    RuntimeError (a many-row insert of a table's log met it). SQLite's limit is 32,766."""
    values = list(range(1500))
    placeholders = ", ".join("?" for _ in values)
    sql = f"SELECT CASE WHEN 1499 IN ({placeholders}) THEN 1 ELSE 0 END AS found"
    async with database() as uow:
        found = await uow._tx.fetchone(sql, *values)
        missing = await uow._tx.fetchone(sql, *values[:-1], 0)
    assert found is not None and found["found"] == 1  # the last value reached the last placeholder
    assert missing is not None and missing["found"] == 0
