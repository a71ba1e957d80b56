"""The use cases over in-memory storage, a clock the tests move and the solver run inline."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest

from golf.app.dealing import DealSettings
from golf.app.errors import RateLimited
from golf.app.identity import AccessToken, Caller
from golf.app.solving import InlineSolver
from golf.bootstrap import Services, build_services
from tests.unit.app.fakes import FakeClock, FakeStore


class FakeLimiter:
    """Counts hits per (limit, key); refuses once a limit set in ``caps`` is reached."""

    def __init__(self) -> None:
        self.hits: Counter[tuple[str, str]] = Counter()
        self.caps: dict[str, int] = {}

    async def hit(self, limit: str, key: str) -> None:
        if self.hits[(limit, key)] >= self.caps.get(limit, 10**9):
            raise RateLimited(f"too many {limit} calls", 1.5)
        self.hits[(limit, key)] += 1

    def count(self, limit: str) -> int:
        return sum(n for (name, _), n in self.hits.items() if name == limit)


class FakeTokens:
    """Issues readable stand-in tokens (the real ones are tested in tests/unit/auth)."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def issue(self, player_id: str) -> AccessToken:
        return AccessToken(f"token-for-{player_id}", self.clock() + timedelta(hours=1))


@pytest.fixture
def store() -> FakeStore:
    return FakeStore()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def limiter() -> FakeLimiter:
    return FakeLimiter()


@pytest.fixture
def deal_settings() -> DealSettings:
    """Overridden by modules that need another budget or pool."""
    return DealSettings(solver_budget=2_000_000, pool_size=1)


@pytest.fixture
def services(store: FakeStore, clock: FakeClock, deal_settings: DealSettings, limiter: FakeLimiter) -> Services:
    return build_services(store, clock, InlineSolver(), deal_settings, FakeTokens(clock), limiter)


@pytest.fixture
def ann() -> Caller:
    return Caller("player-ann")


@pytest.fixture
def bob() -> Caller:
    return Caller("player-bob")
