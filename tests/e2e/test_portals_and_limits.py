"""Servers configured for portals and rate limits, over both transports and both databases: a portal's players
signed in by the portal's own tokens (a PEM key and a JWKS URL, key pairs made here), and rate limits that answer
RATE_LIMITED (429 with Retry-After, RESOURCE_EXHAUSTED with RetryInfo) and then let calls in again, counted in this
process or shared by two servers through Redis."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from tests.e2e.identity import new_client, quick_game
from tests.e2e.support import Client, R, Server, migrate, new_key, pb

PEM_ISSUER, JWKS_ISSUER = "https://portal.example", "https://other-portal.example"
AUDIENCE = "golf-for-portals"


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture(scope="module")
def jwks_url(ec_key: ec.EllipticCurvePrivateKey) -> Iterator[str]:
    """The second portal's JWK set, served on 127.0.0.1 from a thread."""
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(ec_key.public_key()))
    body = json.dumps({"keys": [{**jwk, "kid": "portal-key-1", "use": "sig", "alg": "ES256"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: Any) -> None:
            pass

    httpd = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/.well-known/jwks.json"
    httpd.shutdown()


def _portal_token(key: Any, issuer: str, sub: str, **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": issuer, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 300, **claims}
    if isinstance(key, rsa.RSAPrivateKey):
        return jwt.encode(body, key, algorithm="RS256")
    return jwt.encode(body, key, algorithm="ES256", headers={"kid": "portal-key-1"})


@pytest.fixture
def portal_server(database_url: str, tmp_path: Path, rsa_key: rsa.RSAPrivateKey, jwks_url: str) -> Iterator[Server]:
    pem = rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    issuers = [
        {"issuer": PEM_ISSUER, "audience": AUDIENCE, "public_key": pem.decode(), "algorithms": ["RS256"]},
        {"issuer": JWKS_ISSUER, "audience": AUDIENCE, "jwks_url": jwks_url, "algorithms": ["ES256"]},
    ]
    migrate(database_url)
    srv = Server(database_url, tmp_path, extra_env={"GOLF_TRUSTED_ISSUERS": json.dumps(issuers)}).start()
    yield srv
    assert srv.stop() == 0, srv.log_text()


@pytest.mark.parametrize("transport", ["rest", "grpc"])
def test_portal_tokens_sign_their_players_in(
    portal_server: Server,
    transport: str,
    rsa_key: rsa.RSAPrivateKey,
    ec_key: ec.EllipticCurvePrivateKey,
) -> None:
    client = new_client(portal_server, transport, sign_in=False)
    try:
        client.use_token(_portal_token(rsa_key, PEM_ISSUER, "user-1", name="Uma"))
        uma = client.get_player("me").expect_ok().player
        assert uma.display_name == "Uma"
        game = quick_game(client)
        # A new token for the same subject is the same player, on either transport: the game is theirs.
        again = new_client(portal_server, "grpc" if transport == "rest" else "rest", sign_in=False)
        again.use_token(_portal_token(rsa_key, PEM_ISSUER, "user-1"))
        assert again.get_game(game.id).expect_ok().game.player_id == uma.id
        again.close()
        # Another subject, or the same subject at another portal, is another player.
        client.use_token(_portal_token(rsa_key, PEM_ISSUER, "user-2"))
        assert client.get_player("me").expect_ok().player.id != uma.id
        client.get_game(game.id).expect_error(R.ERROR_REASON_NOT_FOUND)
        client.use_token(_portal_token(ec_key, JWKS_ISSUER, "user-1"))
        assert client.get_player("me").expect_ok().player.id != uma.id
        # A guest token works beside them.
        guest = new_client(portal_server, transport)
        assert guest.get_player("me").expect_ok().player.id == guest.player_id
        guest.close()
        # Refused: expired, wrong audience, signed by a key the portal does not have, HS256 with the public key.
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = int(time.time())
        bad = [
            _hs256_with_public_key(rsa_key, {"iss": PEM_ISSUER, "aud": AUDIENCE, "sub": "user-1", "exp": now + 300}),
            _portal_token(rsa_key, PEM_ISSUER, "user-1", exp=now - 600, iat=now - 900),
            _portal_token(rsa_key, PEM_ISSUER, "user-1", aud="someone-else"),
            _portal_token(other, PEM_ISSUER, "user-1"),
            _portal_token(ec.generate_private_key(ec.SECP256R1()), JWKS_ISSUER, "user-1"),
        ]
        for token in bad:
            client.use_token(token)
            client.get_player("me").expect_error(R.ERROR_REASON_UNAUTHENTICATED)
    finally:
        client.close()


def _hs256_with_public_key(key: rsa.RSAPrivateKey, claims: dict[str, Any]) -> str:
    """The algorithm-confusion attack: HS256 "signed" with the portal's public PEM as the secret (PyJWT will not
    make one, so it is made by hand)."""
    pem = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    head = part(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + part(json.dumps(claims).encode())
    return head + "." + part(hmac.new(pem, head.encode(), hashlib.sha256).digest())


LIMITS = {
    "GOLF_RATE_LIMIT_PLAYER": "4/second",
    "GOLF_RATE_LIMIT_SOLVER": "2/minute",
    "GOLF_RATE_LIMIT_CREATE": "3/minute",
    "GOLF_RATE_LIMIT_SIGN_IN": "4/minute",
}


@pytest.fixture
def limited_server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    migrate(database_url)
    srv = Server(database_url, tmp_path, extra_env=LIMITS).start()
    yield srv
    assert srv.stop() == 0, srv.log_text()


def _refused(reply: Any, at_least: float, at_most: float) -> float:
    reply.expect_error(R.ERROR_REASON_RATE_LIMITED)
    delay = reply.retry_delay()
    assert delay is not None and at_least <= delay <= at_most, delay
    assert reply.error.retry_delay.ToTimedelta().total_seconds() > 0
    return float(delay)


def test_rate_limits_refuse_then_let_calls_in_again(limited_server: Server) -> None:
    rest, grpc_client = new_client(limited_server, "rest"), new_client(limited_server, "grpc")
    try:
        for client in (rest, grpc_client):
            # Creating: three a minute per player. (Each step makes at most four calls, then waits for the
            # per-second limit's window to pass.)
            # Standard layouts: the solver decides them in milliseconds (a wide layout could take it seconds).
            new = pb.CreateGameRequest(preset="standard", winnable_only=False)
            games = [client.create_game(new).expect_ok().game for _ in range(3)]
            _refused(client.create_game(pb.CreateGameRequest(preset="wrap", winnable_only=False)), 1, 60)
            time.sleep(1.1)
            # Solver searches: two a minute; a retried hint is its stored answer, not a new search.
            first = pb.HintRequest(game_id=games[0].id, idempotency_key=new_key())
            client.hint(first).expect_ok()
            client.hint(pb.HintRequest(game_id=games[0].id, idempotency_key=new_key())).expect_ok()
            assert client.hint(first).expect_ok().replayed
            _refused(client.hint(pb.HintRequest(game_id=games[1].id, idempotency_key=new_key())), 1, 60)
            # Every call: four a second per player; then it lets calls in again.
            time.sleep(1.1)
            replies = [client.get_game(games[0].id) for _ in range(4)]
            assert all(r.ok for r in replies), [r.raw for r in replies]
            # Calls go on until one is refused (on a slow machine the window may let a fifth one in).
            refused = next(r for r in (client.get_game(games[0].id) for _ in range(40)) if not r.ok)
            delay = _refused(refused, 0.001, 1.0)
            time.sleep(delay + 0.05)
            client.get_game(games[0].id).expect_ok()
        # Signing in: four a minute per address (both clients above were two); both transports share it.
        new_client(limited_server, "rest").close()
        new_client(limited_server, "grpc").close()
        _refused(rest.create_guest(pb_guest()), 1, 60)
        _refused(grpc_client.create_guest(pb_guest()), 1, 60)
    finally:
        rest.close()
        grpc_client.close()


def pb_guest() -> Any:
    from golf.v1 import player_service_pb2

    return player_service_pb2.CreateGuestRequest()


def test_replicas_share_limits_through_redis(database_url: str, tmp_path: Path, redis_url: str) -> None:
    migrate(database_url)
    env = {"GOLF_REDIS_URL": redis_url, "GOLF_REDIS_PREFIX": f"golf-e2e-{secrets.token_hex(6)}"}
    env["GOLF_RATE_LIMIT_CREATE"] = "3/minute"
    servers = [Server(database_url, tmp_path / name, extra_env=env) for name in ("a", "b")]
    for srv in servers:
        srv.log_dir.mkdir()
        srv.start()
    clients: list[Client] = []
    try:
        one = new_client(servers[0], "rest")
        other = new_client(servers[1], "grpc", as_=one)  # the same player, on the other replica
        clients += [one, other]
        quick_game(one)
        quick_game(one)
        quick_game(other)
        _refused(other.create_game(pb.CreateGameRequest(preset="wrap", winnable_only=False)), 1, 60)
        _refused(one.create_game(pb.CreateGameRequest(preset="wrap", winnable_only=False)), 1, 60)
    finally:
        for client in clients:
            client.close()
        for srv in servers:
            assert srv.stop() == 0, srv.log_text()
