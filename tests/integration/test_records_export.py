"""Exports on SQLite and PostgreSQL: the SQL index (``golf.adapters.db.record_index``) under the use case, with the
records rows the finishing moves wrote (or, where a test needs rows of its own, inserted here).

Covered: finished games and matches round-trip through ``golf verify``'s checks; the filters (since, until, player,
preset, family, max); keyset pages over more rows than a page; who may export what (a private table's match, a game
whose deal is in play, a private portal's players); nothing of an unfinished game or match."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest

from golf.adapters.db.record_index import SqlRecordIndex
from golf.adapters.db.repository import Database
from golf.adapters.proto_json import to_json
from golf.api.record_convert import record_to_proto
from golf.app.dealing import DealSettings
from golf.app.exports import GAME, MATCH, Exporter, ExportQuery, IndexedRecord
from golf.app.identity import Caller, PlayerRecord
from golf.app.solving import InlineSolver
from golf.bootstrap import Services, build_services
from golf.commands.record_checks import check_record
from golf.v1 import record_service_pb2 as rpb
from tests.finished import Clock, NoLimits, Tokens, finish_game, finish_match

ANN = Caller(str(uuid.UUID(int=1)))
BOB = Caller(str(uuid.UUID(int=2)))
CAT = Caller(str(uuid.UUID(int=3)))
PORTAL = "https://portal.example"


@dataclass
class World:
    db: Database
    services: Services
    clock: Clock


@pytest.fixture
async def world(migrated_url: str) -> AsyncIterator[World]:
    db = Database(migrated_url, pool_size=4)
    clock = Clock()
    services = build_services(db, clock, InlineSolver(), DealSettings(pool_size=0), Tokens(), NoLimits())
    for caller, name in ((ANN, "Ann"), (BOB, "Bob"), (CAT, "Cat")):
        async with db() as uow:
            await uow.players.add_player(PlayerRecord(caller.player_id, name, clock.now))
            await uow.commit()
    yield World(db, services, clock)
    await db.dispose()


class CountingIndex(SqlRecordIndex):
    """The SQL index, with the pages it gave kept: (keyset, limit, rows)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db)
        self.pages: list[tuple[tuple[datetime, int] | None, int, int]] = []

    async def page(self, query: ExportQuery, after: tuple[datetime, int] | None, limit: int) -> Sequence[IndexedRecord]:
        rows = await super().page(query, after, limit)
        self.pages.append((after, limit, len(rows)))
        return rows


async def export(
    world: World, caller: Caller, private_issuers: tuple[str, ...] = (), **filters: object
) -> list[rpb.Record]:
    query = ExportQuery.build(caller.player_id, caller.issuer, **filters)  # type: ignore[arg-type]
    exporter = Exporter(world.db, SqlRecordIndex(world.db), private_issuers, clock=world.clock)
    return [record_to_proto(item) async for item in exporter.export(query)]


async def close_deal(world: World, game_id: str, ago: timedelta = timedelta(days=1)) -> None:
    """Close the deal of ``game_id`` ``ago`` (as the day of a daily deal ends, or a pool deal leaves the pool):
    once no ranked game on it is in progress, its games are anyone's to export (``golf.app.reveals``)."""
    async with world.db() as uow:
        await uow.tx.execute(
            "UPDATE deals SET closed_at = ? WHERE id = (SELECT deal_id FROM games WHERE id = ?)",
            world.clock.now - ago,
            game_id,
        )
        await uow.commit()


async def ensure_rows(
    db: Database, kind: str, record_id: str, players: Sequence[str], finished: datetime, preset: str
) -> None:
    """The records rows of a finished game or match, written here when the finishing move wrote none (so these
    tests do not depend on the recording code): one per player, the first the lead."""
    async with db() as uow:
        tx = uow.tx
        found = await tx.fetchone("SELECT COUNT(*) AS n FROM records WHERE kind = ? AND record_id = ?", kind, record_id)
        if found is not None and found["n"]:
            return
        for n, player in enumerate(players):
            await add_row(db, kind, record_id, player, finished, lead=n == 0, preset=preset, tx=tx)
        await uow.commit()


async def add_row(
    db: Database,
    kind: str,
    record_id: str,
    player_id: str,
    finished: datetime,
    lead: bool = True,
    preset: str = "standard",
    issuer: str = "golf",
    tx: object = None,
) -> None:
    """One row of ``records`` (its own transaction unless ``tx`` is given)."""
    sql = (
        "INSERT INTO records (player_id, issuer, kind, record_id, lead, preset, result, score, holes, moves, hints,"
        " undos, duration_ms, started_at, finished_at, rated)"
        " VALUES (?, ?, ?, ?, ?, ?, 'lost', 0, 1, 0, 0, 0, 0, ?, ?, ?)"
    )
    args = (player_id, issuer, kind, record_id, lead, preset, finished - timedelta(minutes=5), finished, True)
    if tx is not None:
        await tx.execute(sql, *args)  # type: ignore[attr-defined]
        return
    async with db() as uow:
        await uow.tx.execute(sql, *args)
        await uow.commit()


async def finished_game(
    world: World, caller: Caller, seed: str, preset: str = "standard", *, out_of_play: bool = True
) -> str:
    """A finished game of ``caller``'s, its deal closed a day ago unless ``out_of_play`` is false (a deal made
    from a seed may be started by its id for good: its games would be their players' only)."""
    snap = await finish_game(world.services, caller, seed, preset)
    assert snap.game.finished_at is not None
    await ensure_rows(world.db, GAME, snap.game.id, [caller.player_id], snap.game.finished_at, snap.deal.preset)
    if out_of_play:
        await close_deal(world, snap.game.id)
    return snap.game.id


async def finished_match(world: World, caller: Caller, others: tuple[Caller, ...] = (), **kw: object) -> str:
    snap = await finish_match(world.services, caller, others, **kw)  # type: ignore[arg-type]
    players = [p.player_id for p in (caller, *others)]
    await ensure_rows(world.db, MATCH, snap.table_id, players, world.clock.now, snap.view.preset)
    return snap.table_id


async def test_exported_games_and_matches_check_out(world: World) -> None:
    game = await finished_game(world, ANN, "export-int-1")
    match = await finished_match(world, ANN, (BOB,), holes=2)
    records = await export(world, CAT)
    assert [(r.kind, r.id) for r in records] == [
        (rpb.RECORD_KIND_SOLITAIRE_GAME, game),
        (rpb.RECORD_KIND_CARD_GOLF_MATCH, match),
    ]
    for record in records:
        check_record(record)
    played = records[1]
    assert [s.display_name for s in played.seats] == ["Ann", "Bob", ""] and played.seats[2].bot == "greedy"
    assert records[0].player_id == ANN.player_id and records[0].seed == "export-int-1"
    assert records[0].finish_time.ToDatetime() <= played.finish_time.ToDatetime()


async def test_the_filters(world: World) -> None:
    start = world.clock.now
    ann_game = await finished_game(world, ANN, "filter-1")
    world.clock.advance(hours=1)
    bob_game = await finished_game(world, BOB, "filter-2", preset="wrap")
    world.clock.advance(hours=1)
    match = await finished_match(world, BOB, (CAT,))
    world.clock.advance(hours=1)
    later = world.clock.now

    async def ids(**filters: object) -> list[str]:
        return [r.id for r in await export(world, ANN, **filters)]

    assert await ids() == [ann_game, bob_game, match]
    assert await ids(since=start + timedelta(minutes=30)) == [bob_game, match]
    assert await ids(until=start + timedelta(minutes=30)) == [ann_game]
    assert await ids(since=later) == []
    assert await ids(player_id="me") == [ann_game]
    assert await ids(player_id=CAT.player_id) == [match]  # a match counts for every player seated
    assert await ids(player_id=BOB.player_id) == [bob_game, match]
    assert await ids(preset="wrap") == [bob_game]
    assert await ids(kind=GAME) == [ann_game, bob_game]
    assert await ids(kind=MATCH) == [match]
    assert await ids(max_records=2) == [ann_game, bob_game]
    assert await ids(kind=GAME, player_id=CAT.player_id) == []


async def test_pages_follow_the_keyset_over_more_rows_than_a_page(world: World) -> None:
    # One finished game listed 450 times (lead rows of other players, a second apart): three pages of 200.
    game = await finished_game(world, ANN, "pages")
    base = world.clock.now + timedelta(minutes=1)
    for n in range(450):
        await add_row(world.db, GAME, game, str(uuid.UUID(int=1000 + n)), base + timedelta(seconds=n // 2))
    index = CountingIndex(world.db)
    exporter = Exporter(world.db, index, clock=world.clock)
    stream = exporter.export(ExportQuery.build(CAT.player_id))
    first = await anext(stream)
    assert first.index.record_id == game and len(index.pages) == 1  # one page read for the first record
    rest = [item async for item in stream]
    assert len(rest) == 450
    keys = [(i.index.finished_at, i.index.id) for i in [first, *rest]]
    assert keys == sorted(keys) and len(set(keys)) == 451
    assert [(limit, got) for _, limit, got in index.pages] == [(200, 200), (200, 200), (200, 51)]
    limited = Exporter(world.db, CountingIndex(world.db), clock=world.clock)
    assert len([i async for i in limited.export(ExportQuery.build(CAT.player_id, max_records=250))]) == 250


async def test_a_private_match_goes_to_its_seated_players_only(world: World) -> None:
    match = await finished_match(world, ANN, (BOB,), private=True)
    assert [r.id for r in await export(world, ANN)] == [match]
    assert [r.id for r in await export(world, BOB)] == [match]
    assert await export(world, CAT) == []
    records = await export(world, BOB)
    assert "join_code" not in records[0].table_options and '"listed":false' in records[0].table_options


async def test_a_game_is_held_back_while_its_deal_is_in_play(world: World) -> None:
    game = await finished_game(world, ANN, "shared-deal", out_of_play=False)
    assert [r.id for r in await export(world, ANN)] == [game]  # its player has it at once
    assert await export(world, CAT) == []  # its deal may still be dealt to Cat
    snap = await world.services.games.get_game(ANN, game)
    other = await world.services.games.create_game(BOB, snap.deal.id, winnable_only=False)
    assert not other.finished and not other.game.practice
    await close_deal(world, game, ago=timedelta(seconds=29))  # closed, but within the grace
    assert await export(world, CAT) == []
    await close_deal(world, game)
    assert await export(world, CAT) == []  # closed, but its seed would show Bob's stock
    text = b"".join(to_json(r) for r in await export(world, BOB))
    assert b"shared-deal" not in text
    while not other.finished:
        other = await world.services.games.play_move(BOB, other.game.id, other.state.legal_moves()[0], uuid.uuid4().hex)
    await world.services.games.get_game(BOB, other.game.id)
    assert other.game.finished_at is not None
    await ensure_rows(world.db, GAME, other.game.id, [BOB.player_id], other.game.finished_at, "standard")
    assert [r.id for r in await export(world, CAT)] == [game, other.game.id]


async def test_nothing_of_an_unfinished_game_or_match(world: World) -> None:
    # Rows that should never exist (a game or a match still being played) are not followed into a record.
    deal = await world.services.games.create_deal(ANN, "standard", {}, seed="still-playing")
    playing = await world.services.games.create_game(ANN, deal.id, winnable_only=False)
    table = await world.services.tables.create_table(ANN, "six-card", seats=2, holes=1)
    await world.services.tables.add_bot(ANN, table.table_id, "greedy", "bot")
    await world.services.tables.start(ANN, table.table_id, "go")
    await add_row(world.db, GAME, playing.game.id, ANN.player_id, world.clock.now)
    await add_row(world.db, MATCH, table.table_id, ANN.player_id, world.clock.now, preset="six-card")
    done = await finished_game(world, BOB, "finished-beside")
    for caller in (ANN, BOB, CAT):
        records = await export(world, caller)
        assert [r.id for r in records] == [done]
        text = b"".join(to_json(r) for r in records)
        assert b"still-playing" not in text and table.table_id.encode() not in text
    async with world.db() as uow:
        row = await uow.tx.fetchone("SELECT seed FROM card_golf_tables WHERE id = ?", table.table_id)
    assert row is not None and row["seed"].encode() not in text


async def test_private_portals_players(world: World) -> None:
    dan = Caller(str(uuid.UUID(int=4)), PORTAL)
    eve = Caller(str(uuid.UUID(int=5)), PORTAL)
    async with world.db() as uow:
        await uow.players.add_player(PlayerRecord(dan.player_id, "Dan", world.clock.now, PORTAL, "dan"))
        await uow.commit()
    game = await finished_game(world, dan, "portal-game")
    async with world.db() as uow:  # the portal's players' rows carry their issuer (written here if need be)
        await uow.tx.execute("UPDATE records SET issuer = ? WHERE record_id = ?", PORTAL, game)
        await uow.commit()
    hidden = (PORTAL,)
    assert await export(world, CAT, hidden) == []
    assert [r.id for r in await export(world, eve, hidden)] == [game]  # the same portal
    assert [r.id for r in await export(world, dan, hidden)] == [game]  # their own
    assert [r.id for r in await export(world, CAT)] == [game]  # no private portals configured
