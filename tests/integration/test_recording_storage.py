"""What finishing writes, on SQLite and PostgreSQL: the move that finishes a game and the game's records commit
together or not at all, and records land in history in the order they were committed."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from golf.adapters.db.drivers import UniqueViolation
from golf.adapters.db.repository import Database
from golf.app.history import HistoryFilter, PlayedRecord, RecordKind, Result
from golf.app.identity import Caller, PlayerRecord
from golf.app.record_queries import RecordQueries
from golf.app.records import GameSnapshot
from golf.engine.solitaire.moves import Move, PlayColumn
from tests.finished import Clock, finish_game
from tests.integration.storage_services import built

ANN = Caller("00000000-0000-0000-0000-00000000000a")


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=4)
    async with db() as uow:
        await uow.players.add_player(PlayerRecord(ANN.player_id, "Ann", Clock()(), "golf"))
        await uow.commit()
    yield db
    await db.dispose()


def next_move(snap: GameSnapshot) -> Move:
    moves = snap.state.legal_moves()
    return ([m for m in moves if isinstance(m, PlayColumn)] or moves)[0]


async def test_the_finishing_move_is_stored_with_its_records_or_not_at_all(database: Database) -> None:
    games = built(database).games
    deal = await games.create_deal(ANN, "wrap", {}, seed="atomic-finish")
    snap = await games.create_game(ANN, deal.id, winnable_only=False)
    # Find the move that finishes the game on a copy, without storing it.
    n = 0
    while True:
        after = snap.state.apply(next_move(snap))
        if after.status.value != "in_progress":
            break
        snap = await games.play_move(ANN, snap.game.id, next_move(snap), f"k{n}")
        n += 1
    # A record of this game already stored (as if written twice): writing the records fails, and so must the move.
    at = snap.game.created_at
    twin = PlayedRecord(ANN.player_id, "golf", RecordKind.GAME, snap.game.id, True, "wrap", Result.LOST, 1, 1, 0, 0,
                        0, 0, at, at, True)  # fmt: skip
    async with database() as uow:
        await uow.records.add_records([twin])
        await uow.commit()
    with pytest.raises(UniqueViolation):
        await games.play_move(ANN, snap.game.id, next_move(snap), "finishing")
    fresh = await built(database).games.get_game(ANN, snap.game.id)
    assert not fresh.finished and fresh.game.version == snap.game.version, "the move was stored without its records"


async def test_a_players_records_are_numbered_in_the_order_their_games_finished(database: Database) -> None:
    services = built(database)
    finished = [await finish_game(services, ANN, f"order-{n}", preset="wrap") for n in range(3)]
    rows, _ = await services_queries(database).history(ANN, "me", HistoryFilter(), 0, "")
    assert [r.record_id for r in rows] == [s.game.id for s in reversed(finished)]
    assert all(r.kind is RecordKind.GAME and r.issuer == "golf" for r in rows)
    assert [r.id for r in rows] == sorted((r.id for r in rows), reverse=True)


def services_queries(database: Database) -> RecordQueries:
    return RecordQueries(database, Clock())
