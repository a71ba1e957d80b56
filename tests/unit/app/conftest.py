"""The use cases over in-memory storage, a clock the tests move and the solver run inline."""

from __future__ import annotations

import pytest

from golf.app.dealing import DealSettings
from golf.app.identity import Caller
from golf.app.solving import InlineSolver
from golf.bootstrap import Services, build_services
from tests.unit.app.fake_ports import FakeLimiter, FakeTokens
from tests.unit.app.fakes import FakeClock, FakeStore


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
