"""Undo in scored play (issue 25) over both transports and both databases: on the daily deal a player drew 15
cards, undid the 15 draws, knew the whole deal, solved it offline and won at once, with no hint, first on the
board. Undo keeps the preset's policy, but a game that took back a stock draw now counts for no board."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from golf.engine.cards import Card, new_deck
from golf.engine.solitaire.moves import Draw
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2
from tests.e2e.identity import new_client
from tests.e2e.records import Records
from tests.e2e.support import Client, Server, choose_move, draw, move_request, new_key, pb, play

STOCK_DRAW_UNDONE = solitaire_pb2.UNRANKED_REASON_STOCK_DRAW_UNDONE
IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS


@pytest.fixture(params=["rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def people(server: Server, transport: str) -> Iterator[list[Records]]:
    clients = [new_client(server, transport) for _ in range(2)]
    yield [Records(c) for c in clients]
    for c in clients:
        c.close()


def daily_game(client: Client) -> solitaire_pb2.Game:
    today = datetime.now(UTC).date().isoformat()
    deal = client.get_daily_deal(today, "standard").expect_ok().deal
    game: solitaire_pb2.Game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    return game


def undo(client: Client, game: solitaire_pb2.Game) -> solitaire_pb2.Game:
    done: solitaire_pb2.Game = client.undo(pb.UndoRequest(game_id=game.id, idempotency_key=new_key())).expect_ok().game
    return done


def the_whole_deal(game: solitaire_pb2.Game, drawn: list[str]) -> Layout:
    """What the player knows at the start once 15 draws are undone: the columns, the pile's start card, 15 of the
    16 stock cards in order and so, by elimination, the last one."""
    columns = tuple(tuple(Card.parse(c.code) for c in col.cards) for col in game.columns)
    start = Card.parse(game.pile_top.code)
    seen = {c for col in columns for c in col} | {start} | {Card.parse(code) for code in drawn}
    (last,) = set(new_deck()) - seen
    return Layout(columns, start, (*(Card.parse(code) for code in drawn), last))


def test_a_daily_deal_won_after_its_draws_were_undone_is_on_no_board(people: list[Records]) -> None:
    ann, bob = people
    game = daily_game(ann.client)
    assert game.ranked and game.unranked_reason == solitaire_pb2.UNRANKED_REASON_UNSPECIFIED
    drawn = []
    for _ in range(15):
        game = ann.client.play_move(move_request(game, draw(), expected=game.version)).expect_ok().game
        drawn.append(game.pile_top.code)
    for _ in range(15):
        game = undo(ann.client, game)  # the preset's policy (unlimited) allows every one
    assert game.stock_count == 16 and game.undos_used == 15
    assert (game.ranked, game.unranked_reason) == (False, STOCK_DRAW_UNDONE)
    got = ann.client.get_game(game.id).expect_ok().game
    assert (got.ranked, got.unranked_reason) == (False, STOCK_DRAW_UNDONE)
    listed = {g.id: g for g in ann.client.list_games(page_size=100).expect_ok().games}
    assert (listed[game.id].ranked, listed[game.id].unranked_reason) == (False, STOCK_DRAW_UNDONE)

    # Solved offline, played at once without a hint: a win.
    found = solve(State.initial(PRESETS["standard"], the_whole_deal(game, drawn)))
    assert found.winnable, "the daily deal is winnable"
    for move in found.line:
        step = draw() if isinstance(move, Draw) else play(move.column)
        game = ann.client.play_move(move_request(game, step, expected=game.version)).expect_ok().game
    assert game.status == solitaire_pb2.GAME_STATUS_WON and game.hints_used == 0
    assert (game.ranked, game.unranked_reason) == (False, STOCK_DRAW_UNDONE)

    # Bob plays it too, with an undo of a column play only: his game ranks.
    other = daily_game(bob.client)
    while not any(m.WhichOneof("kind") == "play_column" for m in other.legal_moves):
        other = bob.client.play_move(move_request(other, draw(), expected=other.version)).expect_ok().game
    other = bob.client.play_move(move_request(other, choose_move(other), expected=other.version)).expect_ok().game
    other = undo(bob.client, other)
    assert other.ranked and other.undos_used == 1
    while other.status == IN_PROGRESS:
        other = bob.client.play_move(move_request(other, choose_move(other), expected=other.version)).expect_ok().game
    assert other.ranked

    board = ann.board(kind=rpb.LEADERBOARD_KIND_DAILY_DEAL, preset="standard").expect_ok()
    ranked = [e.player_id for e in board.entries]
    assert ann.player_id not in ranked and not board.HasField("caller_entry")
    assert bob.player_id in ranked
    mine = bob.board(kind=rpb.LEADERBOARD_KIND_DAILY_DEAL, preset="standard").expect_ok().caller_entry
    assert (mine.record_id, mine.assists) == (other.id, 1)
    assert ann.player_id not in [
        e.player_id for e in ann.board(kind=rpb.LEADERBOARD_KIND_DEAL, deal_id=game.deal_id).expect_ok().entries
    ]
    # The history shows the game, marked, and the deal's statistics count it.
    (entry,) = ann.history().expect_ok().entries
    assert (entry.record_id, entry.unrated, entry.unranked_reason, entry.undos) == (
        game.id,
        True,
        STOCK_DRAW_UNDONE,
        15,
    )
    (theirs,) = bob.history().expect_ok().entries
    assert not theirs.unrated and theirs.unranked_reason == solitaire_pb2.UNRANKED_REASON_UNSPECIFIED
    stats = ann.call("GetDealStats", rpb.GetDealStatsRequest(deal_id=game.deal_id)).expect_ok().stats
    assert stats.plays >= 2
