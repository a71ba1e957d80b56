"""Players over both transports and both databases: signing in, tokens refused, who may read and play what, deals
kept private while they are played, practice games, the caller's own lists."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest

from golf.v1 import player_service_pb2, solitaire_pb2
from tests.e2e.identity import finish, new_client, own_token, quick_game
from tests.e2e.support import Client, Grpc, R, Rest, Server, choose_move, move_request, new_key, pb

DONE = (solitaire_pb2.GAME_STATUS_WON, solitaire_pb2.GAME_STATUS_LOST)


@pytest.fixture(params=["rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def ann(server: Server, transport: str) -> Iterator[Client]:
    client = new_client(server, transport, display_name="Ann")
    yield client
    client.close()


@pytest.fixture
def bob(server: Server, transport: str) -> Iterator[Client]:
    client = new_client(server, transport, display_name="Bob")
    yield client
    client.close()


def test_guest_signs_in_again_with_its_refresh_token(server: Server, ann: Client, transport: str) -> None:
    me = ann.get_player("me").expect_ok().player
    assert me.id == ann.player_id and me.display_name == "Ann"
    device = new_client(server, transport, sign_in=False)
    try:
        again = device.refresh_access(ann.refresh_token).expect_ok()
        assert again.player.id == ann.player_id and again.credentials.token_type == "Bearer"
        assert not again.credentials.refresh_token  # the device keeps the one it has
        device.use_token(again.credentials.access_token)
        assert device.get_player("me").expect_ok().player.id == ann.player_id
        # Signing the device out: the refresh token stops working, twice revoking is fine.
        device.revoke(ann.refresh_token).expect_ok()
        device.revoke(ann.refresh_token).expect_ok()
        device.refresh_access(ann.refresh_token).expect_error(R.ERROR_REASON_UNAUTHENTICATED)
        device.refresh_access("not-a-token").expect_error(R.ERROR_REASON_UNAUTHENTICATED)
        device.revoke("not-a-token").expect_error(R.ERROR_REASON_UNAUTHENTICATED)
        assert device.refresh_access("").expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "refreshToken"
    finally:
        device.close()


def test_profiles(ann: Client, bob: Client) -> None:
    assert ann.get_player(bob.player_id).expect_ok().player.display_name == "Bob"
    ann.get_player("00000000-0000-0000-0000-000000000000").expect_error(R.ERROR_REASON_NOT_FOUND)
    bad = ann.create_guest(player_service_pb2.CreateGuestRequest(display_name="x" * 65))
    assert bad.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "displayName"


@pytest.mark.parametrize(
    "why",
    ["missing", "not bearer", "garbage", "other key", "expired", "wrong audience", "unknown issuer", "alg none"],
)
def test_bad_tokens_are_refused(server: Server, transport: str, why: str) -> None:
    client = new_client(server, transport)
    player = client.player_id
    tokens = {
        "missing": None,
        "garbage": "a.b.c",
        "other key": _signed({"sub": player}, b"another-key-that-is-long-enough-for-hs256!!"),
        "expired": own_token(server, player, exp=int(time.time()) - 120, iat=int(time.time()) - 720),
        "wrong audience": own_token(server, player, aud="someone-else"),
        "unknown issuer": own_token(server, player, iss="https://evil.example"),
        "alg none": _unsigned(player),
    }
    try:
        if why == "not bearer":
            if isinstance(client, Rest):
                client.http.headers["authorization"] = f"Basic {client.token}"
            else:
                client.metadata = (("authorization", f"Basic {client.token}"),)
        else:
            client.use_token(tokens[why])
        reply = client.list_games()
        error = reply.expect_error(R.ERROR_REASON_UNAUTHENTICATED)
        assert "eyJ" not in reply.raw  # no token is echoed back
        if isinstance(client, Rest):
            challenge = reply.headers["www-authenticate"]
            assert challenge.startswith('Bearer realm="golf"')
            assert ('error="invalid_token"' in challenge) == (why != "missing"), challenge
        if why == "expired":
            assert "expired" in error.message
    finally:
        client.close()


def _signed(claims: dict[str, object], key: bytes) -> str:
    now = int(time.time())
    return jwt_encode({"iss": "golf", "aud": "golf", "iat": now, "exp": now + 600, **claims}, key)


def jwt_encode(claims: dict[str, object], key: bytes) -> str:
    import jwt

    return jwt.encode(claims, key, algorithm="HS256")


def _unsigned(player: str) -> str:
    import base64
    import json

    def part(obj: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    now = int(time.time())
    claims = {"iss": "golf", "aud": "golf", "sub": player, "iat": now, "exp": now + 600}
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def test_open_endpoints_need_no_token(server: Server) -> None:
    for path in ("/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"):
        assert httpx.get(server.http_url + path, timeout=10).status_code == 200, path


def test_another_players_game_in_progress_does_not_exist_for_them(ann: Client, bob: Client) -> None:
    game = quick_game(ann)
    assert game.player_id == ann.player_id and not game.practice
    move = move_request(game, choose_move(game))
    for reply in (
        bob.get_game(game.id),
        bob.list_moves(game.id),
        bob.play_move(move),
        bob.hint(pb.HintRequest(game_id=game.id, idempotency_key=new_key())),
        bob.undo(pb.UndoRequest(game_id=game.id, idempotency_key=new_key())),
        bob.auto_play(pb.AutoPlayRequest(game_id=game.id, idempotency_key=new_key())),
    ):
        error = reply.expect_error(R.ERROR_REASON_NOT_FOUND)
        assert not error.HasField("game")
    # Ann's game is untouched, and bob's own list does not show it.
    assert ann.get_game(game.id).expect_ok().game.version == 0
    assert game.id not in {g.id for g in bob.list_games(page_size=100).expect_ok().games}


def test_a_finished_game_is_shared_read_only(ann: Client, bob: Client) -> None:
    game = finish(ann, quick_game(ann))
    seen = bob.get_game(game.id).expect_ok().game
    assert seen.status in DONE and seen.reveal.seed and seen.player_id == ann.player_id
    assert len(bob.list_moves(game.id).expect_ok().moves) == game.version
    undo = bob.undo(pb.UndoRequest(game_id=game.id, idempotency_key=new_key()))
    undo.expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    bob.hint(pb.HintRequest(game_id=game.id, idempotency_key=new_key())).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    draw = solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock())
    bob.play_move(move_request(game, draw)).expect_error(R.ERROR_REASON_PERMISSION_DENIED)


def test_a_deal_in_play_cannot_be_copied_by_anyone(ann: Client, bob: Client) -> None:
    game = quick_game(ann)
    assert ann.get_deal(game.deal_id).expect_ok().deal.seed_source == solitaire_pb2.SEED_SOURCE_SERVER
    # The copy attack: a second game on the deal would show the stock in order. Nobody may start one, not even
    # the owner (a second account is just another player), and the answer is the one for an unknown deal.
    for client in (bob, ann):
        client.create_game(pb.CreateGameRequest(deal_id=game.deal_id)).expect_error(R.ERROR_REASON_NOT_FOUND)
    unknown = bob.create_game(pb.CreateGameRequest(deal_id="00000000-0000-0000-0000-000000000000"))
    assert unknown.expect_error(R.ERROR_REASON_NOT_FOUND)
    finish(ann, game)
    # Once it is over its seed is revealed anyway: anyone may play it; the owner's second game is practice.
    replay = ann.create_game(pb.CreateGameRequest(deal_id=game.deal_id)).expect_ok().game
    assert replay.practice
    # ... and that replay now holds the deal in its turn.
    bob.create_game(pb.CreateGameRequest(deal_id=game.deal_id)).expect_error(R.ERROR_REASON_NOT_FOUND)
    finish(ann, replay)
    first = bob.create_game(pb.CreateGameRequest(deal_id=game.deal_id)).expect_ok().game
    assert not first.practice and first.player_id == bob.player_id


def test_public_deals_are_playable_by_many_at_once(ann: Client, bob: Client) -> None:
    for req in (pb.CreateDealRequest(seed="shared-seed"), pb.CreateDealRequest(pysol_deal_number=7)):
        deal = ann.create_deal(req).expect_ok().deal
        assert deal.seed_source in (solitaire_pb2.SEED_SOURCE_CLIENT, solitaire_pb2.SEED_SOURCE_PYSOL)
        games = [c.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game for c in (ann, bob, ann)]
        assert [g.practice for g in games] == [False, False, True]


def test_the_daily_deal_is_played_by_everyone_and_scored_once(ann: Client, bob: Client) -> None:
    today = datetime.now(UTC).date().isoformat()
    deal = ann.get_daily_deal(today, "wrap").expect_ok().deal
    games = [c.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game for c in (ann, bob, ann)]
    assert [g.practice for g in games] == [False, False, True]


def test_lists_are_the_callers_own_with_filters(ann: Client, bob: Client) -> None:
    mine = [quick_game(ann) for _ in range(3)]
    over = finish(ann, mine[0])
    quick_game(bob)
    listed = ann.list_games(page_size=2).expect_ok()
    assert len(listed.games) == 2 and listed.next_page_token
    rest = ann.list_games(page_size=100, page_token=listed.next_page_token).expect_ok()
    ids = [g.id for g in listed.games] + [g.id for g in rest.games]
    assert {g.id for g in mine} <= set(ids) and all(g.player_id == ann.player_id for g in rest.games)
    finished = ann.list_games_where(pb.ListGamesRequest(status=over.status, page_size=100)).expect_ok().games
    assert [g.id for g in finished] == [over.id]
    custom = ann.list_games_where(pb.ListGamesRequest(preset="custom", page_size=100)).expect_ok().games
    assert {g.id for g in custom} == {g.id for g in mine}
    assert not ann.list_games_where(pb.ListGamesRequest(preset="wrap", page_size=100)).expect_ok().games
    later = pb.ListGamesRequest(page_size=100)
    later.created_after.FromSeconds(int(time.time()) + 3600)
    assert not ann.list_games_where(later).expect_ok().games
    # Another player's page token pages through that player's own games only.
    assert not {g.id for g in bob.list_games(page_size=100, page_token=listed.next_page_token).expect_ok().games} & {
        g.id for g in mine
    }


def test_rounds_belong_to_their_player(ann: Client, bob: Client) -> None:
    req = pb.CreateRoundRequest(preset="standard", winnable_only=False)
    req.rules.columns, req.rules.column_height = 20, 2
    made = ann.create_round(req).expect_ok()
    assert made.round.player_id == ann.player_id
    bob.get_round(made.round.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    bob.start_next_hole(made.round.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    rounds = ann.list_rounds(pb.ListRoundsRequest(status=solitaire_pb2.ROUND_STATUS_IN_PROGRESS)).expect_ok().rounds
    assert made.round.id in {r.id for r in rounds}
    assert not bob.list_rounds(pb.ListRoundsRequest()).expect_ok().rounds
    finished = ann.list_rounds(pb.ListRoundsRequest(status=solitaire_pb2.ROUND_STATUS_FINISHED)).expect_ok().rounds
    assert made.round.id not in {r.id for r in finished}


def test_grpc_and_rest_are_the_same_player_with_the_same_token(server: Server) -> None:
    rest = Rest(server.http_url)
    grpc_client = Grpc(server.grpc_target, as_=rest)
    try:
        game = quick_game(grpc_client)
        assert rest.get_game(game.id).expect_ok().game.player_id == rest.player_id
    finally:
        rest.close()
        grpc_client.close()


@pytest.mark.parametrize(
    ("call", "field"),
    [
        ("list_games", "preset"),
        ("get_player", "playerId"),
        ("get_game", "gameId"),
        ("create_deal", "seed"),
        ("play_move", "idempotencyKey"),
        ("list_rounds", "preset"),
    ],
)
def test_a_nul_character_is_refused_on_both_databases(ann: Client, call: str, field: str) -> None:
    """PostgreSQL cannot hold a NUL in text and SQLite can: both refuse it as invalid, naming the field."""
    nul = "a\x00b"
    in_path = "a%00b" if isinstance(ann, Rest) else nul  # a URL carries it percent-encoded
    if call == "list_games":
        reply = ann.list_games_where(pb.ListGamesRequest(preset=nul))
    elif call == "get_player":
        reply = ann.get_player(in_path)
    elif call == "get_game":
        reply = ann.get_game(in_path)
    elif call == "create_deal":
        reply = ann.create_deal(pb.CreateDealRequest(seed=nul))
    elif call == "play_move":
        game = quick_game(ann)
        reply = ann.play_move(move_request(game, choose_move(game), key=nul))
    else:
        reply = ann.list_rounds(pb.ListRoundsRequest(preset=nul))
    assert reply.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == field
