"""The solitaire services over a real database, for the storage tests: a player, the wall clock, no rate limits and
no tokens."""

from __future__ import annotations

from datetime import UTC, datetime

from golf.adapters.db.repository import Database
from golf.app.dealing import DealSettings
from golf.app.identity import AccessToken, Caller
from golf.app.solitaire import SolitaireService
from golf.app.solving import InlineSolver
from golf.bootstrap import Services, build_services

PLAYER = Caller("00000000-0000-0000-0000-000000000001")


def now() -> datetime:
    return datetime.now(UTC)


class NoLimits:
    """Rate limits are not what these tests are about."""

    async def hit(self, limit: str, key: str) -> None:
        return None


class NoTokens:
    def issue(self, player_id: str) -> AccessToken:
        raise AssertionError("these tests sign no one in")


def built(database: Database) -> Services:
    return build_services(database, now, InlineSolver(), DealSettings(solver_budget=300_000), NoTokens(), NoLimits())


def services(database: Database) -> SolitaireService:
    return built(database).games
