"""Records over both transports and both databases: a player's history (paged while games finish), the leaderboards
with the caller's own rank, display names, deal statistics, card Golf's boards and ratings (per preset), and a
private table's match, which another player's history shows only to those who may see the table."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2
from tests.e2e.identity import new_client
from tests.e2e.records import Records
from tests.e2e.support import Client, R, Reply, Server, choose_move, move_request, pb
from tests.e2e.tables import Tables

PRESET = "wrap"
IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS


@pytest.fixture(params=["rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def people(server: Server, transport: str) -> Iterator[list[Records]]:
    """Three new players on the test's transport."""
    clients = [new_client(server, transport) for _ in range(3)]
    yield [Records(c) for c in clients]
    for c in clients:
        c.close()


def finished_game(client: Client, deal_id: str = "") -> solitaire_pb2.Game:
    """A new game (of ``deal_id``, else of a fresh deal) played to its end with the first legal moves."""
    req = pb.CreateGameRequest(deal_id=deal_id) if deal_id else pb.CreateGameRequest(preset=PRESET)
    game = client.create_game(req).expect_ok().game
    while game.status == IN_PROGRESS:
        game = client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok().game
    return game


def entries(reply: Reply) -> list[rpb.LeaderboardEntry]:
    return list(reply.expect_ok().entries)


def test_a_finished_game_is_in_the_history_on_its_deals_board_and_in_its_stats(people: list[Records]) -> None:
    ann, bob, _ = people
    game = finished_game(ann.client)
    again = finished_game(bob.client, game.deal_id)
    (entry,) = ann.history().expect_ok().entries
    assert (entry.kind, entry.record_id, entry.deal_id, entry.preset) == (
        rpb.RECORD_KIND_SOLITAIRE_GAME,
        game.id,
        game.deal_id,
        PRESET,
    )
    won = game.status == solitaire_pb2.GAME_STATUS_WON
    assert entry.result == (rpb.RECORD_RESULT_WON if won else rpb.RECORD_RESULT_LOST)
    assert (entry.score, entry.moves, entry.hints, entry.undos, entry.holes) == (game.score, game.moves_played, 0, 0, 1)
    # Times are kept to the millisecond.
    assert entry.time.ToMilliseconds() == game.elapsed.ToMilliseconds() and not entry.unrated
    # Anyone signed in may read a guest's history.
    assert [e.record_id for e in bob.history(ann.player_id).expect_ok().entries] == [game.id]

    ann.rename("Ann the Bold").expect_ok()
    board = bob.board(kind=rpb.LEADERBOARD_KIND_DEAL, deal_id=game.deal_id).expect_ok()
    # Ties on score and time (no assists in either) go to the earlier finish: Ann's.
    order = sorted(
        [
            (game.score, game.elapsed.ToMilliseconds(), 0, ann.player_id),
            (again.score, again.elapsed.ToMilliseconds(), 1, bob.player_id),
        ]
    )
    assert [(e.rank, e.player_id) for e in board.entries] == [(1, order[0][3]), (2, order[1][3])]
    names = {e.player_id: e.display_name for e in board.entries}
    assert names[ann.player_id] == "Ann the Bold"
    assert board.caller_entry.player_id == bob.player_id
    assert board.caller_entry.rank == next(e.rank for e in board.entries if e.player_id == bob.player_id)

    stats = ann.call("GetDealStats", rpb.GetDealStatsRequest(deal_id=game.deal_id)).expect_ok().stats
    wins = sum(g.status == solitaire_pb2.GAME_STATUS_WON for g in (game, again))
    assert (stats.plays, stats.wins, stats.preset) == (2, wins, PRESET)
    assert stats.average_score == pytest.approx((game.score + again.score) / 2)


def test_history_pages_never_skip_or_repeat_while_games_finish(people: list[Records]) -> None:
    ann = people[0]
    before = [finished_game(ann.client).id for _ in range(5)]
    seen: list[str] = []
    token = ""
    while True:
        page = ann.history(page_size=2, page_token=token).expect_ok()
        seen += [e.record_id for e in page.entries]
        finished_game(ann.client)  # a new game finishes between pages: it goes to the front, never into them
        token = page.next_page_token
        if not token:
            break
    assert seen == list(reversed(before))
    newest = ann.history(page_size=3).expect_ok().entries
    assert len(newest) == 3 and newest[0].record_id not in before


def test_history_filters_and_refusals(people: list[Records]) -> None:
    ann, bob, _ = people
    game = finished_game(ann.client)
    card_golf = ann.history(family=rpb.GAME_FAMILY_CARD_GOLF).expect_ok()
    assert not card_golf.entries
    solitaire = ann.history(family=rpb.GAME_FAMILY_SOLITAIRE, preset=PRESET).expect_ok()
    assert [e.record_id for e in solitaire.entries] == [game.id]
    other = rpb.RECORD_RESULT_LOST if game.status == solitaire_pb2.GAME_STATUS_WON else rpb.RECORD_RESULT_WON
    assert not ann.history(result=other).expect_ok().entries
    assert ann.history(page_token="bm9wZQ").expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"
    # A token of another list (another player's) is refused, not misread.
    token = ann.history(page_size=1).expect_ok().next_page_token or "x"
    bob.history(ann.player_id, page_token=token)  # the same list: fine whether or not there is a next page
    assert bob.history(page_token=token).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"
    assert bob.history("no-such-player").expect_error(R.ERROR_REASON_NOT_FOUND)
    assert ann.rename("x", player_id=bob.player_id).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    assert ann.rename("   ").expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "displayName"
    assert ann.board(kind=rpb.LEADERBOARD_KIND_DEAL).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "dealId"
    assert ann.board(kind=rpb.LEADERBOARD_KIND_DEAL, deal_id="nope").expect_error(R.ERROR_REASON_NOT_FOUND)
    refused = ann.board(kind=rpb.LEADERBOARD_KIND_DAILY_DEAL, day="2026-02-30")
    assert refused.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "day"


def test_leaderboard_pages_rank_everyone_once(people: list[Records], server: Server, transport: str) -> None:
    """Five players on one deal, paged two at a time: ranks 1..5 in order, each player once."""
    ann = people[0]
    deal_id = finished_game(ann.client).deal_id
    others = [Records(new_client(server, transport)) for _ in range(4)]
    try:
        for other in others:
            finished_game(other.client, deal_id)
        ranks: list[tuple[int, str]] = []
        token = ""
        while True:
            page = others[0].board(kind=rpb.LEADERBOARD_KIND_DEAL, deal_id=deal_id, page_size=2, page_token=token)
            body = page.expect_ok()
            ranks += [(e.rank, e.player_id) for e in body.entries]
            assert body.caller_entry.player_id == others[0].player_id
            token = body.next_page_token
            if not token:
                break
        assert [r for r, _ in ranks] == [1, 2, 3, 4, 5]
        assert sorted(p for _, p in ranks) == sorted([ann.player_id] + [o.player_id for o in others])
    finally:
        for other in others:
            other.client.close()


def match_against_a_bot(tables: Tables, rng: random.Random, private: bool = False) -> cg.Table:
    """A one-hole match of ``tables``' player against a greedy bot, played to its end with random legal moves (at a
    ``private`` table: one joined with a code)."""
    made = tables.create(preset="six-card", seats=2, holes=1, private=private).expect_ok().table
    tables.add_bot(made.id).expect_ok()
    table: cg.Table = tables.start(made.id).expect_ok().table
    while table.status == cg.TABLE_STATUS_PLAYING:
        chosen = rng.choice(list(table.legal_moves))
        table = tables.act(table.id, chosen, expected_version=table.version).expect_ok().table
    return table


def test_a_match_is_in_the_history_and_on_the_card_golf_boards(people: list[Records]) -> None:
    ann = people[0]
    table = match_against_a_bot(Tables(ann.client), random.Random(5))
    assert table.match_end == cg.MATCH_END_COMPLETED
    (entry,) = ann.history(family=rpb.GAME_FAMILY_CARD_GOLF).expect_ok().entries
    totals = list(table.score_sheet.totals)
    mine = totals[table.your_seat]
    assert (entry.kind, entry.record_id, entry.score, entry.players, entry.holes) == (
        rpb.RECORD_KIND_CARD_GOLF_MATCH,
        table.id,
        mine,
        2,
        1,
    )
    assert entry.place == 1 + sum(t < mine for t in totals) and not entry.unrated
    for kind in (rpb.LEADERBOARD_KIND_MATCH_WINS, rpb.LEADERBOARD_KIND_RATING):
        for preset in ("", "six-card"):
            own = ann.board(kind=kind, preset=preset).expect_ok().caller_entry
            assert own.player_id == ann.player_id and own.matches == 1 and own.rank >= 1
    rating = ann.board(kind=rpb.LEADERBOARD_KIND_RATING).expect_ok().caller_entry
    assert rating.rating == pytest.approx(rating.mu - 3 * rating.sigma) and rating.sigma < 25 / 3
    points = ann.board(kind=rpb.LEADERBOARD_KIND_POINTS_PER_HOLE, min_holes=1).expect_ok().caller_entry
    assert (points.holes, points.points, points.points_per_hole) == (1, mine, pytest.approx(mine))
    # Nine holes to qualify by default: one hole is not enough.
    assert not ann.board(kind=rpb.LEADERBOARD_KIND_POINTS_PER_HOLE).expect_ok().HasField("caller_entry")


def test_card_golf_boards_are_per_preset_and_refuse_a_made_up_one(people: list[Records]) -> None:
    """Ann played six-card only: she is on six-card's boards and those of all presets, with her wins, holes and
    points on the rating board too, on no other preset's, and a preset that does not exist is refused."""
    ann = people[0]
    table = match_against_a_bot(Tables(ann.client), random.Random(7))
    mine = list(table.score_sheet.totals)[table.your_seat]
    kinds = (rpb.LEADERBOARD_KIND_MATCH_WINS, rpb.LEADERBOARD_KIND_POINTS_PER_HOLE, rpb.LEADERBOARD_KIND_RATING)
    wins = ann.board(kind=rpb.LEADERBOARD_KIND_MATCH_WINS, preset="six-card").expect_ok().caller_entry
    for kind in kinds:
        for preset in ("", "six-card"):
            own = ann.board(kind=kind, preset=preset, min_holes=1).expect_ok().caller_entry
            assert own.player_id == ann.player_id, (kind, preset)
            assert (own.matches, own.wins, own.holes, own.points) == (1, wins.wins, 1, mine), (kind, preset)
        other = ann.board(kind=kind, preset="four-card", min_holes=1).expect_ok()
        assert not other.HasField("caller_entry"), kind
        assert ann.player_id not in [e.player_id for e in other.entries], kind
        refused = ann.board(kind=kind, preset="seven-card").expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
        assert refused.field == "preset", kind


def test_a_private_tables_match_is_in_a_history_only_for_those_who_may_see_the_table(people: list[Records]) -> None:
    ann, bob, _ = people
    tables = Tables(ann.client)
    table = match_against_a_bot(tables, random.Random(9), private=True)
    assert table.match_end == cg.MATCH_END_COMPLETED
    assert [e.record_id for e in ann.history(family=rpb.GAME_FAMILY_CARD_GOLF).expect_ok().entries] == [table.id]
    # To Bob the table does not exist, and neither does its match in Ann's history.
    Tables(bob.client).get(table.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert table.id not in [e.record_id for e in bob.history(ann.player_id).expect_ok().entries]
    # A listed table's match is in it for anyone.
    listed = match_against_a_bot(tables, random.Random(9))
    assert listed.id in [e.record_id for e in bob.history(ann.player_id).expect_ok().entries]
