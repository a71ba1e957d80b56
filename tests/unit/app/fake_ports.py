"""In-memory stand-ins for the ports other than storage: a rate limiter and a token issuer."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

from golf.app.errors import RateLimited
from golf.app.identity import AccessToken
from tests.unit.app.fakes import FakeClock


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
    """Issues readable stand-in tokens (the real ones are tested in tests/unit/adapters/auth)."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock

    def issue(self, player_id: str) -> AccessToken:
        return AccessToken(f"token-for-{player_id}", self.clock() + timedelta(hours=1))
