"""The rate limiter's rules, counted in memory and in Redis alike, and counts shared by replicas through Redis.

Redis is the one this machine runs (the ``redis_url`` fixture of tests/conftest.py).
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator, Callable

import coredis
import pytest

from golf.adapters.ratelimit import Limits
from golf.app.errors import RateLimited

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
