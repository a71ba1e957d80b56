"""The record queries on SQLite and PostgreSQL: the boards' documented order and tie-breaks, ranks deep in a board,
keyset pages over equal scores, private portals and the portal scope, minimum holes, card Golf boards per preset,
deal statistics' order, and histories' filters and visibility (private portals, private tables' matches)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from golf.adapters.db.repository import Database
from golf.app.boards import (
    BoardEntry,
    deal_board,
    match_entries,
    points_board,
    rating_board,
    rating_entry,
    score_entry,
)
from golf.app.errors import InvalidArgument, NotFound
from golf.app.history import Family, HistoryFilter, PlayedRecord, RecordKind, Result
from golf.app.identity import Caller, PlayerRecord
from golf.app.record_queries import BoardKind, BoardQuery, RecordQueries
from golf.app.records import DealRecord
from golf.app.tables.options import TableOptions
from golf.app.tables.records import TableRecord
from golf.engine.cards import Card
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.state import Layout

T0 = datetime(2026, 11, 1, tzinfo=UTC)
PRIVATE = "https://private.example"
PUBLIC = "https://public.example"
DEAL = "deal-1"


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=4)
    yield db
    await db.dispose()


def player_id(n: int) -> str:
    return f"p{n:03d}"


def deal(deal_id: str) -> DealRecord:
    """A deal row for the statistics to name (its layout is never read here)."""
    return DealRecord(
        deal_id, "standard", 1, SolitaireRules(), "s", "golf-shuffle-v1", "c", Layout((), Card.parse("AS"), ()), T0
    )


async def seed_players(db: Database, issuers: list[str]) -> None:
    async with db() as uow:
        for n, issuer in enumerate(issuers):
            await uow.players.add_player(PlayerRecord(player_id(n), f"Player {n}", T0, issuer, f"sub-{n}"))
        await uow.deals.add_deal(deal(DEAL))
        await uow.commit()


async def put(db: Database, entries: list[BoardEntry]) -> None:
    async with db() as uow:
        await uow.records.put_board_entries(entries)
        await uow.commit()


def deal_entry(n: int, issuer: str, score: int, ms: int, assists: int, at: datetime) -> BoardEntry:
    return score_entry(deal_board(DEAL), player_id(n), issuer, score, ms, assists, at, f"g{n}")


async def test_boards_order_by_score_time_assists_finish_and_id_and_page_without_gaps(database: Database) -> None:
    rng = random.Random(3)
    await seed_players(database, ["golf"] * 40)
    # Few distinct values, so every tie-break is exercised.
    entries = [
        deal_entry(n, "golf", rng.choice([-2, 0, 3]), rng.choice([1000, 2000]), rng.choice([0, 1]), T0)
        for n in range(40)
    ]
    await put(database, entries)
    expected = [e.player_id for e in sorted(entries, key=lambda e: e.key)]
    queries = RecordQueries(database, lambda: T0)
    got: list[tuple[int, str]] = []
    token = ""
    while True:
        page = await queries.leaderboard(
            Caller(player_id(17)), BoardQuery(BoardKind.DEAL, DEAL, page_size=7, page_token=token)
        )
        got += [(r.rank, r.entry.player_id) for r in page.entries]
        assert page.caller is not None and page.caller.entry.player_id == player_id(17)
        assert page.caller.rank == expected.index(player_id(17)) + 1
        token = page.next_page_token
        if not token:
            break
    assert got == [(i + 1, p) for i, p in enumerate(expected)]
    names = {r.entry.player_id: r.display_name for r in page.entries}
    assert names == {p: f"Player {int(p[1:])}" for p in names}


async def test_private_portals_are_off_public_boards_and_have_a_portal_scope(database: Database) -> None:
    issuers = ["golf", PRIVATE, PUBLIC, PRIVATE]
    await seed_players(database, issuers)
    await put(database, [deal_entry(n, issuer, n, 1000, 0, T0) for n, issuer in enumerate(issuers)])
    queries = RecordQueries(database, lambda: T0, frozenset({PRIVATE}))
    public = await queries.leaderboard(Caller(player_id(0)), BoardQuery(BoardKind.DEAL, DEAL))
    assert [(r.rank, r.entry.player_id) for r in public.entries] == [(1, player_id(0)), (2, player_id(2))]
    # A private portal's player is not on the public board, so has no rank there...
    hidden = await queries.leaderboard(Caller(player_id(3), PRIVATE), BoardQuery(BoardKind.DEAL, DEAL))
    assert hidden.caller is None
    # ... and sees their own portal's board with the portal scope.
    portal = await queries.leaderboard(
        Caller(player_id(3), PRIVATE), BoardQuery(BoardKind.DEAL, DEAL, portal_only=True)
    )
    assert [(r.rank, r.entry.player_id) for r in portal.entries] == [(1, player_id(1)), (2, player_id(3))]
    assert portal.caller is not None and portal.caller.rank == 2
    # Histories of private players: their portal only.
    async with database() as uow:
        await uow.records.add_records([played(player_id(1), PRIVATE, "g1", T0)])
        await uow.commit()
    with pytest.raises(NotFound):
        await queries.history(Caller(player_id(0)), player_id(1), HistoryFilter(), 0, "")
    rows, _ = await queries.history(Caller(player_id(3), PRIVATE), player_id(1), HistoryFilter(), 0, "")
    assert [r.record_id for r in rows] == ["g1"]


async def test_points_per_hole_needs_the_minimum_of_holes(database: Database) -> None:
    await seed_players(database, ["golf"] * 3)
    board = points_board("*")
    entries = [
        BoardEntry(board, player_id(n), "golf", per_hole, -holes, 0, T0, qualifier=holes, holes=holes)
        for n, (per_hole, holes) in enumerate([(1000, 4), (3000, 9), (2000, 18)])
    ]
    await put(database, entries)
    queries = RecordQueries(database, lambda: T0)
    page = await queries.leaderboard(Caller(player_id(0)), BoardQuery(BoardKind.POINTS_PER_HOLE))
    assert [r.entry.player_id for r in page.entries] == [player_id(2), player_id(1)]
    assert page.caller is None, "four holes do not qualify for the default minimum of nine"
    page = await queries.leaderboard(Caller(player_id(0)), BoardQuery(BoardKind.POINTS_PER_HOLE, min_holes=4))
    assert page.caller is not None and page.caller.rank == 1


def played(player: str, issuer: str, record_id: str, finished: datetime, **fields: object) -> PlayedRecord:
    values: dict[str, object] = {
        "player_id": player,
        "issuer": issuer,
        "kind": RecordKind.GAME,
        "record_id": record_id,
        "lead": True,
        "preset": "standard",
        "result": Result.LOST,
        "score": 3,
        "holes": 1,
        "moves": 20,
        "hints": 0,
        "undos": 0,
        "duration_ms": 60_000,
        "started_at": finished - timedelta(minutes=1),
        "finished_at": finished,
        "rated": True,
        "deal_id": DEAL,
    }
    values.update(fields)
    return PlayedRecord(**values)  # type: ignore[arg-type]


async def test_history_filters_newest_first_and_refuses_foreign_tokens(database: Database) -> None:
    await seed_players(database, ["golf"] * 2)
    me = player_id(0)
    rows = [
        played(me, "golf", "g1", T0, result=Result.WON),
        played(me, "golf", "r1", T0 + timedelta(days=1), kind=RecordKind.ROUND, holes=9, par=45),
        played(me, "golf", "m1", T0 + timedelta(days=2), kind=RecordKind.MATCH, preset="six-card", place=1),
        played(me, "golf", "g2", T0 + timedelta(days=3), preset="wrap"),
    ]
    async with database() as uow:
        await uow.records.add_records(rows)
        await uow.commit()
    queries = RecordQueries(database, lambda: T0)

    async def ids(query: HistoryFilter) -> list[str]:
        got, _ = await queries.history(Caller(me), "me", query, 0, "")
        return [r.record_id for r in got]

    assert await ids(HistoryFilter()) == ["g2", "m1", "r1", "g1"]
    assert await ids(HistoryFilter(family=Family.SOLITAIRE)) == ["g2", "r1", "g1"]
    assert await ids(HistoryFilter(family=Family.CARD_GOLF)) == ["m1"]
    assert await ids(HistoryFilter(preset="wrap")) == ["g2"]
    assert await ids(HistoryFilter(result=Result.WON)) == ["g1"]
    window = HistoryFilter(finished_after=T0 + timedelta(days=1), finished_before=T0 + timedelta(days=3))
    assert await ids(window) == ["m1", "r1"]
    first, token = await queries.history(Caller(me), "me", HistoryFilter(), 3, "")
    assert token and [r.record_id for r in first] == ["g2", "m1", "r1"]
    rest, end = await queries.history(Caller(me), me, HistoryFilter(), 3, token)
    assert [r.record_id for r in rest] == ["g1"] and end == ""
    with pytest.raises(InvalidArgument):
        await queries.history(Caller(player_id(1)), "me", HistoryFilter(), 3, token)


async def test_deal_stats_list_the_hardest_and_easiest_with_enough_plays(database: Database) -> None:
    await seed_players(database, ["golf"])
    outcomes = {"d-hard": (10, 1), "d-easy": (10, 9), "d-mid": (12, 6), "d-few": (2, 0)}
    async with database() as uow:
        for deal_id, (plays, wins) in outcomes.items():
            await uow.deals.add_deal(deal(deal_id))
            for n in range(plays):
                await uow.records.add_deal_result(deal_id, "standard", n < wins, 5, 1000)
        await uow.commit()
    queries = RecordQueries(database, lambda: T0)
    hardest, _ = await queries.list_deal_stats("standard", True, 0, 0, "")
    assert [r.stats.deal_id for r in hardest] == ["d-hard", "d-mid", "d-easy"], "two plays are fewer than ten"
    easiest, token = await queries.list_deal_stats("standard", False, 2, 2, "")
    assert [r.stats.deal_id for r in easiest] == ["d-easy", "d-mid"] and token
    rest, end = await queries.list_deal_stats("standard", False, 2, 2, token)
    assert [r.stats.deal_id for r in rest] == ["d-hard", "d-few"] and end == ""
    report = await queries.deal_stats("d-mid")
    assert (report.stats.plays, report.stats.wins, report.stats.score_sum) == (12, 6, 60)


async def test_card_golf_boards_are_per_preset_and_refuse_a_preset_that_is_none(database: Database) -> None:
    """Ann played six-card only: she is on its boards and on those of every preset, on no other preset's, and a
    made-up preset is refused rather than answered with an empty board."""
    await seed_players(database, ["golf"])
    ann = player_id(0)
    entries: list[BoardEntry] = []
    for suffix in ("six-card", "*"):
        wins, points = match_entries(None, None, suffix, ann, "golf", True, 9, 18, T0)
        entries += [wins, points, rating_entry(None, ann, "golf", 27.0, 6.0, T0, rating_board(suffix), wins)]
    await put(database, entries)
    queries = RecordQueries(database, lambda: T0)
    for kind in (BoardKind.MATCH_WINS, BoardKind.POINTS_PER_HOLE, BoardKind.RATING):
        for preset in ("", "six-card"):
            page = await queries.leaderboard(Caller(ann), BoardQuery(kind, preset=preset))
            assert [r.entry.player_id for r in page.entries] == [ann], (kind, preset)
            shown = page.entries[0].entry
            assert (shown.matches, shown.wins, shown.holes, shown.points) == (1, 1, 9, 18), (kind, preset)
        other = await queries.leaderboard(Caller(ann), BoardQuery(kind, preset="four-card"))
        assert not other.entries and other.caller is None, kind
        with pytest.raises(InvalidArgument) as refused:
            await queries.leaderboard(Caller(ann), BoardQuery(kind, preset="seven-card"))
        assert refused.value.field == "preset"


async def test_solitaire_boards_and_deal_lists_refuse_a_preset_that_is_none(database: Database) -> None:
    """A made-up solitaire preset is refused, not answered with an empty board; ``custom`` names rounds and deals
    under changed rules (there is no daily deal of it)."""
    queries = RecordQueries(database, lambda: T0)
    for query in (
        BoardQuery(BoardKind.DAILY_DEAL, preset="standrad"),
        BoardQuery(BoardKind.DAILY_DEAL, preset="custom"),
        BoardQuery(BoardKind.ROUNDS, preset="six-card"),
    ):
        with pytest.raises(InvalidArgument) as refused:
            await queries.leaderboard(Caller(player_id(0)), query)
        assert refused.value.field == "preset", query
    with pytest.raises(InvalidArgument) as refused:
        await queries.list_deal_stats("standrad", True, 0, 0, "")
    assert refused.value.field == "preset"
    assert not (await queries.leaderboard(Caller(player_id(0)), BoardQuery(BoardKind.ROUNDS, preset="custom"))).entries
    assert (await queries.list_deal_stats("custom", True, 0, 0, "")) == ([], "")


async def test_a_private_tables_match_is_in_a_history_only_for_its_players_and_its_creator(
    database: Database,
) -> None:
    """Ann and Bob sat at Cid's private table; Dee did not. Ann's history shows the match to Ann, Bob and Cid (who
    may see the table), and not to Dee (to whom the table does not exist): her page holds her other records,
    without a gap."""
    await seed_players(database, ["golf"] * 4)
    ann, bob, cid, dee = (player_id(n) for n in range(4))
    tables = [
        TableRecord("t-private", TableOptions.build("six-card", seats=2, join_code="SECRET1"), "s", cid, T0),
        TableRecord("t-listed", TableOptions.build("six-card", seats=2), "s", cid, T0),
    ]
    match = {"kind": RecordKind.MATCH, "preset": "six-card", "deal_id": None, "place": 1, "players": 2}
    rows = [
        played(ann, "golf", "g1", T0),
        played(ann, "golf", "t-private", T0 + timedelta(hours=1), **match),
        played(bob, "golf", "t-private", T0 + timedelta(hours=1), lead=False, **match),
        played(ann, "golf", "t-listed", T0 + timedelta(hours=2), **match),
        played(ann, "golf", "g2", T0 + timedelta(hours=3)),
    ]
    async with database() as uow:
        for table in tables:
            await uow.tables.add_table(table)
        await uow.records.add_records(rows)
        await uow.commit()
    queries = RecordQueries(database, lambda: T0)

    async def seen_by(viewer: str, page_size: int = 0) -> list[str]:
        got: list[str] = []
        token = ""
        while True:
            page, token = await queries.history(Caller(viewer), ann, HistoryFilter(), page_size, token)
            got += [r.record_id for r in page]
            if not token:
                return got

    everything = ["g2", "t-listed", "t-private", "g1"]
    for viewer in (ann, bob, cid):
        assert await seen_by(viewer) == everything, viewer
    assert await seen_by(dee) == ["g2", "t-listed", "g1"]
    assert await seen_by(dee, page_size=1) == ["g2", "t-listed", "g1"], "pages skip the match, not a record"
    cards, _ = await queries.history(Caller(dee), ann, HistoryFilter(family=Family.CARD_GOLF), 0, "")
    assert [r.record_id for r in cards] == ["t-listed"]
