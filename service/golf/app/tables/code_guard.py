"""Wrong join codes, limited per player and per client address, so that guessing a private table's code is hopeless.

Only wrong codes are counted (``join_code_player``, ``join_code_address`` of the rate limiter): a player who types
the right code is never held back by their own use of it. Once a wrong code finds a window full, every code of that
player or address is refused (``RateLimited``: 429 with Retry-After) until the window frees, the right one too:
else a guesser past the limit would still learn which guess was right. The limiter port only counts, so the
refusals are remembered here, in this process; the counts themselves are the limiter's (shared by the replicas
through Redis), so each replica lets a blocked guesser at most one more wrong code per window before it blocks too.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from golf.app.errors import RateLimited
from golf.app.ports import RateLimiter

PLAYER_LIMIT = "join_code_player"
ADDRESS_LIMIT = "join_code_address"
_PRUNE_AT = 10_000
"""Blocks remembered past which the expired ones are dropped (a flood of guessers costs bounded memory)."""


class JoinCodeGuard:
    """Counts wrong join codes and refuses every code of a player or address over its limit."""

    def __init__(self, limiter: RateLimiter, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.limiter = limiter
        self._now = monotonic
        self._blocked: dict[tuple[str, str], tuple[float, str]] = {}
        """(limit, key) -> (monotonic time until which its codes are refused, the refusal's message)."""

    def check(self, player: str, address: str | None) -> None:
        """Raise ``RateLimited`` if ``player`` or ``address`` may try no join code now (before the code is used)."""
        for key in self._keys(player, address):
            blocked = self._blocked.get(key)
            if blocked is None:
                continue
            until, message = blocked
            wait = until - self._now()
            if wait > 0:
                raise RateLimited(f"{message}; retry in {math.ceil(wait)} s", wait)
            del self._blocked[key]

    async def wrong(self, player: str, address: str | None) -> None:
        """Count one wrong code of ``player`` from ``address``; ``RateLimited`` (remembered) when a limit is full."""
        for limit, key in self._keys(player, address):
            try:
                await self.limiter.hit(limit, key)
            except RateLimited as refused:
                self._remember((limit, key), refused)
                raise

    @staticmethod
    def _keys(player: str, address: str | None) -> list[tuple[str, str]]:
        keys = [(PLAYER_LIMIT, player)]
        if address:
            keys.append((ADDRESS_LIMIT, address))
        return keys

    def _remember(self, key: tuple[str, str], refused: RateLimited) -> None:
        now = self._now()
        if len(self._blocked) >= _PRUNE_AT:
            self._blocked = {k: v for k, v in self._blocked.items() if v[0] > now}
        # The limiter's message ends with its own "; retry in N s", which is told afresh on every later refusal.
        message = refused.message.rpartition("; retry in")[0] or refused.message
        self._blocked[key] = (now + refused.retry_after, message)
