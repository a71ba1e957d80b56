"""What a finished game, round or match writes (``golf.app.recording``): history rows, best entries on the boards
by period, deal statistics, match results with ties and resignations, and ratings."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from golf.app.boards import (
    RATING_BOARD,
    Period,
    deal_board,
    points_board,
    rating_board,
    rounds_board,
    wins_board,
)
from golf.app.history import RecordKind, Result
from golf.app.identity import LEGACY_OWNER
from golf.app.recording import RecordKeeper, game_moves
from golf.app.records import RoundRecord
from golf.app.tables.options import TableOptions
from golf.app.tables.state import Seat, Table
from golf.app.tables.status import MatchEnd, TableStatus
from golf.engine.cardgolf.match import ScoreSheet
from golf.engine.solitaire.rules import SolitaireRules
from tests.unit.app.fakes import FakeStore
from tests.unit.app.recording_helpers import ANN, BOB, MONDAY, finish, game, store_with_players


def test_game_moves_count_the_moves_in_effect() -> None:
    assert game_moves(["3:AH", "U", "T:5C", "A:1:2H+2:3H"]) == 3
    assert game_moves([]) == 0


async def test_a_scored_game_writes_its_record_its_deal_entry_and_its_stats() -> None:
    store = store_with_players()
    await finish(store, game("g1", -4, MONDAY))
    await finish(store, game("g2", 7, MONDAY, deal_id="deal-g1", practice=True))
    t = store.tables
    first, practice = t.records
    assert (first.kind, first.record_id, first.result, first.score, first.rated) == (
        RecordKind.GAME,
        "g1",
        Result.WON,
        -4,
        True,
    )
    assert (first.moves, first.hints, first.undos, first.duration_ms, first.issuer) == (3, 2, 1, 90_000, "golf")
    assert practice.result is Result.LOST and not practice.rated
    # Only the scored game is on the deal's board; both count in the deal's statistics.
    entry = t.board_entries[(deal_board("deal-g1"), ANN)]
    assert (entry.score, entry.duration_ms, entry.assists, entry.record_id) == (-4, 90_000, 3, "g1")
    stats = t.deal_stats["deal-g1"]
    assert (stats.plays, stats.wins, stats.score_sum, stats.duration_ms_sum) == (2, 1, 3, 180_000)


async def test_games_of_legacy_owners_write_nothing() -> None:
    store = store_with_players()
    await finish(store, game("g1", 3, MONDAY, owner_id=LEGACY_OWNER))
    assert not store.tables.records and not store.tables.board_entries and not store.tables.deal_stats


async def play_round(store: FakeStore, round_id: str, scores: list[int], finished: datetime) -> None:
    holes = len(scores)
    store.tables.rounds[round_id] = RoundRecord(
        round_id, "standard", SolitaireRules(), holes, 5 * holes, True, None, finished - timedelta(hours=1), ANN
    )
    for hole, score in enumerate(scores, 1):
        await finish(store, game(f"{round_id}-{hole}", score, finished, round_id=round_id, hole=hole))


async def test_a_round_is_recorded_at_its_last_hole_and_boards_keep_each_players_best_by_period() -> None:
    store = store_with_players()
    await play_round(store, "r1", [5] * 8 + [4], MONDAY)  # 44: par 45 or better wins
    rounds = [r for r in store.tables.records if r.kind is RecordKind.ROUND]
    assert [(r.record_id, r.score, r.par, r.result, r.holes) for r in rounds] == [("r1", 44, 45, Result.WON, 9)]
    assert rounds[0].duration_ms == 3_600_000 and rounds[0].undos == 9 and rounds[0].hints == 18

    def held(period: Period, at: datetime) -> tuple[int, str] | None:
        entry = store.tables.board_entries.get((rounds_board(9, "standard", period, at), ANN))
        return None if entry is None else (entry.score, entry.record_id or "")

    await play_round(store, "r2", [6] * 9, MONDAY + timedelta(hours=2))  # 54: worse, and lost
    assert [r.result for r in store.tables.records if r.kind is RecordKind.ROUND] == [Result.WON, Result.LOST]
    assert held(Period.ALL_TIME, MONDAY) == held(Period.WEEK, MONDAY) == (44, "r1")
    next_week = MONDAY + timedelta(days=7)
    await play_round(store, "r3", [6] * 9, next_week)
    assert held(Period.WEEK, next_week) == (54, "r3"), "a new week starts a new board"
    assert held(Period.WEEK, MONDAY) == (44, "r1") and held(Period.ALL_TIME, next_week) == (44, "r1")
    assert held(Period.MONTH, next_week) == (54, "r3"), "December is a new month"
    await play_round(store, "r4", [-1] * 9, next_week)
    assert held(Period.ALL_TIME, MONDAY) == (-9, "r4")


def table_after(
    totals: list[int], seats: list[Seat], end: MatchEnd = MatchEnd.COMPLETED, preset: str = "six-card"
) -> tuple[Table, Table]:
    options = TableOptions.build(preset, seats=len(seats), holes=2)
    rows = ((t - t // 2 for t in totals), (t // 2 for t in totals))
    sheet = ScoreSheet(len(seats), tuple(tuple(row) for row in rows))
    before = Table(options, "seed", tuple(seats), sheet, TableStatus.PLAYING)
    return before, replace(before, status=TableStatus.OVER, end=end)


async def end_match(store: FakeStore, before: Table, after: Table, table_id: str = "t1") -> None:
    async with store() as uow:
        await RecordKeeper().match_finished(uow, table_id, MONDAY - timedelta(minutes=20), before, after, MONDAY)
        await uow.commit()


async def test_match_results_places_ties_and_resignations() -> None:
    store = store_with_players()
    seats = [Seat(player_id=ANN), Seat(player_id=BOB), Seat(bot="greedy")]
    await end_match(store, *table_after([10, 10, 30], seats))
    by_player = {r.player_id: r for r in store.tables.records}
    assert set(by_player) == {ANN, BOB}, "bots have no history"
    ann, bob = by_player[ANN], by_player[BOB]
    assert (ann.result, ann.place, ann.players, ann.holes, ann.score) == (Result.DRAWN, 1, 3, 2, 10)
    assert bob.result is Result.DRAWN and bob.issuer == "https://portal.example"
    assert [r.lead for r in store.tables.records] == [True, False], "one record per match is the export's"
    assert ann.rated and ann.duration_ms == 20 * 60_000

    store = store_with_players()
    seats = [Seat(player_id=ANN, bot="greedy", resigned=True), Seat(player_id=BOB)]
    await end_match(store, *table_after([5, 20], seats))
    by_player = {r.player_id: r for r in store.tables.records}
    assert by_player[ANN].result is Result.LOST, "a player who resigned lost, whatever the bot made of the seat"
    assert by_player[BOB].result is Result.LOST and by_player[BOB].place == 2


async def test_a_rated_match_moves_ratings_and_counts_wins_and_points_per_preset_and_overall() -> None:
    store = store_with_players()
    seats = [Seat(player_id=ANN), Seat(player_id=BOB), Seat(bot="strong")]
    await end_match(store, *table_after([8, 20, 14], seats))
    e = store.tables.board_entries
    for suffix in ("six-card", "*"):
        assert (e[(wins_board(suffix), ANN)].wins, e[(wins_board(suffix), ANN)].matches) == (1, 1)
        assert (e[(wins_board(suffix), BOB)].wins, e[(wins_board(suffix), BOB)].matches) == (0, 1)
        points = e[(points_board(suffix), ANN)]
        assert (points.holes, points.points, points.k1, points.qualifier) == (2, 8, 4000, 2)
    ann, bob = e[(RATING_BOARD, ANN)], e[(RATING_BOARD, BOB)]
    assert ann.mu > 25 > bob.mu and ann.sigma < 25 / 3 and bob.sigma < 25 / 3
    assert ann.key < bob.key, "the winner rates higher"
    assert not [k for k in e if k[1] not in (ANN, BOB)], "bots are never rated"
    # A second win: the count rises and the rating climbs again.
    await end_match(store, *table_after([8, 20, 14], seats), table_id="t2")
    assert e is not store.tables.board_entries
    e = store.tables.board_entries
    assert e[(wins_board("*"), ANN)].wins == 2 and e[(RATING_BOARD, ANN)].mu > ann.mu


async def test_each_preset_has_its_own_rating_and_rating_entries_show_the_wins_holes_and_points() -> None:
    store = store_with_players()
    seats = [Seat(player_id=ANN), Seat(player_id=BOB)]
    await end_match(store, *table_after([8, 20], seats))  # Ann wins at six-card...
    await end_match(store, *table_after([30, 4], seats, preset="four-card"), table_id="t2")  # ... and loses at four
    e = store.tables.board_entries
    six, four, every = (e[(rating_board(p), ANN)] for p in ("six-card", "four-card", "*"))
    assert every.board == RATING_BOARD
    assert six.mu > 25 > four.mu, "a preset's rating moves with that preset's matches only"
    assert (six.matches, six.wins, six.holes, six.points) == (1, 1, 2, 8)
    assert (four.matches, four.wins, four.holes, four.points) == (1, 0, 2, 30)
    assert (every.matches, every.wins, every.holes, every.points) == (2, 1, 4, 38)
    assert not [k for k in e if k[0] == rating_board("six-card-jokers")], "no board of a preset nobody played"


async def test_an_abandoned_match_is_in_the_history_but_not_rated() -> None:
    store = store_with_players()
    seats = [Seat(player_id=ANN, bot="greedy", resigned=True), Seat(bot="greedy")]
    await end_match(store, *table_after([5, 9], seats, MatchEnd.ABANDONED))
    (record,) = store.tables.records
    assert not record.rated and record.result is Result.LOST
    assert not store.tables.board_entries


@pytest.mark.parametrize(("points", "holes", "milli"), [(7, 2, 3500), (-7, 3, -2333), (0, 0, 0), (10, 3, 3333)])
def test_points_per_hole_in_thousandths(points: int, holes: int, milli: int) -> None:
    from golf.app.boards import milli_per_hole

    assert milli_per_hole(points, holes) == milli
