"""A portal's JWK set (golf.adapters.auth.jwks) through ``Tokens.verify``: fetched once for concurrent tokens, kept
``jwks_refresh_seconds``, fetched again at most every few seconds for unknown ``kid``s, and given up after
``jwks_timeout_seconds``. Served by the test on 127.0.0.1 (tests/jwks_server.py); fetches are counted, time is the
test's clock (the one wait is the timeout of a fetch the endpoint never answers)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from pydantic import ValidationError

from golf.adapters.auth.jwks import MIN_REFETCH_SECONDS, UNKNOWN_KID_SECONDS
from golf.adapters.auth.tokens import Tokens, TrustedIssuer
from golf.adapters.settings import Settings, TrustedIssuerSettings
from golf.app.errors import Unauthenticated
from tests.jwks_server import JwksServer, jwk
from tests.unit.adapters.auth.token_helpers import KEY, PORTAL, Clock, Resolver, claims

NOT_AMONG = f"the token's signing key is not among the keys of issuer {PORTAL}"
UNAVAILABLE = f"the signing keys of issuer {PORTAL} could not be fetched; try again later"
GUARD = 30.0  # what no step may take: only a deadlock reaches it


@pytest.fixture(scope="module")
def keys() -> list[rsa.RSAPrivateKey]:
    return [rsa.generate_private_key(public_exponent=65537, key_size=2048) for _ in range(2)]


@pytest.fixture
def endpoint(keys: list[rsa.RSAPrivateKey]) -> Iterator[JwksServer]:
    server = JwksServer(jwk(keys[0], "k1"))
    yield server
    server.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def portal(endpoint: JwksServer, clock: Clock) -> Callable[..., Tokens]:
    def make(**settings: Any) -> Tokens:
        trusted = TrustedIssuer(PORTAL, "golf", jwks_url=endpoint.url, algorithms=("RS256",), **settings)
        return Tokens(KEY, "golf", "golf", 3600, trusted=[trusted], resolve_external=Resolver(), clock=clock)

    return make


def signed(clock: Clock, key: rsa.RSAPrivateKey, kid: str) -> str:
    """A bearer value of a new token (its own ``jti``: never a cache hit) signed by ``key`` naming ``kid``."""
    body = claims(clock.now, iss=PORTAL, jti=secrets.token_hex(8))
    return "Bearer " + jwt.encode(body, key, algorithm="RS256", headers={"kid": kid})


async def refusal(tokens: Tokens, authorization: str) -> str:
    with pytest.raises(Unauthenticated) as caught:
        await asyncio.wait_for(tokens.verify(authorization), GUARD)
    return caught.value.message


async def until_holding(endpoint: JwksServer, count: int) -> None:
    """Wait until the endpoint holds ``count`` requests (the fetch has reached it)."""
    async with asyncio.timeout(GUARD):
        while endpoint.holding < count:  # noqa: ASYNC110 (a count kept by the endpoint's threads, not an event)
            await asyncio.sleep(0.01)


async def test_unknown_kids_share_one_fetch_while_known_keys_never_wait_for_it(
    endpoint: JwksServer, portal: Callable[..., Tokens], clock: Clock, keys: list[rsa.RSAPrivateKey]
) -> None:
    tokens = portal()
    assert await tokens.verify(signed(clock, keys[0], "k1"))
    assert endpoint.requests == 1
    clock.now += MIN_REFETCH_SECONDS + 1
    endpoint.hold()  # a slow endpoint: the fetch these tokens ask for hangs until released
    made_up = [asyncio.create_task(tokens.verify(signed(clock, keys[1], f"made-up-{i}"))) for i in range(20)]
    await until_holding(endpoint, 1)
    # A player of the portal signs in meanwhile: the key is in the set, nothing to wait for.
    known = await asyncio.wait_for(tokens.verify(signed(clock, keys[0], "k1")), GUARD)
    assert known.issuer == PORTAL
    endpoint.release()
    outcomes = await asyncio.gather(*made_up, return_exceptions=True)
    assert all(isinstance(o, Unauthenticated) and o.message == NOT_AMONG for o in outcomes), outcomes
    assert endpoint.requests == 2  # twenty tokens, one fetch
    # The same kids again, and new ones, a moment later: refused without asking the portal.
    assert await refusal(tokens, signed(clock, keys[1], "made-up-3")) == NOT_AMONG
    assert await refusal(tokens, signed(clock, keys[1], "made-up-new")) == NOT_AMONG
    assert endpoint.requests == 2
    # A few seconds on, a new kid fetches the set again; one found missing is still remembered.
    clock.now += MIN_REFETCH_SECONDS + 1
    assert await refusal(tokens, signed(clock, keys[1], "made-up-newer")) == NOT_AMONG
    assert endpoint.requests == 3
    clock.now += MIN_REFETCH_SECONDS + 1
    assert await refusal(tokens, signed(clock, keys[1], "made-up-newer")) == NOT_AMONG
    assert endpoint.requests == 3
    clock.now += UNKNOWN_KID_SECONDS
    assert await refusal(tokens, signed(clock, keys[1], "made-up-newer")) == NOT_AMONG
    assert endpoint.requests == 4


async def test_a_fetch_the_endpoint_does_not_answer_is_given_up_after_the_timeout(
    endpoint: JwksServer, portal: Callable[..., Tokens], clock: Clock, keys: list[rsa.RSAPrivateKey]
) -> None:
    tokens = portal(jwks_timeout_seconds=0.2)
    endpoint.hold()
    waiting = [asyncio.create_task(tokens.verify(signed(clock, keys[0], "k1"))) for _ in range(5)]
    outcomes = await asyncio.gather(*waiting, return_exceptions=True)
    assert all(isinstance(o, Unauthenticated) and o.message == UNAVAILABLE for o in outcomes), outcomes
    # Right after a failed fetch the endpoint is left alone: refused at once, no second fetch.
    assert await refusal(tokens, signed(clock, keys[0], "k1")) == UNAVAILABLE
    await until_holding(endpoint, 1)  # the given-up fetch's thread may reach the endpoint late on a busy machine
    assert endpoint.requests == 1
    endpoint.release()
    clock.now += MIN_REFETCH_SECONDS + 1
    assert await asyncio.wait_for(tokens.verify(signed(clock, keys[0], "k1")), GUARD)
    assert endpoint.requests == 2


async def test_a_waiter_that_is_cancelled_leaves_the_fetch_to_the_others(
    endpoint: JwksServer, portal: Callable[..., Tokens], clock: Clock, keys: list[rsa.RSAPrivateKey]
) -> None:
    tokens = portal()
    endpoint.hold()
    gone = asyncio.create_task(tokens.verify(signed(clock, keys[0], "k1")))
    await until_holding(endpoint, 1)
    gone.cancel()  # its client went away
    staying = asyncio.create_task(tokens.verify(signed(clock, keys[0], "k1")))
    await asyncio.sleep(0)
    endpoint.release()
    assert (await asyncio.wait_for(staying, GUARD)).issuer == PORTAL
    assert gone.cancelled() and endpoint.requests == 1


async def test_a_removed_key_signs_in_until_the_set_is_jwks_refresh_seconds_old(
    endpoint: JwksServer, portal: Callable[..., Tokens], clock: Clock, keys: list[rsa.RSAPrivateKey]
) -> None:
    tokens = portal(jwks_refresh_seconds=5)
    assert await tokens.verify(signed(clock, keys[0], "k1"))
    endpoint.serve(jwk(keys[1], "k2"))  # k1 rotated away
    clock.now += 4
    assert await tokens.verify(signed(clock, keys[0], "k1"))  # the set is kept: no fetch yet
    assert endpoint.requests == 1
    clock.now += 1.5
    assert await refusal(tokens, signed(clock, keys[0], "k1")) == NOT_AMONG
    assert await tokens.verify(signed(clock, keys[1], "k2"))
    assert endpoint.requests == 2


async def test_a_key_rotated_in_is_fetched_and_any_refetch_drops_removed_ones(
    endpoint: JwksServer, portal: Callable[..., Tokens], clock: Clock, keys: list[rsa.RSAPrivateKey]
) -> None:
    tokens = portal()
    assert await tokens.verify(signed(clock, keys[0], "k1"))
    endpoint.serve(jwk(keys[1], "k2"))
    clock.now += MIN_REFETCH_SECONDS + 1
    assert await tokens.verify(signed(clock, keys[1], "k2"))
    assert await refusal(tokens, signed(clock, keys[0], "k1")) == NOT_AMONG
    assert endpoint.requests == 2


@pytest.mark.parametrize("name", ["jwks_refresh_seconds", "jwks_timeout_seconds"])
@pytest.mark.parametrize("value", [0, -1, float("nan"), float("inf")])
def test_jwks_times_must_be_positive_numbers_of_seconds(name: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"{name} must be a positive number of seconds"):
        settings: dict[str, Any] = {name: value}
        TrustedIssuer(PORTAL, "golf", jwks_url="https://portal.example/jwks", **settings)


def test_every_trusted_issuer_setting_reaches_the_issuer(monkeypatch: pytest.MonkeyPatch) -> None:
    """GOLF_TRUSTED_ISSUERS once dropped ``jwks_refresh_seconds`` (the settings model lacked it): the set was kept
    300 s whatever the portal asked."""
    given = {"jwks_refresh_seconds": 5.0, "jwks_timeout_seconds": 2.0, "algorithms": ["ES256"]}
    issuers = [{"issuer": PORTAL, "audience": "golf", "jwks_url": "https://portal.example/jwks", **given}]
    monkeypatch.setenv("GOLF_TRUSTED_ISSUERS", json.dumps(issuers))
    (config,) = Settings().trusted_issuers
    trusted = TrustedIssuer(**config.model_dump())  # as bootstrap makes them
    assert (trusted.jwks_refresh_seconds, trusted.jwks_timeout_seconds, trusted.algorithms) == (5.0, 2.0, ("ES256",))
    assert set(TrustedIssuerSettings.model_fields) == {f.name for f in dataclasses.fields(TrustedIssuer)}


def test_an_unknown_trusted_issuer_setting_is_refused_not_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    issuers = [{"issuer": PORTAL, "audience": "golf", "jwks_url": "https://x", "jwks_refresh_second": 5}]
    monkeypatch.setenv("GOLF_TRUSTED_ISSUERS", json.dumps(issuers))
    with pytest.raises(ValidationError, match="jwks_refresh_second"):
        Settings()
