"""GetReplay over both transports and both databases (REST ``GET /v1/replays/{recordId}?kind=...``, gRPC
``golf.v1.RecordService``): a finished game (moves, an undo and an AutoPlay run each a step), a round of nine
holes, a card Golf match of bots at a listed and at a private table. Every step but the last is scanned for what a
spectator may not know (the stock order, the seed, face-down cards); the last step reveals what the finished game
or match shows; both transports give the same replay; the refusals carry their codes. Another player replays a
finished game only once its deal is out of play (``golf.app.reveals``): the game is on a past day's daily deal; a
round's holes, on deals that never close, are replayed by their own player and refused to others."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf import json_format

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2
from tests.e2e.hidden_information import Seen, check_payload
from tests.e2e.identity import QUICK_RULES, finish, new_client, quick_game
from tests.e2e.records import Records
from tests.e2e.support import Client, Grpc, R, Reply, Rest, Server, choose_move, move_request, new_key, pb
from tests.e2e.tables import Knowledge, Tables, check_hidden

GAME, ROUND, MATCH = rpb.RECORD_KIND_SOLITAIRE_GAME, rpb.RECORD_KIND_SOLITAIRE_ROUND, rpb.RECORD_KIND_CARD_GOLF_MATCH
IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS
MATCH_SECONDS = 60.0
"""How long a match of bots may take to be played out by the server's table clock."""


@pytest.fixture(params=["rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def people(server: Server, transport: str) -> Iterator[list[Client]]:
    """Two new players on the test's transport and one on the other (for parity)."""
    other = "grpc" if transport == "rest" else "rest"
    clients = [new_client(server, transport), new_client(server, transport), new_client(server, other)]
    yield clients
    for c in clients:
        c.close()


def scan_game(steps: list[rpb.ReplayStep], columns: list[list[str]], start: str, final: solitaire_pb2.Game) -> None:
    """Every step but the last shows the deal's columns and start card and the stock cards turned by then only;
    the last is the finished game, which reveals the seed and the stock."""
    seed, stock = final.reveal.seed, [c.code for c in final.reveal.stock]
    assert seed and stock
    for step in steps[:-1]:
        game = step.game
        assert game.status == IN_PROGRESS and not game.HasField("reveal")
        seen = Seen(
            Reply("replay", message=game, raw=json_format.MessageToJson(step)), len(stock) - game.stock_count, False
        )
        check_payload(seen, game.id, columns, start, stock, seed)
    assert steps[-1].game == final


def two_days_ago() -> str:
    return (datetime.now(UTC).date() - timedelta(days=2)).isoformat()


def play_with_undo_and_autoplay(client: Client) -> solitaire_pb2.Game:
    # A winnable `wrap` deal: the solver behind AutoPlay decides it in moments (a 20-column quick layout may keep
    # it searching for its whole budget, past the call's deadline on a loaded machine). The daily deal of two days
    # ago: it closed a day ago (past the grace), so its games (practice) are shown to anyone once finished.
    deal = client.get_daily_deal(two_days_ago(), "wrap").expect_ok().deal
    game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    assert game.practice and not game.ranked
    game = client.play_move(move_request(game, choose_move(game))).expect_ok().game
    game = client.undo(pb.UndoRequest(game_id=game.id, idempotency_key=new_key())).expect_ok().game
    auto = client.auto_play(pb.AutoPlayRequest(game_id=game.id, idempotency_key=new_key()))
    game = auto.message.game if auto.ok else game  # no column card may fit at the start: then no run
    return finish(client, game)


def test_a_finished_game(people: list[Client]) -> None:
    ann, bob, other = people
    final = play_with_undo_and_autoplay(ann)
    log = ann.list_moves(final.id).expect_ok().moves
    deal = ann.get_deal(final.deal_id).expect_ok().deal
    steps = Records(bob).whole(final.id, GAME, page=7)
    assert len(steps) == len(log) + 1
    assert [s.game.version for s in steps] == list(range(len(steps))) and not any(s.hole for s in steps)
    assert [s.time for s in steps[1:]] == [m.create_time for m in log]
    assert steps[0].time == final.create_time and steps[0].game.moves_played == 0
    undone = [m.seq for m in log if m.HasField("undo_of")]
    assert undone, "the undo is a step"
    shown = bob.get_game(final.id).expect_ok().game
    scan_game(steps, [[c.code for c in col.cards] for col in deal.columns], deal.start_card.code, shown)
    # The other transport gives the same replay.
    assert Records(other).whole(final.id, GAME) == steps


def test_a_round_of_nine_holes(people: list[Client], server: Server) -> None:
    ann, bob, _ = people
    # Ann on the other transport: her holes' deals (made for them, never closed) stay in play for good.
    other: Client = Grpc(server.grpc_target, as_=ann) if isinstance(ann, Rest) else Rest(server.http_url, as_=ann)
    req = pb.CreateRoundRequest(
        preset="standard", rules=solitaire_pb2.SolitaireRules(**QUICK_RULES), winnable_only=False
    )
    made = ann.create_round(req).expect_ok()
    round_id, game = made.round.id, made.game
    finals: list[solitaire_pb2.Game] = []
    for hole in range(1, 10):
        finals.append(finish(ann, game))
        if hole == 3:
            Records(ann).replay(round_id, ROUND).expect_error(R.ERROR_REASON_NOT_FINISHED)
            Records(bob).replay(round_id, ROUND).expect_error(R.ERROR_REASON_NOT_FOUND)
        if hole < 9:
            game = ann.start_next_hole(round_id).expect_ok().game
    steps = Records(ann).whole(round_id, ROUND, page=41)
    assert [s.hole for s in steps] == [n for n, g in enumerate(finals, start=1) for _ in range(g.version + 1)]
    for number, final in enumerate(finals, start=1):
        own = [s for s in steps if s.hole == number]
        assert [s.game for s in own] == [s.game for s in Records(ann).whole(final.id, GAME)]
        deal = bob.get_deal(final.deal_id).expect_ok().deal
        shown = ann.get_game(final.id).expect_ok().game
        scan_game(own, [[c.code for c in col.cards] for col in deal.columns], deal.start_card.code, shown)
        # To Bob each finished hole is on a deal still in play: its cards are Ann's alone.
        bob.get_game(final.id).expect_error(R.ERROR_REASON_DEAL_IN_PLAY)
        Records(bob).replay(final.id, GAME).expect_error(R.ERROR_REASON_DEAL_IN_PLAY)
    Records(bob).replay(round_id, ROUND).expect_error(R.ERROR_REASON_DEAL_IN_PLAY)
    try:
        assert Records(other).whole(round_id, ROUND) == steps
    finally:
        other.close()


def bots_match(host: Tables, private: bool = False) -> cg.Table:
    """A match of three bots, one hole, played out by the server (the table clock plays past a request's budget)."""
    table = host.create(preset="six-card", seats=3, holes=1, take_seat=False, private=private).expect_ok().table
    for _ in range(3):
        host.add_bot(table.id).expect_ok()
    host.start(table.id).expect_ok()
    deadline = time.monotonic() + MATCH_SECONDS
    while True:
        table = host.get(table.id).expect_ok().table
        if table.status == cg.TABLE_STATUS_OVER or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert table.status == cg.TABLE_STATUS_OVER, table
    return table


def scan_match(steps: list[rpb.ReplayStep], final: cg.Table) -> None:
    """Every step is a spectator's (no seat, no legal moves, no join code); every step but the last shows no card a
    spectator may not know and not the seed; the last is the finished match as a spectator's GetTable shows it."""
    for step in steps:
        table = step.table
        assert not table.HasField("your_seat") and not table.legal_moves and not table.join_code
    for step in steps[:-1]:
        raw = json_format.MessageToJson(step)
        assert not step.table.seed and (not final.seed or final.seed not in raw)
        check_hidden(Reply("replay", message=step.table, raw=raw), Knowledge(None))
    assert steps[-1].table == final


def test_a_match_of_bots(people: list[Client]) -> None:
    ann, bob, other = people
    host = Tables(ann)
    over = bots_match(host)
    watcher = Tables(bob).get(over.id).expect_ok().table  # a spectator's view of the finished match
    steps = Records(bob).whole(over.id, MATCH, page=50)
    assert len(steps) == over.version + 1 and [s.table.version for s in steps] == list(range(len(steps)))
    assert steps[0].table.status == cg.TABLE_STATUS_SEATING and steps[0].time == over.create_time
    scan_match(steps, watcher)
    assert Records(other).whole(over.id, MATCH) == steps
    # A private table's match: its creator replays it (as GetTable shows it to them), a stranger finds nothing.
    private = bots_match(host, private=True)
    Records(bob).replay(private.id, MATCH).expect_error(R.ERROR_REASON_NOT_FOUND)
    mine = Records(ann).whole(private.id, MATCH)
    spectator = cg.Table()
    spectator.CopyFrom(private)
    spectator.join_code = ""  # the creator's own screens show the code; a replay never does
    scan_match(mine, spectator)


def test_refusals(people: list[Client], server: Server) -> None:
    ann, bob, _ = people
    records = Records(ann)
    playing = quick_game(ann)
    reply = records.replay(playing.id, GAME)
    assert "still being played" in reply.expect_error(R.ERROR_REASON_NOT_FINISHED).message
    Records(bob).replay(playing.id, GAME).expect_error(R.ERROR_REASON_NOT_FOUND)
    records.replay("no-such-game", GAME).expect_error(R.ERROR_REASON_NOT_FOUND)
    final = finish(ann, playing)
    for kind in (ROUND, MATCH):
        records.replay(final.id, kind).expect_error(R.ERROR_REASON_NOT_FOUND)
    listed = Tables(ann).create(preset="six-card", seats=2, holes=1).expect_ok().table
    Tables(ann).add_bot(listed.id).expect_ok()
    Tables(ann).start(listed.id).expect_ok()
    Records(bob).replay(listed.id, MATCH).expect_error(R.ERROR_REASON_NOT_FINISHED)
    # The contract's field rules.
    records.replay(final.id, rpb.RECORD_KIND_UNSPECIFIED).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    records.replay(final.id, GAME, most=501).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    records.replay(final.id, GAME, first=-1).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert records.replay(final.id, GAME, first=final.version + 5).expect_ok().total_steps == final.version + 1
    # A token is needed.
    anonymous = Rest(server.http_url, sign_in=False)
    try:
        Records(anonymous).replay(final.id, GAME).expect_error(R.ERROR_REASON_UNAUTHENTICATED)
    finally:
        anonymous.close()


def test_the_rest_route_and_its_query(people: list[Client], server: Server) -> None:
    ann = people[0]
    final = finish(ann, quick_game(ann))
    rest = Rest(server.http_url, as_=ann)
    try:
        reply = rest.request(
            "GET",
            f"/v1/replays/{final.id}",
            rpb.GetReplayResponse,
            params={"kind": "RECORD_KIND_SOLITAIRE_GAME", "firstStep": 1, "maxSteps": 2},
        )
        page = reply.expect_ok()
        assert [s.index for s in page.steps] == [1, 2] and page.total_steps == final.version + 1
        assert '"game"' in reply.raw and '"index"' in reply.raw
    finally:
        rest.close()
