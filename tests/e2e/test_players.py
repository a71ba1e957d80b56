"""Players over both transports and both databases: signing in, tokens refused, who may read and play what, deals
kept private while they are played, practice games, the caller's own lists; the checks of a token beyond its
signature (two authorization values, a deleted player, a portal's JWK set rotated or hanging)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import grpc
import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from google.protobuf import json_format

from golf.v1 import (
    player_service_pb2,
    player_service_pb2_grpc,
    solitaire_pb2,
    webhook_service_pb2,
    webhook_service_pb2_grpc,
)
from tests.e2e.identity import delete_player, finish, new_client, own_token, portal_token, quick_game
from tests.e2e.support import Client, Grpc, R, Rest, Server, ServiceCalls, choose_move, move_request, new_key, pb
from tests.e2e.tables import Tables
from tests.jwks_server import JwksServer, jwk

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


def test_a_finished_game_is_shared_read_only_once_its_deal_is_out_of_play(ann: Client, bob: Client) -> None:
    game = finish(ann, quick_game(ann))
    # Its deal, made for it, may be started by its id for good: its cards stay Ann's (golf.app.reveals).
    bob.get_game(game.id).expect_error(R.ERROR_REASON_DEAL_IN_PLAY)
    bob.list_moves(game.id).expect_error(R.ERROR_REASON_DEAL_IN_PLAY)
    undo = bob.undo(pb.UndoRequest(game_id=game.id, idempotency_key=new_key()))
    undo.expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    bob.hint(pb.HintRequest(game_id=game.id, idempotency_key=new_key())).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    draw = solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock())
    bob.play_move(move_request(game, draw)).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    # The daily deal of two days ago closed a day ago (past the grace): its finished games are anyone's to read,
    # not to change.
    two_days_ago = (datetime.now(UTC).date() - timedelta(days=2)).isoformat()
    deal = ann.get_daily_deal(two_days_ago, "wrap").expect_ok().deal
    past = finish(ann, ann.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game)
    seen = bob.get_game(past.id).expect_ok().game
    assert seen.status in DONE and seen.reveal.seed and seen.player_id == ann.player_id
    assert len(bob.list_moves(past.id).expect_ok().moves) == past.version
    bob.play_move(move_request(past, draw)).expect_error(R.ERROR_REASON_PERMISSION_DENIED)


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


# Two authorization values: REST read the first, gRPC the last. Whichever one is valid, the call is refused.

TWO_VALUES = "the request carries 2 'authorization' values; send one: 'Bearer <access token>'"


def test_two_authorization_values_are_refused_over_rest_and_connect(server: Server) -> None:
    ann, bob = Rest(server.http_url), Rest(server.http_url)
    try:
        for first, second in ((ann.token, bob.token), (ann.token, "not-a-token"), (ann.token, ann.token)):
            values = [("authorization", f"Bearer {first}"), ("authorization", f"Bearer {second}")]
            rest = httpx.get(f"{server.http_url}/v1/players/me", headers=values, timeout=30)
            assert rest.status_code == 401, rest.text
            assert rest.json()["message"] == TWO_VALUES and rest.json()["reason"] == "ERROR_REASON_UNAUTHENTICATED"
            assert rest.headers["www-authenticate"].startswith('Bearer realm="golf", error="invalid_token"')
            body = json_format.MessageToJson(player_service_pb2.GetPlayerRequest(player_id="me")).encode()
            connect_headers = [("connect-protocol-version", "1"), ("content-type", "application/json"), *values]
            connect = httpx.post(
                f"{server.http_url}/golf.v1.PlayerService/GetPlayer", content=body, headers=connect_headers, timeout=30
            )
            assert connect.status_code == 401, connect.text
            assert connect.json()["code"] == "unauthenticated" and connect.json()["message"] == TWO_VALUES
        assert ann.get_player("me").expect_ok().player.id == ann.player_id  # one value is fine
    finally:
        ann.close()
        bob.close()


def test_two_authorization_values_are_refused_over_grpc(server: Server) -> None:
    ann, bob = Grpc(server.grpc_target), Grpc(server.grpc_target)
    try:
        players = player_service_pb2_grpc.PlayerServiceStub(ann.channel)
        metadata = (("authorization", f"Bearer {bob.token}"), ("authorization", f"Bearer {ann.token}"))
        with pytest.raises(grpc.RpcError) as caught:
            players.GetPlayer(player_service_pb2.GetPlayerRequest(player_id="me"), metadata=metadata, timeout=30)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert caught.value.details() == TWO_VALUES
        assert ann.get_player("me").expect_ok().player.id == ann.player_id
    finally:
        ann.close()
        bob.close()


# A server that asks the database about every call's player, and trusts two portals by their JWK sets: one that
# rotates its keys (its set kept 1 s), one whose endpoint hangs (a fetch given up after 1 s).

ROTATING, HANGING = "https://rotating.example", "https://hanging.example"


@pytest.fixture(scope="module")
def portal_keys() -> list[ec.EllipticCurvePrivateKey]:
    return [ec.generate_private_key(ec.SECP256R1()) for _ in range(3)]


@pytest.fixture(scope="module")
def endpoints(portal_keys: list[ec.EllipticCurvePrivateKey]) -> Iterator[dict[str, JwksServer]]:
    made = {ROTATING: JwksServer(jwk(portal_keys[0], "r1")), HANGING: JwksServer(jwk(portal_keys[2], "h1"))}
    yield made
    for endpoint in made.values():
        endpoint.close()


@pytest.fixture(scope="module")
def checking_server(
    server: Server, tmp_path_factory: pytest.TempPathFactory, endpoints: dict[str, JwksServer]
) -> Iterator[Server]:
    """A second server on the module's database (a replica of ``server``, which migrated it) with those settings."""
    issuers = [
        {"issuer": ROTATING, "audience": "golf", "jwks_url": endpoints[ROTATING].url, "jwks_refresh_seconds": 1},
        {"issuer": HANGING, "audience": "golf", "jwks_url": endpoints[HANGING].url, "jwks_timeout_seconds": 1},
    ]
    env = {"GOLF_TRUSTED_ISSUERS": json.dumps(issuers), "GOLF_TOKEN_PLAYER_CHECK_SECONDS": "0"}
    log_dir: Path = tmp_path_factory.mktemp("checking-server")
    srv = Server(server.database_url, log_dir, extra_env=env).start()
    yield srv
    assert srv.stop() == 0, srv.log_text()


def test_a_deleted_players_token_stops_working(checking_server: Server, transport: str) -> None:
    client = new_client(checking_server, transport)
    webhooks = ServiceCalls(
        client,
        webhook_service_pb2.DESCRIPTOR.services_by_name["WebhookService"],
        webhook_service_pb2,
        webhook_service_pb2_grpc.WebhookServiceStub,
    )
    try:
        quick_game(client)
        delete_player(checking_server, client.player_id)
        # Before: games, tables, quick play seats and webhooks owned by an id no longer there.
        for reply in (
            client.create_game(pb.CreateGameRequest(preset="standard")),
            client.list_games(),
            Tables(client).create(),
            Tables(client).quick_play(),
            webhooks.call("CreateWebhook", webhook_service_pb2.CreateWebhookRequest(url="https://hooks.example/x")),
        ):
            error = reply.expect_error(R.ERROR_REASON_UNAUTHENTICATED)
            assert error.message == "the token's player no longer exists; create a guest or sign in again"
        client.refresh_access(client.refresh_token).expect_error(R.ERROR_REASON_UNAUTHENTICATED)
    finally:
        client.close()


def test_a_key_the_portal_rotates_away_stops_signing_in_after_jwks_refresh_seconds(
    checking_server: Server, endpoints: dict[str, JwksServer], portal_keys: list[ec.EllipticCurvePrivateKey]
) -> None:
    """GOLF_TRUSTED_ISSUERS asks for 1 s; the set was kept 300 s whatever it asked."""
    endpoints[ROTATING].serve(jwk(portal_keys[0], "r1"))  # the endpoints serve both databases' servers
    client = Rest(checking_server.http_url, sign_in=False)
    try:
        client.use_token(portal_token(portal_keys[0], ROTATING, "r1"))
        assert client.get_player("me").expect_ok().player.id
        endpoints[ROTATING].serve(jwk(portal_keys[1], "r2"))  # r1 revoked
        deadline = time.monotonic() + 20  # 1 s asked for; generous for a busy machine
        while True:
            client.use_token(portal_token(portal_keys[0], ROTATING, "r1"))
            reply = client.get_player("me")
            if reply.error is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        error = reply.expect_error(R.ERROR_REASON_UNAUTHENTICATED)
        assert error.message == f"the token's signing key is not among the keys of issuer {ROTATING}"
        client.use_token(portal_token(portal_keys[1], ROTATING, "r2"))
        assert client.get_player("me").expect_ok().player.id
    finally:
        client.close()


def test_a_hanging_jwks_endpoint_costs_one_fetch_and_a_bounded_wait(
    checking_server: Server, endpoints: dict[str, JwksServer], portal_keys: list[ec.EllipticCurvePrivateKey]
) -> None:
    """Tokens naming made-up kids and the portal's own, while its endpoint hangs: before, the fetches queued one at
    a time, 5 s each, for over a minute; now they wait for one fetch, given up after jwks_timeout_seconds."""
    hanging = endpoints[HANGING]
    before = hanging.requests
    hanging.hold()
    tokens = [portal_token(portal_keys[2], HANGING, f"made-up-{i}", sub=f"u{i}") for i in range(8)]
    tokens.append(portal_token(portal_keys[2], HANGING, "h1"))

    def sign_in(token: str) -> httpx.Response:
        headers = {"authorization": f"Bearer {token}"}
        return httpx.get(f"{checking_server.http_url}/v1/players/me", headers=headers, timeout=30)

    try:
        with ThreadPoolExecutor(len(tokens)) as pool:
            replies = list(pool.map(sign_in, tokens))
    finally:
        hanging.release()
    unavailable = f"the signing keys of issuer {HANGING} could not be fetched; try again later"
    assert [(r.status_code, r.json()["message"]) for r in replies] == [(401, unavailable)] * len(tokens)
    assert hanging.requests == before + 1
