"""Rounds over both transports and both databases: nine winnable deals scored like golf against par 45, the
server's clock for each hole, the next hole only once the current one is over, eighteen holes as an option."""

from __future__ import annotations

from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2
from tests.e2e.records import Records
from tests.e2e.support import Board, Client, Grpc, R, Rest, choose_move, move_request, pb

IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS
ROUND_IN_PROGRESS = solitaire_pb2.ROUND_STATUS_IN_PROGRESS
ROUND_FINISHED = solitaire_pb2.ROUND_STATUS_FINISHED
PRESET = "wrap"  # quick to solve, so each hole's winnable deal is dealt fast


def play_out(client: Client, game: solitaire_pb2.Game) -> solitaire_pb2.Game:
    """Play moves chosen from the legal moves until the game ends."""
    while game.status == IN_PROGRESS:
        game = client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok().game
    return game


def check_hole(hole: solitaire_pb2.RoundHole, game: solitaire_pb2.Game, number: int) -> None:
    assert hole.hole == number and hole.game_id == game.id and hole.deal_id == game.deal_id
    assert hole.status == game.status and hole.score == game.score
    assert game.round_id and game.hole == number


def test_nine_hole_round_played_to_the_end(rest: Rest, grpc_client: Grpc) -> None:
    """One round per database, its holes played over the two transports in turn."""
    clients: list[Client] = [rest, grpc_client]
    created = rest.create_round(pb.CreateRoundRequest(preset=PRESET)).expect_ok()
    rnd, game = created.round, created.game
    assert (rnd.holes, rnd.par, rnd.status, rnd.preset) == (9, 45, ROUND_IN_PROGRESS, PRESET)
    assert rnd.rules.wrap
    assert game.round_id == rnd.id and game.hole == 1 and game.status == IN_PROGRESS
    assert len(rnd.played) == 1
    check_hole(rnd.played[0], game, 1)
    # An unfinished hole counts its current score.
    assert rnd.total == game.score == Board.of_game(game).score

    finished: list[solitaire_pb2.Game] = []
    for number in range(1, 10):
        client = clients[number % 2]
        other = clients[(number + 1) % 2]
        # While the hole is being played, StartNextHole returns it (a retry never starts two holes).
        same = other.start_next_hole(rnd.id).expect_ok()
        assert same.game.id == game.id and len(same.round.played) == number
        assert client.get_deal(game.deal_id).expect_ok().deal.winnable, "round holes are winnable deals"

        game = play_out(client, game)
        assert game.score == Board.of_game(game).score, "a hole's score: cards left, or minus the stock left"
        finished.append(game)
        rnd = other.get_round(rnd.id).expect_ok().round
        assert len(rnd.played) == number
        for i, (hole, done) in enumerate(zip(rnd.played, finished, strict=True)):
            check_hole(hole, done, i + 1)
        assert rnd.total == sum(g.score for g in finished)
        # The server measures each hole, from its start to its end.
        assert rnd.played[-1].elapsed == client.get_game(game.id).expect_ok().game.elapsed
        assert rnd.played[-1].elapsed.ToTimedelta().total_seconds() >= 0
        if number < 9:
            assert rnd.status == ROUND_IN_PROGRESS
            nxt = client.start_next_hole(rnd.id).expect_ok()
            game, rnd = nxt.game, nxt.round
            assert game.hole == number + 1 and game.status == IN_PROGRESS and game.version == 0
            assert len(rnd.played) == number + 1
            assert rnd.total == sum(g.score for g in finished) + game.score

    assert rnd.status == ROUND_FINISHED
    assert rnd.total == sum(h.score for h in rnd.played) == sum(g.score for g in finished)
    assert rnd.par == 45
    assert len({h.deal_id for h in rnd.played}) == 9, "every hole has its own deal"
    for client in clients:
        err = client.start_next_hole(rnd.id).expect_error(R.ERROR_REASON_ROUND_OVER)
        assert err.message
    # A finished round stays as it ended; the holes' clocks are stopped.
    later = grpc_client.get_round(rnd.id).expect_ok().round
    assert later.status == ROUND_FINISHED and later.played == rnd.played and later.total == rnd.total
    # The round is in the player's history beside its nine games, and on the rounds boards of every period.
    records = Records(rest)
    history = records.history(family=rpb.GAME_FAMILY_SOLITAIRE).expect_ok().entries
    (entry,) = [e for e in history if e.kind == rpb.RECORD_KIND_SOLITAIRE_ROUND]
    assert (entry.record_id, entry.score, entry.par, entry.holes) == (rnd.id, rnd.total, 45, 9)
    assert entry.result == (rpb.RECORD_RESULT_WON if rnd.total <= 45 else rpb.RECORD_RESULT_LOST)
    assert {e.record_id for e in history} >= {g.id for g in finished}
    for period in (rpb.LEADERBOARD_PERIOD_ALL_TIME, rpb.LEADERBOARD_PERIOD_WEEK, rpb.LEADERBOARD_PERIOD_MONTH):
        board = Records(grpc_client).board(kind=rpb.LEADERBOARD_KIND_ROUNDS, preset=PRESET, period=period)
        own = board.expect_ok().caller_entry
        assert (own.record_id, own.score, own.player_id) == (rnd.id, rnd.total, rest.player_id)


def test_eighteen_hole_round(client: Client) -> None:
    created = client.create_round(pb.CreateRoundRequest(preset=PRESET, holes=18)).expect_ok()
    rnd = created.round
    assert (rnd.holes, rnd.par, rnd.status) == (18, 90, ROUND_IN_PROGRESS)
    assert len(rnd.played) == 1 and rnd.played[0].game_id == created.game.id
    got = client.get_round(rnd.id).expect_ok().round
    assert got.id == rnd.id and got.holes == 18 and got.par == 90
    assert client.get_game(created.game.id).expect_ok().game.round_id == rnd.id


def test_round_refusals(client: Client) -> None:
    err = client.create_round(pb.CreateRoundRequest(preset=PRESET, holes=10)).expect_error(
        R.ERROR_REASON_INVALID_ARGUMENT
    )
    assert err.field == "holes"
    err = client.create_round(pb.CreateRoundRequest(preset="no-such-preset")).expect_error(
        R.ERROR_REASON_INVALID_ARGUMENT
    )
    assert err.field == "preset"
    client.get_round("no-such-round").expect_error(R.ERROR_REASON_NOT_FOUND)
    client.start_next_hole("no-such-round").expect_error(R.ERROR_REASON_NOT_FOUND)
