"""The rate limiter's rules, counted in memory and in Redis alike, and counts shared by replicas through Redis.

Redis is the one this machine runs (the ``redis_url`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable

import coredis
import pytest

from golf.adapters.ratelimit import Limits, rules_from_settings
from golf.adapters.settings import Settings
from golf.app.errors import RateLimited
from golf.app.players import PlayerService
from tests.unit.app.fake_ports import FakeTokens
from tests.unit.app.fakes import FakeClock, FakeStore

KEY = "player-1234"

LimitsFactory = Callable[..., Limits]


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    """A key prefix of this test's own, its keys deleted afterwards."""
    name = f"golf-test-{secrets.token_hex(6)}"
    yield name
    await _delete_keys(redis_url, name)


async def _keys(redis_url: str, prefix: str) -> set[bytes]:
    client = coredis.Redis.from_url(redis_url)
    try:
        return set(await client.keys(f"{prefix}:*"))
    finally:
        client.connection_pool.disconnect()


async def _delete_keys(redis_url: str, prefix: str) -> None:
    client = coredis.Redis.from_url(redis_url)
    try:
        if keys := await client.keys(f"{prefix}:*"):
            await client.delete(keys)
    finally:
        client.connection_pool.disconnect()


@pytest.fixture(params=["memory", "redis"])
def any_limits(request: pytest.FixtureRequest) -> LimitsFactory:
    """Makes ``Limits`` counted in this process or in the test Redis: the rules are the same in both."""
    if request.param == "memory":
        return lambda rules: Limits(rules)
    factory: LimitsFactory = request.getfixturevalue("new_limits")
    return factory


@pytest.fixture
async def new_limits(redis_url: str, prefix: str) -> AsyncIterator[LimitsFactory]:
    """Makes ``Limits`` on the test Redis (the test's prefix unless told), closed at the end of the test."""
    made: list[Limits] = []

    def make(rules: dict[str, str], prefix: str = prefix, storage_url: str = redis_url) -> Limits:
        limits = Limits(rules, storage_url=storage_url, prefix=prefix)
        made.append(limits)
        return limits

    yield make
    for limits in made:
        await limits.close()


async def test_lets_the_allowance_through_and_refuses_the_next(any_limits: LimitsFactory) -> None:
    limits = any_limits({"player": "3/second"})
    for _ in range(3):
        await limits.hit("player", KEY)
    with pytest.raises(RateLimited) as refused:
        await limits.hit("player", KEY)
    assert 0 < refused.value.retry_after <= 1
    assert "at most 3 per 1 second" in refused.value.message
    assert KEY not in refused.value.message  # nothing the client sent is echoed


async def test_recovers_when_the_window_has_moved_on(any_limits: LimitsFactory) -> None:
    limits = any_limits({"player": "3/second"})
    for _ in range(3):
        await limits.hit("player", KEY)
    with pytest.raises(RateLimited) as refused:
        await limits.hit("player", KEY)
    await asyncio.sleep(refused.value.retry_after + 0.1)
    for _ in range(3):
        await limits.hit("player", KEY)
    with pytest.raises(RateLimited):
        await limits.hit("player", KEY)


async def test_every_window_of_a_rule_must_have_room(any_limits: LimitsFactory) -> None:
    limits = any_limits({"player": "2/second;3/minute"})
    await limits.hit("player", KEY)
    await limits.hit("player", KEY)
    for _ in range(3):  # refused by the second window; these must not use up the minute's allowance
        with pytest.raises(RateLimited) as refused:
            await limits.hit("player", KEY)
        assert 0 < refused.value.retry_after <= 1
        assert "at most 2 per 1 second" in refused.value.message
    await asyncio.sleep(1.1)
    await limits.hit("player", KEY)  # the minute's third
    with pytest.raises(RateLimited) as refused:
        await limits.hit("player", KEY)
    assert 55 < refused.value.retry_after <= 60
    assert "at most 3 per 1 minute" in refused.value.message
    assert "retry in 60 s" in refused.value.message or "retry in 59 s" in refused.value.message


async def test_an_empty_rule_turns_the_limit_off(new_limits: LimitsFactory, redis_url: str, prefix: str) -> None:
    limits = new_limits({"player": " ", "create": "1/minute"})
    for _ in range(50):
        await limits.hit("player", KEY)
    assert await _keys(redis_url, prefix) == set()  # not even counted
    await limits.hit("create", KEY)
    with pytest.raises(RateLimited):
        await limits.hit("create", KEY)
    with pytest.raises(KeyError):
        await limits.hit("nope", KEY)


async def test_replicas_share_the_count(new_limits: LimitsFactory) -> None:
    one = new_limits({"create": "4/minute"})
    two = new_limits({"create": "4/minute"})
    await one.hit("create", KEY)
    await two.hit("create", KEY)
    await one.hit("create", KEY)
    await two.hit("create", KEY)
    for replica in (one, two):
        with pytest.raises(RateLimited) as refused:
            await replica.hit("create", KEY)
        assert 55 < refused.value.retry_after <= 60


async def test_another_prefix_counts_apart(new_limits: LimitsFactory, redis_url: str, prefix: str) -> None:
    other_prefix = f"{prefix}-other"
    try:
        ours = new_limits({"create": "2/minute"})
        theirs = new_limits({"create": "2/minute"}, prefix=other_prefix)
        await ours.hit("create", KEY)
        await ours.hit("create", KEY)
        with pytest.raises(RateLimited):
            await ours.hit("create", KEY)
        await theirs.hit("create", KEY)  # another deployment on the same Redis: its own count
        await theirs.hit("create", KEY)
        with pytest.raises(RateLimited):
            await theirs.hit("create", KEY)
        # Every key is under its deployment's prefix.
        assert len(await _keys(redis_url, prefix)) == 1
        assert len(await _keys(redis_url, other_prefix)) == 1
    finally:
        await _delete_keys(redis_url, other_prefix)


async def test_the_async_url_form_is_accepted(new_limits: LimitsFactory, redis_url: str) -> None:
    plain = new_limits({"player": "1/minute"})
    explicit = new_limits({"player": "1/minute"}, storage_url=f"async+{redis_url}")
    await plain.hit("player", KEY)
    with pytest.raises(RateLimited):  # both spellings reach the same server and keys
        await explicit.hit("player", KEY)


# -- guest sign-ups: per address, per network, for the whole service ----------------------------------------------
SIGN_UPS = Settings(
    rate_limit_sign_in="2/minute", rate_limit_sign_up_network="10/minute", rate_limit_sign_up_service="25/minute"
)


@pytest.fixture
def players(any_limits: LimitsFactory) -> PlayerService:
    """Guests signed up under SIGN_UPS' limits, counted in this process or in the test Redis."""
    clock = FakeClock()
    return PlayerService(FakeStore(), clock, FakeTokens(clock), any_limits(rules_from_settings(SIGN_UPS)))


async def _sign_ups(players: PlayerService, addresses: list[str]) -> tuple[int, list[RateLimited]]:
    """How many of these sign-ups (one per address given) made a guest, and the refusals of the others."""
    made, refused = 0, []
    for address in addresses:
        try:
            await players.create_guest("", address)
            made += 1
        except RateLimited as err:
            refused.append(err)
    return made, refused


def _kinds(refused: list[RateLimited]) -> set[str]:
    return {err.message.partition(":")[0] for err in refused}


async def test_many_addresses_of_one_network_share_its_allowance(players: PlayerService) -> None:
    # 32 addresses of one /24, each within its own allowance (2 a minute): 10 guests, not 64.
    made, refused = await _sign_ups(players, [f"203.0.113.{n}" for n in range(1, 33) for _ in range(2)])
    assert made == 10
    assert _kinds(refused) == {"too many new guests from this network"}
    assert all(55 < err.retry_after <= 60 for err in refused)
    # One IPv6 /64 is one network too, however many addresses it holds.
    made, refused = await _sign_ups(players, [f"2001:db8:0:7::{n:x}" for n in range(1, 33)])
    assert made == 10
    assert _kinds(refused) == {"too many new guests from this network"}
    made, _ = await _sign_ups(players, ["198.51.100.1", "2001:db8:0:8::1"])  # other networks still sign up
    assert made == 2


async def test_many_networks_share_the_service_allowance(players: PlayerService) -> None:
    # 32 networks, each far within its own allowance: the service makes 25 guests a minute in all.
    made, refused = await _sign_ups(players, [f"10.{n}.0.1" for n in range(32)])
    assert made == 25
    assert _kinds(refused) == {"too many new guests on this service right now"}
    assert all(55 < err.retry_after <= 60 for err in refused)
