"""Rate limits with :pypi:`limits` (moving windows): counted in this process, or in Redis shared by every replica.

A rule is a ``limits`` rate string such as ``50/second;1500/minute``; every window of a rule must have room for a call.
Redis being down or slow never stops the game: the limiter then lets calls through and says so in the log.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, MovingWindowSupport, Storage
from limits.aio.strategies import MovingWindowRateLimiter
from limits.storage import storage_from_string

from golf.app.errors import RateLimited

if TYPE_CHECKING:
    from golf.adapters.settings import Settings

log = logging.getLogger("golf.ratelimit")

# Every limit by name (each a setting ``GOLF_RATE_LIMIT_<NAME>``), with what a refused client is told was too much;
# never anything the client sent.
_DESCRIPTIONS = {
    "player": "too many requests",
    "address": "too many requests from this address",
    "solver": "too many hint, AutoPlay and winnable-deal requests",
    "create": "too many new deals, games, rounds and holes",
    "sign_in": "too many sign-ins and token refreshes from this address",
    "sign_up_network": "too many new guests from this network",
    "sign_up_service": "too many new guests on this service right now",
    "join_code_player": "too many wrong join codes",
    "join_code_address": "too many wrong join codes from this address",
}

_REDIS_SCHEMES = ("redis", "rediss", "redis+unix", "redis+cluster", "redis+sentinel")

# Redis is asked on every request: a dead or unreachable server must cost little. Connecting and each reply get
# CONNECT_TIMEOUT / STREAM_TIMEOUT, and the whole check (connection set-up with HELLO included) OPERATION_TIMEOUT.
CONNECT_TIMEOUT = 0.5
STREAM_TIMEOUT = 0.5
OPERATION_TIMEOUT = 1.0
# After a failure Redis is left alone this long (calls pass unchecked), so an outage does not add a timeout to
# every request.
RETRY_PAUSE = 1.0
# At most one warning per this many seconds while Redis fails.
WARN_INTERVAL = 30.0
# The smallest retry_after ever reported: the oldest entry may expire between the refusal and the stats query.
_MIN_RETRY = 0.01
# Refusals remembered (see ``Limits.hit``) past which the expired ones are dropped.
_BLOCKED_PRUNE_AT = 10_000


class _Refusal(RateLimited):
    """A refusal with the window that made it, for the ones answered without the storage."""

    def __init__(self, message: str, retry_after: float, window: str) -> None:
        super().__init__(message, retry_after)
        self.window = window


@dataclass(frozen=True, slots=True)
class _Rule:
    description: str
    items: tuple[RateLimitItem, ...]
    """Shortest window first (see ``_parse_rule``); empty when the limit is off."""


def _parse_rule(name: str, text: str) -> _Rule:
    """The parsed rule, or ValueError naming the limit (a bad setting must stop the server at start)."""
    description = _DESCRIPTIONS.get(name, f"too many {name.replace('_', ' ')} requests")
    if not text.strip():
        return _Rule(description, ())
    try:
        items = parse_many(text)
    except ValueError as err:
        raise ValueError(f"rate limit {name!r}: cannot parse {text!r} ({err})") from None
    for item in items:
        if item.amount < 1:
            raise ValueError(f"rate limit {name!r}: {item} lets nothing through; use an empty string to turn it off")
    # Windows are taken in order and the first refusal stops the count. Shortest first: a burst refused by the
    # per-second window then does not use up the per-minute allowance.
    return _Rule(description, tuple(sorted(items, key=lambda item: item.get_expiry())))


def _redis_storage(url: str, prefix: str) -> Storage:
    """The async Redis storage of ``limits`` for a plain ``redis://`` URL (``async+redis://`` is accepted too)."""
    scheme, sep, rest = url.partition("://")
    plain = scheme.removeprefix("async+")
    if not sep or plain not in _REDIS_SCHEMES:
        # The URL may hold a password: name the scheme only.
        raise ValueError(f"redis_url: unsupported scheme {scheme!r} (expected one of {', '.join(_REDIS_SCHEMES)})")
    storage = storage_from_string(
        f"async+{plain}://{rest}",
        key_prefix=prefix,
        connect_timeout=CONNECT_TIMEOUT,
        stream_timeout=STREAM_TIMEOUT,
    )
    if not isinstance(storage, Storage) or not isinstance(storage, MovingWindowSupport):
        raise ValueError(f"redis_url: scheme {scheme!r} gives no async moving-window storage")
    return storage


class Limits:
    """The service's rate limiter (``golf.app.ports.RateLimiter``) on ``limits``' moving-window strategy.

    ``rules`` maps each limit name to a rate string (``"50/second;1500/minute"``; empty or blank: off).
    ``storage_url`` None counts in this process; a ``redis://host:port/db`` URL counts in Redis, shared by every
    replica, under keys starting with ``prefix`` (distinct prefixes never share counts)."""

    def __init__(self, rules: Mapping[str, str], storage_url: str | None = None, prefix: str = "golf") -> None:
        self._rules = {name: _parse_rule(name, text) for name, text in rules.items()}
        self._storage: Storage
        if storage_url is None:
            # One MemoryStorage per instance, so the prefix has nothing to separate.
            self._storage = MemoryStorage()
        else:
            self._storage = _redis_storage(storage_url, prefix)
        self._remote = storage_url is not None
        self._limiter = MovingWindowRateLimiter(self._storage)
        self._paused_until = 0.0
        self._warned_at = -math.inf
        # (limit, key) -> (time.monotonic() until which every call is refused, the window that refused). A moving
        # window refuses every call until its oldest entry expires (calls of other replicas only add entries): so
        # a refusal is answered from here until then, without the storage (the storage's check costs more, its
        # figure is in bench/README.md, and a flood is all refusals).
        self._blocked: dict[tuple[str, str], tuple[float, str]] = {}

    async def hit(self, limit: str, key: str) -> None:
        """Count one call by ``key`` against every window of ``limit``.

        Raises ``RateLimited`` (with the seconds until a call would be let in) when a window is full, KeyError for
        a limit name that has no rule. With Redis unreachable or failing the call is let through."""
        try:
            rule = self._rules[limit]
        except KeyError:
            raise KeyError(f"unknown rate limit {limit!r}") from None
        if not rule.items:
            return
        blocked = self._blocked.get((limit, key))
        if blocked is not None:
            until, worst = blocked
            wait = until - time.monotonic()
            if wait > 0:
                raise RateLimited(f"{rule.description}: at most {worst}; retry in {math.ceil(wait)} s", wait)
            del self._blocked[(limit, key)]
        if not self._remote:
            refusal = await self._check(rule, limit, key)
        else:
            if self._paused_until and time.monotonic() < self._paused_until:
                return
            try:
                async with asyncio.timeout(OPERATION_TIMEOUT):
                    refusal = await self._check(rule, limit, key)
            except Exception as err:  # any failure of the storage: fail open, the game goes on
                self._storage_failed(err)
                return
            self._paused_until = 0.0
        if refusal is not None:
            self._remember(limit, key, refusal)
            raise refusal

    def _remember(self, limit: str, key: str, refusal: _Refusal) -> None:
        """Every call of ``key`` under ``limit`` is refused for ``refusal.retry_after`` from now."""
        if len(self._blocked) >= _BLOCKED_PRUNE_AT:
            now = time.monotonic()
            self._blocked = {k: v for k, v in self._blocked.items() if v[0] > now}
        self._blocked[(limit, key)] = (time.monotonic() + refusal.retry_after, refusal.window)

    async def _check(self, rule: _Rule, limit: str, key: str) -> _Refusal | None:
        """None if every window took the call, else the error to raise (built here, raised outside the timeout)."""
        limiter = self._limiter
        items = rule.items
        for index, item in enumerate(items):
            if await limiter.hit(item, limit, key):
                continue
            # Refused. The longer windows not reached yet may be full too: the client should wait for the last of
            # them, not come back after a second to be refused again.
            now = time.time()
            worst, retry_after = item, (await limiter.get_window_stats(item, limit, key)).reset_time - now
            for later in items[index + 1 :]:
                stats = await limiter.get_window_stats(later, limit, key)
                if stats.remaining <= 0 and stats.reset_time - now > retry_after:
                    worst, retry_after = later, stats.reset_time - now
            retry_after = max(retry_after, _MIN_RETRY)
            message = f"{rule.description}: at most {worst}; retry in {math.ceil(retry_after)} s"
            return _Refusal(message, retry_after, str(worst))
        return None

    def _storage_failed(self, err: Exception) -> None:
        now = time.monotonic()
        self._paused_until = now + RETRY_PAUSE
        if now - self._warned_at >= WARN_INTERVAL:
            self._warned_at = now
            log.warning(
                "rate limit storage failed, letting calls through unchecked: %s: %s",
                type(err).__name__,
                str(err) or "timed out",
            )

    async def close(self) -> None:
        """Drop the Redis connections (nothing to do in memory)."""
        # limits' storages have no close: disconnect the coredis client's pool it keeps (getattr: not public API).
        client = getattr(getattr(self._storage, "bridge", None), "storage", None)
        pool = getattr(client, "connection_pool", None)
        disconnect = getattr(pool, "disconnect", None)
        if callable(disconnect):
            disconnect()


def rules_from_settings(settings: Settings) -> dict[str, str]:
    """Each limit's rule as ``settings`` gives it (``GOLF_RATE_LIMIT_<NAME>``)."""
    return {name: getattr(settings, f"rate_limit_{name}") for name in _DESCRIPTIONS}


def limits_from_settings(settings: Settings) -> Limits:
    """The service's rate limiter: the rules of ``settings``, counted in Redis if ``redis_url`` is set."""
    return Limits(rules_from_settings(settings), storage_url=settings.redis_url, prefix=settings.redis_prefix)
