"""Fair reveals end to end (``golf.app.reveals``), on both databases, over REST, gRPC and Connect, with several
accounts: another player's finished game on a deal still in play is refused (``DEAL_IN_PLAY``) by ``GetGame``,
``ListMoves`` and ``GetReplay``, and left out of ``ExportRecords``, while its own player sees all of it at once:

- today's daily deal (open until the day ends), while one player's game on it is in progress and after;
- a past day's daily deal, closed: its finished games are anyone's to read, and a game started on it is practice;
- a pool deal dealt again (a server with a tiny pool): the earlier player's game is refused to the later one and to
  everyone else while the deal is in the pool, though the deal's board lists it;
- a PySolFC numbered deal, which anyone may start for good, and a round's holes.

Every payload a non-owner received is scanned for the seed and for stock cards (``check_payload``)."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from google.protobuf import json_format
from google.protobuf.message import Message

from golf.v1 import errors_pb2, solitaire_pb2
from golf.v1 import record_service_pb2 as rpb
from tests.e2e.deal_pool import LEVELS, pool_rows
from tests.e2e.hidden_information import Seen, check_payload
from tests.e2e.identity import QUICK_RULES, finish
from tests.e2e.record_exports import grpc_export, rest_export
from tests.e2e.records import Records
from tests.e2e.support import Client, Grpc, R, Reply, Rest, Server, migrate, pb

GAME, ROUND = rpb.RECORD_KIND_SOLITAIRE_GAME, rpb.RECORD_KIND_SOLITAIRE_ROUND
IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS
SOLITAIRE, RECORDS = "golf.v1.SolitaireService", "golf.v1.RecordService"
POOL_WAIT_SECONDS = 60.0
"""How long the refiller of a tiny pool may take to store its first winnable deal."""
EXPORT: MethodInfo[rpb.ExportRecordsRequest, rpb.ExportRecordsResponse] = MethodInfo(
    name="ExportRecords",
    service_name=RECORDS,
    input=rpb.ExportRecordsRequest,
    output=rpb.ExportRecordsResponse,
    idempotency_level=IdempotencyLevel.UNKNOWN,
    stream_type=StreamType.SERVER_STREAM,
)


def utc_day(offset: int = 0) -> str:
    return (datetime.now(UTC).date() + timedelta(days=offset)).isoformat()


# -- one account over three transports ---------------------------------------------------------------------------
class Connect:
    """Unary Connect calls in JSON (plain httpx) and the export as a Connect server stream, with a bearer token."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=30)
        self.token = token

    def call(self, service: str, method: str, req: Message, response: type[Message]) -> Reply:
        """The reply as the other transports' ``Reply``: the message, or the ``golf.v1.Error`` of the Connect
        error's details (with its gRPC code, which the Connect code names)."""
        headers = {
            "connect-protocol-version": "1",
            "content-type": "application/json",
            "authorization": f"Bearer {self.token}",
        }
        resp = self.http.post(f"/{service}/{method}", content=json_format.MessageToJson(req), headers=headers)
        assert resp.status_code != 500, resp.text
        if resp.status_code == 200:
            return Reply("connect", message=json_format.Parse(resp.content, response()), raw=resp.text)
        body = resp.json()
        details = [d for d in body.get("details", []) if d["type"] == "golf.v1.Error"]
        assert len(details) == 1, resp.text
        error = errors_pb2.Error.FromString(base64.b64decode(details[0]["value"] + "==="))
        assert body["code"] == error.status.lower(), (body, error)
        return Reply(
            "connect", error=error, http_status=resp.status_code, grpc_code=grpc.StatusCode[error.status], raw=resp.text
        )

    def export(self, **fields: Any) -> list[rpb.Record]:
        with ConnectClientSync(self.base_url, codec=google_protobuf_binary_codec(), timeout_ms=30_000) as conn:
            stream = conn.execute_server_stream(
                request=rpb.ExportRecordsRequest(**fields),
                method=EXPORT,
                headers={"authorization": f"Bearer {self.token}"},
            )
            return [reply.record for reply in stream]

    def close(self) -> None:
        self.http.close()


@dataclass
class Account:
    """One player on REST, gRPC and Connect."""

    rest: Rest
    grpc: Grpc
    connect: Connect

    @classmethod
    def new(cls, server: Server) -> Account:
        rest = Rest(server.http_url)
        return cls(rest, Grpc(server.grpc_target, as_=rest), Connect(server.http_url, rest.token))

    @property
    def player_id(self) -> str:
        return self.rest.player_id

    @property
    def clients(self) -> tuple[Client, Client]:
        return self.rest, self.grpc

    def reads(self, game_id: str) -> list[Reply]:
        """``GetGame``, ``ListMoves`` and ``GetReplay`` of ``game_id`` over each transport."""
        replies = []
        for client in self.clients:
            replies += [client.get_game(game_id), client.list_moves(game_id), Records(client).replay(game_id, GAME)]
        replies += [
            self.connect.call(SOLITAIRE, "GetGame", pb.GetGameRequest(game_id=game_id), pb.GetGameResponse),
            self.connect.call(SOLITAIRE, "ListMoves", pb.ListMovesRequest(game_id=game_id), pb.ListMovesResponse),
            self.connect.call(
                RECORDS, "GetReplay", rpb.GetReplayRequest(record_id=game_id, kind=GAME), rpb.GetReplayResponse
            ),
        ]
        return replies

    def refused(self, game_id: str) -> list[Reply]:
        """Every read of ``game_id``, each refused with ``DEAL_IN_PLAY``; the replies, for scanning."""
        replies = self.reads(game_id)
        for reply in replies:
            error = reply.expect_error(R.ERROR_REASON_DEAL_IN_PLAY)
            assert "still in play" in error.message, error
        return replies

    def round_replays(self, round_id: str) -> list[Reply]:
        replies: list[Reply] = [Records(client).replay(round_id, ROUND) for client in self.clients]
        req = rpb.GetReplayRequest(record_id=round_id, kind=ROUND)
        return [*replies, self.connect.call(RECORDS, "GetReplay", req, rpb.GetReplayResponse)]

    def exports(self) -> dict[str, list[rpb.Record]]:
        """Everything this player may export, over each transport."""
        return {
            "rest": rest_export(self.rest),
            "grpc": grpc_export(self.grpc),
            "connect": self.connect.export(),
        }

    def close(self) -> None:
        self.rest.close()
        self.grpc.close()
        self.connect.close()


@pytest.fixture
def accounts(server: Server) -> Iterator[list[Account]]:
    """Three new players: A, B and C."""
    made = [Account.new(server) for _ in range(3)]
    yield made
    for account in made:
        account.close()


# -- checks --------------------------------------------------------------------------------------------------------
@dataclass
class Shown:
    """A finished game as its own player sees it: what no one else may learn while its deal is in play."""

    game: solitaire_pb2.Game
    deal: solitaire_pb2.Deal

    @classmethod
    def of(cls, owner: Account, game_id: str) -> Shown:
        """The owner's view, checked to reveal everything over each transport (so the refusals are not vacuous)."""
        game = owner.rest.get_game(game_id).expect_ok().game
        assert game.status != IN_PROGRESS and game.reveal.seed and game.reveal.stock, game
        for reply in owner.reads(game_id):
            reply.expect_ok()
        assert owner.grpc.get_game(game_id).expect_ok().game.reveal == game.reveal
        assert owner.connect.call(SOLITAIRE, "GetGame", pb.GetGameRequest(game_id=game_id), pb.GetGameResponse).ok
        for transport, records in owner.exports().items():
            assert [r.seed for r in records if r.id == game_id] == [game.reveal.seed], transport
        return cls(game, owner.rest.get_deal(game.deal_id).expect_ok().deal)

    @property
    def seed(self) -> str:
        return self.game.reveal.seed

    def scan(self, replies: list[Reply]) -> None:
        """No payload shows the seed or a stock card (a non-owner has turned none of this game's stock)."""
        columns = [[c.code for c in col.cards] for col in self.deal.columns]
        stock = [c.code for c in self.game.reveal.stock]
        for reply in replies:
            check_payload(Seen(reply, 0, False), self.game.id, columns, self.deal.start_card.code, stock, self.seed)

    def not_exported_to(self, viewer: Account) -> None:
        """``viewer``'s export, over each transport, holds neither this game nor its seed (but in the viewer's own
        finished game on the same deal, which shows the viewer what they have played)."""
        for transport, records in viewer.exports().items():
            assert self.game.id not in [r.id for r in records], transport
            others = [r for r in records if r.player_id != viewer.player_id]
            assert all(r.seed != self.seed for r in others), transport
            text = "".join(json_format.MessageToJson(r) for r in others)
            assert self.seed not in text, transport


def history_and_deal(viewer: Account, owner_id: str, deal_id: str) -> list[Reply]:
    """What ``viewer`` may read around another player's game: its history, the deal and its statistics."""
    replies = []
    for client in viewer.clients:
        records = Records(client)
        replies += [
            records.history(owner_id),
            client.get_deal(deal_id),
            records.call("GetDealStats", rpb.GetDealStatsRequest(deal_id=deal_id)),
        ]
    for reply in replies:
        reply.expect_ok()
    return replies


def board_entry(viewer: Client, owner_id: str, **fields: Any) -> tuple[rpb.LeaderboardEntry, Reply]:
    """``owner_id``'s entry on the board of ``fields``, as ``viewer`` reads it (and the reply)."""
    reply = Records(viewer).board(**fields)
    entries = [e for e in reply.expect_ok().entries if e.player_id == owner_id]
    assert len(entries) == 1, reply.raw[:500]
    return entries[0], reply


def play_out(client: Client, game: solitaire_pb2.Game) -> solitaire_pb2.Game:
    """``game`` played to its end (``finish``), and its final state as its player reads it."""
    finish(client, game)
    final: solitaire_pb2.Game = client.get_game(game.id).expect_ok().game
    assert final.status != IN_PROGRESS
    return final


# -- daily deals ---------------------------------------------------------------------------------------------------
def test_todays_daily_deal_is_shown_to_its_own_player_only(accounts: list[Account]) -> None:
    a, b, c = accounts
    today = utc_day()
    deal = a.rest.get_daily_deal(today, "wrap").expect_ok().deal
    playing = a.rest.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    assert playing.ranked and not playing.practice and playing.status == IN_PROGRESS
    b_game = b.grpc.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    assert b_game.ranked
    play_out(b.grpc, b_game)
    entry, board = board_entry(c.rest, b.player_id, kind=rpb.LEADERBOARD_KIND_DAILY_DEAL, day=today, preset="wrap")
    assert entry.record_id == b_game.id
    shown = Shown.of(b, entry.record_id)
    seen = [board]
    for viewer in (a, c):  # A, whose game on the deal is in progress, and C, who never played it
        seen += viewer.refused(entry.record_id)
        seen += history_and_deal(viewer, b.player_id, deal.id)
        shown.not_exported_to(viewer)
    # A's game ends; the deal is still today's, dealt fresh to anyone until midnight: still B's alone (and A's
    # finished game is A's alone).
    a_final = play_out(a.rest, playing)
    seen += a.refused(entry.record_id) + c.refused(entry.record_id)
    for viewer in (a, c):
        shown.not_exported_to(viewer)
    shown.scan(seen)
    b.refused(a_final.id)
    Shown.of(a, a_final.id).scan(b.refused(a_final.id) + c.refused(a_final.id))


def test_a_past_days_daily_deal_is_out_of_play(accounts: list[Account]) -> None:
    a, b, c = accounts
    deal = c.rest.get_daily_deal(utc_day(-2), "wrap").expect_ok().deal  # closed a day and more ago
    game = c.grpc.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    # It closed at today's start: a game on it counts for no board.
    assert game.practice and not game.ranked and game.status == IN_PROGRESS
    final = play_out(c.grpc, game)
    # A game in progress on it (practice) does not keep the finished ones hidden.
    practising = a.rest.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    assert practising.practice and practising.status == IN_PROGRESS
    for viewer in (a, b):
        for reply in viewer.reads(final.id):
            reply.expect_ok()
        got = viewer.grpc.get_game(final.id).expect_ok().game
        assert got.reveal == final.reveal and got.reveal.seed
        for transport, records in viewer.exports().items():
            assert [r.seed for r in records if r.id == final.id] == [final.reveal.seed], transport
    # The games in progress stay their players' own.
    b.rest.get_game(practising.id).expect_error(R.ERROR_REASON_NOT_FOUND)


# -- numbered deals and rounds ---------------------------------------------------------------------------------
def test_a_numbered_deal_never_closes(accounts: list[Account]) -> None:
    a, b, c = accounts
    deal = b.rest.create_deal(pb.CreateDealRequest(pysol_deal_number=4242)).expect_ok().deal
    playing = a.grpc.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    assert playing.status == IN_PROGRESS
    final = play_out(b.rest, b.rest.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game)
    shown = Shown.of(b, final.id)
    assert shown.seed == "pysol:4242"
    seen: list[Reply] = []
    for viewer in (a, c):
        seen += viewer.refused(final.id)
        shown.not_exported_to(viewer)
    # The same number made into a deal again: another deal of the same cards, still B's game refused.
    again = c.rest.create_deal(pb.CreateDealRequest(pysol_deal_number=4242)).expect_ok().deal
    assert again.id != deal.id and again.columns == deal.columns
    play_out(a.grpc, playing)  # no game on the deal in progress now: still in play, as anyone may start it
    seen += a.refused(final.id) + c.refused(final.id)
    for viewer in (a, c):
        shown.not_exported_to(viewer)
    shown.scan(seen)


def test_a_rounds_finished_holes_are_its_players_own(accounts: list[Account]) -> None:
    a, b, c = accounts
    req = pb.CreateRoundRequest(preset="standard", winnable_only=False)
    for name, value in QUICK_RULES.items():
        setattr(req.rules, name, value)
    made = a.rest.create_round(req).expect_ok()
    round_id = made.round.id
    first = play_out(a.rest, made.game)
    shown = Shown.of(a, first.id)
    seen = b.refused(first.id)
    for reply in b.round_replays(round_id):  # a round in play is nobody else's to see at all
        reply.expect_error(R.ERROR_REASON_NOT_FOUND)
    holes = [first]
    while len(holes) < made.round.holes:
        holes.append(play_out(a.rest, a.rest.start_next_hole(round_id).expect_ok().game))
    # The round is over; its holes' deals (made for them) stay in play for good.
    for viewer in (b, c):
        for reply in viewer.round_replays(round_id):
            reply.expect_error(R.ERROR_REASON_DEAL_IN_PLAY)
            seen.append(reply)
        seen += viewer.refused(first.id)
        over = viewer.rest.get_round(round_id).expect_ok().round  # its scores, no card
        assert [h.game_id for h in over.played] == [h.id for h in holes]
        seen.append(viewer.grpc.get_round(round_id))
        shown.not_exported_to(viewer)
    shown.scan(seen)
    for reply in a.round_replays(round_id):
        assert reply.expect_ok().total_steps == sum(h.version + 1 for h in holes)


# -- pool deals dealt again ----------------------------------------------------------------------------------------
@pytest.fixture
def pool_server(database_url: str, tmp_path: Path) -> Iterator[tuple[Server, str]]:
    """A server whose pool keeps one ``wrap`` deal of each difficulty (``GOLF_POOL_SIZE=1``,
    ``GOLF_POOL_LIBRARY=1``), stopped once the first is stored and started again without refilling, so the pool
    deals that deal (of difficulty: the second value) again and again and never evicts it."""
    migrate(database_url)
    pool = {"GOLF_POOL_SIZE": "1", "GOLF_POOL_LIBRARY": "1", "GOLF_POOL_PRESETS": "wrap"}
    srv = Server(database_url, tmp_path, extra_env=pool).start()
    try:
        deadline = time.monotonic() + POOL_WAIT_SECONDS
        rows = pool_rows(database_url)
        while not rows and time.monotonic() < deadline:
            time.sleep(0.1)
            rows = pool_rows(database_url)
        assert rows, f"the pool did not fill:\n{srv.log_text()}"
    finally:
        assert srv.stop() == 0, srv.log_text()
    level = rows[0][0]
    srv.extra_env = {**pool, "GOLF_POOL_SIZE": "0"}
    srv.start()
    try:
        yield srv, level
    finally:
        assert srv.stop() == 0, srv.log_text()


def test_a_pool_deal_dealt_again_stays_hidden_while_in_the_pool(pool_server: tuple[Server, str]) -> None:
    server, level = pool_server
    difficulty = next(d for d, name in LEVELS.items() if name == level)
    a, b, c = (Account.new(server) for _ in range(3))
    try:
        ask = pb.CreateGameRequest(preset="wrap", difficulty=difficulty)  # type: ignore[arg-type]
        first = a.rest.create_game(ask).expect_ok().game
        assert first.ranked and not first.practice
        a_final = play_out(a.rest, first)
        # B is dealt the same pool deal (the only one of that difficulty, no longer held by a game in progress).
        again = b.grpc.create_game(ask).expect_ok().game
        assert again.deal_id == a_final.deal_id and again.ranked and again.status == IN_PROGRESS
        shown = Shown.of(a, a_final.id)
        entry, board = board_entry(b.grpc, a.player_id, kind=rpb.LEADERBOARD_KIND_DEAL, deal_id=a_final.deal_id)
        assert entry.record_id == a_final.id and entry.score == a_final.score
        seen = [board, *b.refused(entry.record_id), *c.refused(entry.record_id)]
        seen += history_and_deal(b, a.player_id, a_final.deal_id)
        for viewer in (b, c):
            shown.not_exported_to(viewer)
        # B's game ends: the deal is still in the pool (it may be dealt to C next), so each game is its player's.
        b_final = play_out(b.grpc, again)
        seen += b.refused(a_final.id) + c.refused(a_final.id)
        for viewer in (b, c):
            shown.not_exported_to(viewer)
        shown.scan(seen)
        Shown.of(b, b_final.id).scan(a.refused(b_final.id) + c.refused(b_final.id))
        third = c.connect.call(SOLITAIRE, "CreateGame", ask, pb.CreateGameResponse).expect_ok().game
        assert third.deal_id == a_final.deal_id and third.ranked
    finally:
        for account in (a, b, c):
            account.close()
