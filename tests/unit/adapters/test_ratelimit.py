"""The rate limiter counted in this process, its rules, and failing open when Redis cannot be reached."""

from __future__ import annotations

import asyncio
import logging
import socket
import time

import pytest

from golf.adapters.ratelimit import Limits, limits_from_settings
from golf.adapters.settings import Settings
from golf.app.errors import RateLimited

KEY = "player-1234"


async def test_keys_are_counted_apart() -> None:
    limits = Limits({"player": "3/second"})
    for _ in range(3):
        await limits.hit("player", KEY)
    with pytest.raises(RateLimited):
        await limits.hit("player", KEY)
    for _ in range(3):
        await limits.hit("player", "someone-else")


async def test_limits_are_counted_apart() -> None:
    limits = Limits({"player": "1/minute", "create": "1/minute"})
    await limits.hit("player", KEY)
    await limits.hit("create", KEY)  # same key, another limit: its own window
    with pytest.raises(RateLimited):
        await limits.hit("create", KEY)


async def test_retry_after_is_the_longest_full_window() -> None:
    # Both windows are full: coming back after a second would only be refused again by the minute's.
    limits = Limits({"player": "2/second;2/minute"})
    await limits.hit("player", KEY)
    await limits.hit("player", KEY)
    with pytest.raises(RateLimited) as refused:
        await limits.hit("player", KEY)
    assert 55 < refused.value.retry_after <= 60
    assert "at most 2 per 1 minute" in refused.value.message


async def test_descriptions_name_the_kind_of_call() -> None:
    limits = Limits({"solver": "1/minute", "sign_in": "1/minute"})
    await limits.hit("solver", KEY)
    with pytest.raises(RateLimited) as refused:
        await limits.hit("solver", KEY)
    assert refused.value.message.startswith(
        "too many hint, AutoPlay and winnable-deal requests: at most 1 per 1 minute"
    )
    await limits.hit("sign_in", "203.0.113.9")
    with pytest.raises(RateLimited) as refused:
        await limits.hit("sign_in", "203.0.113.9")
    assert "sign-ins" in refused.value.message and "203.0.113.9" not in refused.value.message


@pytest.mark.parametrize("off", ["", "   "])
async def test_an_empty_rule_turns_the_limit_off(off: str) -> None:
    limits = Limits({"player": off, "create": "1/minute"})
    for _ in range(200):
        await limits.hit("player", KEY)
    await limits.hit("create", KEY)
    with pytest.raises(RateLimited):
        await limits.hit("create", KEY)


async def test_an_unknown_limit_is_a_key_error() -> None:
    limits = Limits({"player": "3/second"})
    with pytest.raises(KeyError, match="nope"):
        await limits.hit("nope", KEY)


@pytest.mark.parametrize("bad", ["abc", "5/fortnight", "5/second;", "0/second", "3/second;0/minute"])
def test_a_malformed_rule_is_refused_at_construction(bad: str) -> None:
    with pytest.raises(ValueError, match="'solver'"):
        Limits({"player": "3/second", "solver": bad})


def test_an_unsupported_storage_url_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError, match="'memcached'") as refused:
        Limits({"player": "3/second"}, storage_url="memcached://user:s3cret@localhost:11211")
    assert "s3cret" not in str(refused.value)


async def test_built_from_settings() -> None:
    settings = Settings(
        rate_limit_player="", rate_limit_address="", rate_limit_solver="2/minute", rate_limit_create="1/minute"
    )
    limits = limits_from_settings(settings)
    for _ in range(50):
        await limits.hit("player", KEY)
        await limits.hit("address", "203.0.113.9")
    await limits.hit("solver", KEY)
    await limits.hit("solver", KEY)
    with pytest.raises(RateLimited, match="at most 2 per 1 minute"):
        await limits.hit("solver", KEY)
    await limits.hit("create", KEY)
    with pytest.raises(RateLimited):
        await limits.hit("create", KEY)
    await limits.hit("sign_in", "203.0.113.9")  # the default rules are there too
    await limits.hit("sign_up_network", "203.0.113.0/24")
    await limits.hit("sign_up_service", "all")
    with pytest.raises(KeyError):
        await limits.hit("unknown", KEY)


def test_settings_with_a_bad_rule_stop_the_start() -> None:
    with pytest.raises(ValueError, match="'create'"):
        limits_from_settings(Settings(rate_limit_create="lots"))
    with pytest.raises(ValueError, match="'sign_up_network'"):
        limits_from_settings(Settings(rate_limit_sign_up_network="lots"))


def _closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (just released by us)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_redis_down_lets_calls_through_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    limits = Limits({"player": "1/minute"}, storage_url=f"redis://127.0.0.1:{_closed_port()}/0")
    caplog.set_level(logging.WARNING, logger="golf.ratelimit")
    started = time.monotonic()
    try:
        for _ in range(5):  # over the allowance: none refused
            await limits.hit("player", KEY)
    finally:
        await limits.close()
    assert time.monotonic() - started < 2
    warnings = [r for r in caplog.records if r.name == "golf.ratelimit" and r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "letting calls through" in warnings[0].getMessage()
    assert KEY not in warnings[0].getMessage()


async def test_redis_not_answering_costs_a_second_then_nothing(caplog: pytest.LogCaptureFixture) -> None:
    async def never_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # swallow the commands until the client hangs up
        writer.close()

    server = await asyncio.start_server(never_answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    limits = Limits({"player": "1/minute"}, storage_url=f"redis://127.0.0.1:{port}/0")
    caplog.set_level(logging.WARNING, logger="golf.ratelimit")
    try:
        started = time.monotonic()
        await limits.hit("player", KEY)  # bounded by the operation timeout, then let through
        assert time.monotonic() - started < 1.5
        started = time.monotonic()
        for _ in range(5):  # within the retry pause Redis is not asked: no waiting at all
            await limits.hit("player", KEY)
        assert time.monotonic() - started < 0.1
    finally:
        await limits.close()
        server.close()
        await server.wait_closed()
    warnings = [r.getMessage() for r in caplog.records if r.name == "golf.ratelimit"]
    assert len(warnings) == 1 and "TimeoutError" in warnings[0]


async def test_a_refused_key_is_refused_without_the_storage_until_its_window_frees() -> None:
    # A flood is all refusals: once refused, a key's calls are refused from memory until the retry time (a
    # moving window cannot free up sooner), and the storage is asked again after it.
    limits = Limits({"player": "2/second;100/minute"})
    await limits.hit("player", KEY)
    await limits.hit("player", KEY)
    with pytest.raises(RateLimited) as first:
        await limits.hit("player", KEY)
    asked: list[str] = []
    storage_hit = limits._limiter.hit

    async def spy(*args: object, **kwargs: object) -> bool:
        asked.append("hit")
        return await storage_hit(*args, **kwargs)  # type: ignore[arg-type]

    limits._limiter.hit = spy  # type: ignore[method-assign]
    for _ in range(100):
        with pytest.raises(RateLimited) as again:
            await limits.hit("player", KEY)
        assert 0 < again.value.retry_after <= first.value.retry_after
        assert "at most 2 per 1 second" in str(again.value)
    assert asked == []
    await asyncio.sleep(first.value.retry_after + 0.05)
    await limits.hit("player", KEY)  # let in again, through the storage
    assert asked == ["hit", "hit"]
