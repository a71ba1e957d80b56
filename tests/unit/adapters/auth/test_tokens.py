"""Tokens: signing our own access tokens and checking bearer tokens, ours and trusted portals' (PEM and JWKS)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import UTC
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import RSAAlgorithm

from golf.adapters.auth.tokens import SIGN_IN_FIRST, Tokens, TrustedIssuer
from golf.app.errors import Unauthenticated
from golf.app.identity import OWN_ISSUER, Caller
from tests.unit.adapters.auth.token_helpers import KEY, PORTAL, Clock, Resolver, claims, own, pem


@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tokens(clock: Clock) -> Tokens:
    return Tokens(KEY, issuer="golf", audience="golf", access_seconds=3600, clock=clock)


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def forge(header: dict[str, Any], payload: dict[str, Any], secret: bytes | None) -> str:
    """A token made by hand: PyJWT refuses to HMAC-sign with a PEM, which is the attack we want to show refused."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(payload).encode())}"
    signature = b"" if secret is None else hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return f"{signing_input}.{b64(signature)}"


async def refused(tokens: Tokens, authorization: str | None) -> Unauthenticated:
    with pytest.raises(Unauthenticated) as caught:
        await tokens.verify(authorization)
    return caught.value


def count_decodes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls of ``jwt.decode`` (the unverified read and the signature check both go through it)."""
    calls = [0]
    real = jwt.decode

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(jwt, "decode", counting)
    return calls


# Our own tokens


async def test_issue_then_verify_round_trip(tokens: Tokens, clock: Clock) -> None:
    access = tokens.issue("player-1")
    assert access.expires_at.tzinfo is UTC
    assert access.expires_at.timestamp() == int(clock.now) + 3600
    caller = await tokens.verify(f"Bearer {access.token}")
    assert caller == Caller(player_id="player-1", issuer=OWN_ISSUER, scopes=frozenset({"play"}))
    claims_ = jwt.decode(access.token, KEY, algorithms=["HS256"], audience="golf")
    assert claims_["iss"] == "golf" and claims_["sub"] == "player-1" and claims_["scope"] == "play"
    assert claims_["exp"] - claims_["iat"] == 3600
    assert tokens.issue("player-1").token != access.token  # a random jti tells two tokens of one second apart


async def test_scheme_is_case_insensitive(tokens: Tokens) -> None:
    caller = await tokens.verify(f"bEaReR {tokens.issue('p9').token}")
    assert caller.player_id == "p9"


@pytest.mark.parametrize("authorization", [None, ""])
async def test_missing_token_asks_to_sign_in(tokens: Tokens, authorization: str | None) -> None:
    error = await refused(tokens, authorization)
    assert error.message == SIGN_IN_FIRST
    assert error.invalid_token is False


@pytest.mark.parametrize("authorization", ["Basic dXNlcjpwdw==", "Bearer", "Bearer a.b.c extra", "a.b.c", "   "])
async def test_not_a_bearer_token(tokens: Tokens, authorization: str) -> None:
    error = await refused(tokens, authorization)
    assert error.invalid_token is True
    assert "'Bearer <access token>'" in error.message


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        ("not-a-jwt", "three base64url segments"),
        ("a.b", "three base64url segments"),
        ("a+b.c/d.e", "three base64url segments"),
        ("bm90anNvbg.eyJhIjoxfQ.c2ln", "cannot be decoded"),  # header is base64 of "notjson"
        (f"{b64(b'{}')}.bm90anNvbg.c2ln", "cannot be decoded"),  # claims are not JSON
    ],
)
async def test_garbage_is_refused_without_echoing_it(tokens: Tokens, token: str, reason: str) -> None:
    error = await refused(tokens, f"Bearer {token}")
    assert reason in error.message
    assert error.invalid_token is True
    assert all(part not in error.message for part in token.split(".") if len(part) > 2)


async def test_too_long_token(tokens: Tokens) -> None:
    error = await refused(tokens, "Bearer " + "a" * 8193)
    assert "longer than 8192" in error.message


async def test_bad_signature(tokens: Tokens, clock: Clock) -> None:
    token = jwt.encode(claims(clock.now), b"another-key-of-at-least-thirty-two-bytes", algorithm="HS256")
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == "the token's signature does not match its issuer's key"
    assert token.split(".")[2] not in error.message


async def test_expired(tokens: Tokens, clock: Clock) -> None:
    error = await refused(tokens, f"Bearer {own(clock.now, exp=int(clock.now) - 31)}")
    assert error.message == "the access token has expired; refresh it"


async def test_expired_within_leeway_still_passes(tokens: Tokens, clock: Clock) -> None:
    caller = await tokens.verify(f"Bearer {own(clock.now, exp=int(clock.now) - 10)}")
    assert caller.player_id == "p1"


async def test_not_yet_valid(tokens: Tokens, clock: Clock) -> None:
    error = await refused(tokens, f"Bearer {own(clock.now, nbf=int(clock.now) + 600)}")
    assert error.message == "the access token is not valid yet"


async def test_wrong_audience(tokens: Tokens, clock: Clock) -> None:
    error = await refused(tokens, f"Bearer {own(clock.now, aud='someone-else')}")
    assert error.message == "the token is meant for another audience"


async def test_unknown_issuer(tokens: Tokens, clock: Clock) -> None:
    error = await refused(tokens, f"Bearer {own(clock.now, iss='https://evil.example')}")
    assert error.message == "the token's issuer is not trusted"


@pytest.mark.parametrize("claim", ["sub", "exp", "aud"])
async def test_missing_claim_is_named(tokens: Tokens, clock: Clock, claim: str) -> None:
    error = await refused(tokens, f"Bearer {own(clock.now, **{claim: None})}")
    assert error.message == f"the token lacks the '{claim}' claim"


async def test_non_numeric_exp(tokens: Tokens, clock: Clock) -> None:
    error = await refused(tokens, f"Bearer {own(clock.now, exp='tomorrow')}")
    assert "'exp' claim must be a number" in error.message


async def test_alg_none_is_refused(tokens: Tokens, clock: Clock) -> None:
    token = forge({"alg": "none", "typ": "JWT"}, claims(clock.now), secret=None)
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == "unsigned tokens are refused"


async def test_own_issuer_accepts_hs256_only(tokens: Tokens, clock: Clock, rsa_key: rsa.RSAPrivateKey) -> None:
    token = jwt.encode(claims(clock.now), rsa_key, algorithm="RS256")
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == "the token's signing algorithm is not accepted for its issuer"


# The cache


async def test_second_verify_of_a_token_skips_decoding(tokens: Tokens, monkeypatch: pytest.MonkeyPatch) -> None:
    token = tokens.issue("p1").token
    decodes = count_decodes(monkeypatch)
    first = await tokens.verify(f"Bearer {token}")
    after_first = decodes[0]
    assert after_first > 0
    assert await tokens.verify(f"Bearer {token}") == first
    assert decodes[0] == after_first


async def test_cached_token_past_exp_is_checked_again_and_refused(
    tokens: Tokens, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tokens.issue("p1").token
    await tokens.verify(f"Bearer {token}")
    decodes = count_decodes(monkeypatch)
    clock.now += 3600 + 60  # past exp and past the leeway
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == "the access token has expired; refresh it"
    assert decodes[0] > 0


async def test_cached_entry_is_strict_about_exp_and_the_leeway_decides_again(
    tokens: Tokens, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tokens.issue("p1").token
    await tokens.verify(f"Bearer {token}")
    decodes = count_decodes(monkeypatch)
    clock.now += 3600 + 10  # past exp, within the leeway: checked again, and still let in
    assert (await tokens.verify(f"Bearer {token}")).player_id == "p1"
    assert decodes[0] > 0


async def test_failures_are_not_cached(tokens: Tokens, clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    token = own(clock.now, aud="elsewhere")
    decodes = count_decodes(monkeypatch)
    await refused(tokens, f"Bearer {token}")
    after_first = decodes[0]
    await refused(tokens, f"Bearer {token}")
    assert decodes[0] == 2 * after_first


async def test_cache_is_bounded_least_recently_used_first(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> None:
    tokens = Tokens(KEY, issuer="golf", audience="golf", access_seconds=3600, cache_size=2, clock=clock)
    a, b, c = (f"Bearer {tokens.issue(p).token}" for p in ("a", "b", "c"))
    for value in (a, b, a, c):  # c evicts b, the least recently used
        await tokens.verify(value)
    decodes = count_decodes(monkeypatch)
    await tokens.verify(a)
    await tokens.verify(c)
    assert decodes[0] == 0
    await tokens.verify(b)
    assert decodes[0] > 0


# Trusted portals


async def test_trusted_rsa_issuer_by_pem(clock: Clock, rsa_key: rsa.RSAPrivateKey) -> None:
    resolver = Resolver()
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf-game", public_key=pem(rsa_key))
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=resolver, clock=clock)
    portal_claims = claims(clock.now, iss=PORTAL, aud="golf-game", sub="u-42", name="Ada", scope="play chat")
    caller = await tokens.verify(f"Bearer {jwt.encode(portal_claims, rsa_key, algorithm='RS256')}")
    assert caller == Caller(player_id="player-of-u-42", issuer=PORTAL, scopes=frozenset({"play", "chat"}))
    assert resolver.calls == [(PORTAL, "u-42", "Ada")]
    # Another token of the same subject: the player is remembered, not asked for again.
    other = jwt.encode({**portal_claims, "jti": "second"}, rsa_key, algorithm="RS256")
    assert (await tokens.verify(f"Bearer {other}")).player_id == "player-of-u-42"
    assert len(resolver.calls) == 1


async def test_trusted_issuer_wrong_audience(clock: Clock, rsa_key: rsa.RSAPrivateKey) -> None:
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf-game", public_key=pem(rsa_key))
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=Resolver(), clock=clock)
    token = jwt.encode(claims(clock.now, iss=PORTAL, aud="golf"), rsa_key, algorithm="RS256")
    assert (await refused(tokens, f"Bearer {token}")).message == "the token is meant for another audience"


async def test_algorithm_confusion_is_refused(clock: Clock, rsa_key: rsa.RSAPrivateKey) -> None:
    resolver = Resolver()
    public_pem = pem(rsa_key)
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf", public_key=public_pem)
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=resolver, clock=clock)
    # The public key is public: "signing" HS256 with it as the secret must not pass for the portal's signature.
    token = forge({"alg": "HS256", "typ": "JWT"}, claims(clock.now, iss=PORTAL), secret=public_pem.encode())
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == "the token's signing algorithm is not accepted for its issuer"
    assert resolver.calls == []


async def test_trusted_issuer_with_wrong_key(clock: Clock, rsa_key: rsa.RSAPrivateKey) -> None:
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf", public_key=pem(rsa_key))
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=Resolver(), clock=clock)
    impostor = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    token = jwt.encode(claims(clock.now, iss=PORTAL), impostor, algorithm="RS256")
    assert (await refused(tokens, f"Bearer {token}")).message == "the token's signature does not match its issuer's key"


async def test_trusted_ec_issuer(clock: Clock, ec_key: ec.EllipticCurvePrivateKey) -> None:
    resolver = Resolver()
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf", public_key=pem(ec_key), algorithms=("ES256",))
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=resolver, clock=clock)
    token = jwt.encode(
        claims(clock.now, iss=PORTAL, sub="e-1", name=7, preferred_username="eve"), ec_key, algorithm="ES256"
    )
    caller = await tokens.verify(f"Bearer {token}")
    assert caller == Caller(player_id="player-of-e-1", issuer=PORTAL, scopes=frozenset())
    assert resolver.calls == [(PORTAL, "e-1", "eve")]  # name is not a string: preferred_username is used


async def test_display_name_is_none_without_string_claims(clock: Clock, ec_key: ec.EllipticCurvePrivateKey) -> None:
    resolver = Resolver()
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf", public_key=pem(ec_key))
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=resolver, clock=clock)
    await tokens.verify(f"Bearer {jwt.encode(claims(clock.now, iss=PORTAL), ec_key, algorithm='ES256')}")
    assert resolver.calls == [(PORTAL, "p1", None)]


async def test_pem_issuer_drops_algorithms_that_do_not_fit_its_key(
    clock: Clock, rsa_key: rsa.RSAPrivateKey, ec_key: ec.EllipticCurvePrivateKey
) -> None:
    # The default algorithms are RS256 and ES256; an EC-signed token for an RSA issuer is refused cleanly.
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf", public_key=pem(rsa_key))
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=Resolver(), clock=clock)
    token = jwt.encode(claims(clock.now, iss=PORTAL), ec_key, algorithm="ES256")
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == "the token's signing algorithm is not accepted for its issuer"


class _JwksServer:
    """A JWK set served on 127.0.0.1 from a background thread; counts its requests."""

    def __init__(self, jwk_set: dict[str, Any]) -> None:
        self.body = json.dumps(jwk_set).encode()
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests += 1
                body = outer.body
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def jwks(rsa_key: rsa.RSAPrivateKey) -> Iterator[_JwksServer]:
    jwk = json.loads(RSAAlgorithm.to_jwk(rsa_key.public_key()))
    server = _JwksServer({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]})
    yield server
    server.close()


@pytest.fixture
def jwks_tokens(jwks: _JwksServer, clock: Clock) -> Callable[[Resolver], Tokens]:
    def make(resolver: Resolver) -> Tokens:
        trusted = TrustedIssuer(issuer=PORTAL, audience="golf", jwks_url=jwks.url, algorithms=("RS256",))
        return Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=resolver, clock=clock)

    return make


async def test_trusted_issuer_by_jwks(
    jwks: _JwksServer, jwks_tokens: Callable[[Resolver], Tokens], clock: Clock, rsa_key: rsa.RSAPrivateKey
) -> None:
    resolver = Resolver()
    tokens = jwks_tokens(resolver)
    for jti in ("one", "two"):
        portal_claims = claims(clock.now, iss=PORTAL, sub="j-7", name="Jo", jti=jti)
        token = jwt.encode(portal_claims, rsa_key, algorithm="RS256", headers={"kid": "k1"})
        caller = await tokens.verify(f"Bearer {token}")
        assert caller == Caller(player_id="player-of-j-7", issuer=PORTAL, scopes=frozenset())
    assert resolver.calls == [(PORTAL, "j-7", "Jo")]
    assert jwks.requests == 1  # the key set is fetched once and kept


async def test_a_key_the_portal_removes_stops_signing_in_once_the_set_is_fetched_again(
    jwks: _JwksServer, clock: Clock, rsa_key: rsa.RSAPrivateKey
) -> None:
    trusted = TrustedIssuer(
        issuer=PORTAL, audience="golf", jwks_url=jwks.url, algorithms=("RS256",), jwks_refresh_seconds=0.2
    )
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=Resolver(), clock=clock)

    def signed(jti: str) -> str:
        return jwt.encode(claims(clock.now, iss=PORTAL, jti=jti), rsa_key, algorithm="RS256", headers={"kid": "k1"})

    assert await tokens.verify(f"Bearer {signed('before')}")
    other = json.loads(RSAAlgorithm.to_jwk(rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()))
    jwks.body = json.dumps({"keys": [{**other, "kid": "k2", "use": "sig", "alg": "RS256"}]}).encode()  # k1 revoked
    clock.now += 0.3  # the set's age is read from the tokens' clock
    error = await refused(tokens, f"Bearer {signed('after')}")
    assert error.message == f"the token's signing key is not among the keys of issuer {PORTAL}"
    assert jwks.requests == 2


async def test_jwks_unknown_kid(
    jwks_tokens: Callable[[Resolver], Tokens], clock: Clock, rsa_key: rsa.RSAPrivateKey
) -> None:
    tokens = jwks_tokens(Resolver())
    token = jwt.encode(claims(clock.now, iss=PORTAL), rsa_key, algorithm="RS256", headers={"kid": "rotated-away"})
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == f"the token's signing key is not among the keys of issuer {PORTAL}"


async def test_jwks_token_without_kid(
    jwks_tokens: Callable[[Resolver], Tokens], clock: Clock, rsa_key: rsa.RSAPrivateKey
) -> None:
    tokens = jwks_tokens(Resolver())
    token = jwt.encode(claims(clock.now, iss=PORTAL), rsa_key, algorithm="RS256")
    assert "'kid' header" in (await refused(tokens, f"Bearer {token}")).message


async def test_jwks_unreachable(clock: Clock, rsa_key: rsa.RSAPrivateKey) -> None:
    with socket.socket() as probe:  # a port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    trusted = TrustedIssuer(issuer=PORTAL, audience="golf", jwks_url=f"http://127.0.0.1:{port}/jwks.json")
    resolver = Resolver()
    tokens = Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=resolver, clock=clock)
    token = jwt.encode(claims(clock.now, iss=PORTAL), rsa_key, algorithm="RS256", headers={"kid": "k1"})
    error = await refused(tokens, f"Bearer {token}")
    assert error.message == f"the signing keys of issuer {PORTAL} could not be fetched; try again later"
    assert resolver.calls == []


# Configuration


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({}, "exactly one of public_key and jwks_url"),
        ({"public_key": "pem", "jwks_url": "https://x"}, "exactly one of public_key and jwks_url"),
        ({"jwks_url": "https://x", "algorithms": ("RS256", "HS256")}, "['HS256'] refused"),
        ({"jwks_url": "https://x", "algorithms": ("none",)}, "['none'] refused"),
        ({"jwks_url": "https://x", "algorithms": ()}, "algorithms is empty"),
    ],
)
def test_trusted_issuer_validation(changes: dict[str, Any], reason: str) -> None:
    with pytest.raises(ValueError, match="portal-x") as caught:
        TrustedIssuer(issuer="portal-x", audience="golf", **changes)
    assert reason in str(caught.value)


def test_trusted_issuer_takes_a_list_of_algorithms() -> None:
    trusted = TrustedIssuer(issuer="p", audience="golf", jwks_url="https://x", algorithms=["RS256"])  # type: ignore[arg-type]
    assert trusted.algorithms == ("RS256",)


def test_tokens_configuration_errors(rsa_key: rsa.RSAPrivateKey) -> None:
    portal = TrustedIssuer(issuer=PORTAL, audience="golf", public_key=pem(rsa_key))
    with pytest.raises(ValueError, match="resolve_external"):
        Tokens(KEY, "golf", "golf", 3600, trusted=[portal])
    with pytest.raises(ValueError, match="clashes"):
        Tokens(KEY, PORTAL, "golf", 3600, trusted=[portal], resolve_external=Resolver())
    with pytest.raises(ValueError, match="not a PEM public key"):
        bad = TrustedIssuer(issuer=PORTAL, audience="golf", public_key="not a pem")
        Tokens(KEY, "golf", "golf", 3600, trusted=[bad], resolve_external=Resolver())
    with pytest.raises(ValueError, match="none of"):
        es_only = TrustedIssuer(issuer=PORTAL, audience="golf", public_key=pem(rsa_key), algorithms=("ES256",))
        Tokens(KEY, "golf", "golf", 3600, trusted=[es_only], resolve_external=Resolver())
    with pytest.raises(ValueError, match="32 bytes"):
        Tokens(b"short", "golf", "golf", 3600)
