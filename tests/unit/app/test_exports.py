"""The export use case (``golf.app.exports``) over in-memory storage and an index of the rows ``golf.app.recording``
wrote: pages and chunks read lazily, ``max``, the second check of each record (unfinished games and matches, a
private table's match for a stranger), the query's checks, and a match record's table options."""

from __future__ import annotations

import json

import pytest

from golf.app.errors import InvalidArgument
from golf.app.exports import (
    DEFAULT_MAX,
    GAME,
    MATCH,
    Exporter,
    ExportQuery,
    GameExport,
    IndexedRecord,
    MatchExport,
    options_from_record,
    places,
    table_options_text,
)
from golf.app.identity import Caller
from golf.app.tables import TableOptions, TableStatus
from golf.app.tables.records import TableRecordError
from golf.bootstrap import Services
from tests.finished import finish_game, finish_match
from tests.unit.app.fake_index import ListIndex
from tests.unit.app.fakes import FakeStore


async def five_games(services: Services, ann: Caller) -> list[str]:
    return [(await finish_game(services, ann, f"export-unit-{n}")).game.id for n in range(5)]


async def test_an_export_reads_pages_and_chunks_as_it_goes(services: Services, store: FakeStore, ann: Caller) -> None:
    ids = await five_games(services, ann)
    index = ListIndex(store)
    exporter = Exporter(store, index, page_size=2, chunk_size=1)
    stream = exporter.export(ExportQuery.build(ann.player_id))
    first = await anext(stream)
    assert isinstance(first, GameExport) and first.game.id == ids[0]
    assert len(index.pages) == 1  # lazy: one page read for the first record
    rest = [item async for item in stream]
    assert [i.game.id for i in [first, *rest] if isinstance(i, GameExport)] == ids
    assert [(limit, got) for _, limit, got in index.pages] == [(2, 2), (2, 2), (2, 1)]
    second = rest[0].index
    assert index.pages[0][0] is None and index.pages[1][0] == (second.finished_at, second.id)  # keyset: page's last


async def test_max_ends_the_export_and_asks_no_more_than_it_needs(
    services: Services, store: FakeStore, ann: Caller
) -> None:
    ids = await five_games(services, ann)
    index = ListIndex(store)
    items = [
        i async for i in Exporter(store, index, page_size=2).export(ExportQuery.build(ann.player_id, max_records=3))
    ]
    assert [i.game.id for i in items if isinstance(i, GameExport)] == ids[:3]
    assert [limit for _, limit, _ in index.pages] == [2, 1]


async def test_a_game_record_holds_its_deal_and_whole_log(services: Services, store: FakeStore, ann: Caller) -> None:
    done = await finish_game(services, ann, "export-unit-log")
    [item] = [i async for i in Exporter(store, ListIndex(store)).export(ExportQuery.build(ann.player_id))]
    assert isinstance(item, GameExport)
    codes = [m.code for m in item.log]
    assert "U" in codes and any(c.startswith("A:") for c in codes)
    assert [m.seq for m in item.log] == list(range(1, len(codes) + 1))
    assert item.deal.seed == "export-unit-log" and item.game.score == done.game.score


async def test_unfinished_games_and_matches_are_left_out_when_loaded(
    services: Services, store: FakeStore, ann: Caller, bob: Caller
) -> None:
    # Rows the index should never list (an unfinished game's, a match still playing): the load checks again.
    deal = await services.games.create_deal(ann, "standard", {}, seed="export-unit-open")
    playing = await services.games.create_game(ann, deal.id, winnable_only=False)
    table = await services.tables.create_table(ann, "six-card", seats=2, holes=1)
    await services.tables.add_bot(ann, table.table_id, "greedy", "bot")
    started = await services.tables.start(ann, table.table_id, "go")
    assert started.view.status is TableStatus.PLAYING
    at = playing.game.created_at
    extra = [IndexedRecord(900, GAME, playing.game.id, at, at), IndexedRecord(901, MATCH, table.table_id, at, at)]
    items = [i async for i in Exporter(store, ListIndex(store, extra)).export(ExportQuery.build(bob.player_id))]
    assert items == []


async def test_a_private_match_goes_to_its_seated_players_only(
    services: Services, store: FakeStore, ann: Caller, bob: Caller
) -> None:
    over = await finish_match(services, ann, private=True)
    index = ListIndex(store)
    mine = [i async for i in Exporter(store, index).export(ExportQuery.build(ann.player_id))]
    assert [i.record.id for i in mine if isinstance(i, MatchExport)] == [over.table_id]
    theirs = [i async for i in Exporter(store, index).export(ExportQuery.build(bob.player_id))]
    assert theirs == []


async def test_a_match_record_has_every_seat_with_points_and_places(
    services: Services, store: FakeStore, ann: Caller, bob: Caller
) -> None:
    over = await finish_match(services, ann, others=(bob,), holes=2, seed=3)
    [item] = [i async for i in Exporter(store, ListIndex(store)).export(ExportQuery.build(ann.player_id))]
    assert isinstance(item, MatchExport)
    sheet = over.view.sheet
    assert [s.hole_points for s in item.seats] == [tuple(row[s] for row in sheet.holes) for s in range(3)]
    assert [s.total for s in item.seats] == list(sheet.totals)
    assert [s.place for s in item.seats] == list(places(sheet.totals))
    assert [s.player_id for s in item.seats] == [ann.player_id, bob.player_id, None]
    assert item.seats[2].bot == "greedy" and item.log[-1].seq == over.version


def test_places_share_ties() -> None:
    assert places([10, 3, 10, 7]) == (3, 1, 3, 2)
    assert places([5, 5]) == (1, 1)


def test_the_query_is_checked() -> None:
    assert ExportQuery.build("ann").max == DEFAULT_MAX
    assert ExportQuery.build("ann", player_id="me").player_id == "ann"
    assert ExportQuery.build("ann", player_id="bob").player_id == "bob"
    for bad in (-1, 100_001):
        with pytest.raises(InvalidArgument) as caught:
            ExportQuery.build("ann", max_records=bad)
        assert caught.value.field == "max"
    with pytest.raises(InvalidArgument):
        ExportQuery.build("ann", kind="round")


def test_table_options_leave_out_the_rules_and_the_join_code() -> None:
    options = TableOptions.build("four-card", {"jokers": 2}, seats=3, holes=5, join_code="SECRET7", turn_seconds=30)
    text = table_options_text(options)
    data = json.loads(text)
    assert "rules" not in data and "join_code" not in data and "SECRET7" not in text
    assert data["listed"] is False and data["holes"] == 5 and data["seats"] == 3 and data["turn_seconds"] == 30
    back = options_from_record(text, options.rules.canonical())
    assert back.rules == options.rules and back.seats == 3 and back.join_code is None and back.turn_seconds == 30
    with pytest.raises(TableRecordError):
        options_from_record(json.dumps({**data, "holes": 6}), options.rules.canonical())
    with pytest.raises(TableRecordError):
        options_from_record("[]", options.rules.canonical())
