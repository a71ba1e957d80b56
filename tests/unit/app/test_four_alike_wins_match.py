"""Four alike wins the match (``four_alike_wins_match``) through the service: the hole that shows four alike ends
the table's match, the score sheet leads with the seat that holds it whatever the points say, and the records,
the export and ``golf verify`` name that seat the winner."""

from __future__ import annotations

from typing import Any

from golf.api.record_convert import record_to_proto
from golf.api.table_convert import hole_result_to_proto, score_sheet_to_proto
from golf.app.exports import Exporter, ExportQuery
from golf.app.history import RecordKind, Result
from golf.app.identity import Caller
from golf.app.tables import Entry, MatchEnd, TableStatus, add_bot, new_table, play_bots, replay, start
from golf.app.tables.options import TableOptions
from golf.bootstrap import Services
from golf.commands.record_checks import check_record
from tests.finished import finish_match
from tests.unit.app.fake_index import ListIndex
from tests.unit.app.fakes import FakeStore

# Nine-card by value, four alike anywhere: four cards of one value among nine (a ten, a jack and two queens...)
# are common, so some hole ends the match early.
RULES: dict[str, Any] = {"four_alike_wins_match": True, "four_alike_scope": "anywhere", "pairs_by_value": True}
TABLE_SEED = "four-alike-table-2"
SERVICE_SEED = "four-alike-service-2"
MOVES_SEED = 2


def test_a_table_of_bots_ends_its_match_at_the_hole_that_shows_four_alike() -> None:
    options = TableOptions.build("nine-card", rules=RULES, seats=3, holes=9)
    table = new_table(options, TABLE_SEED)
    entries: list[Entry] = []
    for kind in ("greedy", "random", "greedy"):
        table, made = add_bot(table, kind)
        entries += made
    table, made = start(table)
    entries += made
    table, made = play_bots(table)
    entries += made
    assert table.status is TableStatus.OVER and table.end is MatchEnd.COMPLETED
    last = table.results[-1]
    assert last.wins_match, "the match ended because a seat holds four alike"
    assert all(not r.wins_match for r in table.results[:-1])
    assert len(table.sheet.holes) < options.holes, "the match ended before its last hole"
    # Of the seats holding four alike, those with the lowest total win (the engine's tests cover a holder that is
    # behind on points: ``test_house_scoring``).
    low = min(table.sheet.totals[s] for s in last.wins_match)
    winners = tuple(s for s in last.wins_match if table.sheet.totals[s] == low)
    assert table.sheet.won_by == winners == table.sheet.leaders
    assert all(table.sheet.places[s] == 1 for s in winners)
    assert table.hole is None
    assert replay(options, TABLE_SEED, entries) == table
    wire = score_sheet_to_proto(table.sheet)  # clients see who won outright, and why
    assert list(wire.won_by) == list(winners) == list(wire.leaders)
    assert list(hole_result_to_proto(last, len(table.results)).wins_match) == list(last.wins_match)


async def test_the_records_name_the_seat_with_four_alike_the_winner(
    services: Services, store: FakeStore, ann: Caller, bob: Caller
) -> None:
    services.tables.seeds = lambda: SERVICE_SEED
    over = await finish_match(services, ann, (bob,), holes=9, preset="nine-card", seed=MOVES_SEED, rules=RULES)
    snap = await services.tables.get(ann, over.table_id)
    sheet = snap.view.sheet
    assert snap.view.status is TableStatus.OVER and len(sheet.holes) < 9 and sheet.won_by
    (winner,) = sheet.won_by
    assert sheet.leaders == (winner,) and sheet.places[winner] == 1
    # The records follow the sheet's places, whatever the points say.
    records = {r.player_id: r for r in store.tables.records if r.kind is RecordKind.MATCH}
    for seat, player in enumerate((ann, bob)):
        record = records[player.player_id]
        assert record.place == sheet.places[seat] and record.score == sheet.totals[seat]
        assert record.result is (Result.WON if seat == winner else Result.LOST)
    items = [i async for i in Exporter(store, ListIndex(store)).export(ExportQuery.build(ann.player_id))]
    (match,) = (record_to_proto(i) for i in items)
    assert [s.place for s in match.seats] == list(sheet.places)
    assert f"holes={len(sheet.holes)} seats=3" in check_record(match)
