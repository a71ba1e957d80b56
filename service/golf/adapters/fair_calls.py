"""Fair shares of the handlers between players: each player has at most a few unary calls in its handlers at once.

A player within its rate limit may still send its allowed calls all at once, on many connections: sixteen calls of
one player arriving together ran sixteen handlers side by side on the event loop and the database, and every other
player's call waited behind the whole burst (``bench/edge.py``'s flood phase). Here a player's calls past its share
wait their turn in order, so another player's call waits behind at most that share of each busy player, never
behind the burst. Waiting costs a player its own latency, not anyone else's; its rate limit still bounds how many
calls it sends. Calls are keyed by the player (signed in) or by the client's address (the public RPCs). Streams are
not gated: they live as long as their watcher and do their work per event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any, TypeVar

from golf.api.rpc import CallContext, Handler, Rpc

T = TypeVar("T")


class FairCalls:
    """At most ``per_player`` calls of one player in the handlers at once; the rest wait in arrival order."""

    def __init__(self, per_player: int) -> None:
        self.per_player = per_player
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._users: dict[str, int] = {}

    def running(self, key: str) -> int:
        """Calls of ``key`` in the handlers or waiting for a slot (0 once it has none: no state is kept for it)."""
        return self._users.get(key, 0)

    async def run(self, key: str, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, started once ``key`` has a free slot."""
        slots = self._slots.get(key)
        if slots is None:
            slots = self._slots[key] = asyncio.Semaphore(self.per_player)
        self._users[key] = self._users.get(key, 0) + 1
        try:
            async with slots:
                return await call()
        finally:
            left = self._users[key] - 1
            if left:
                self._users[key] = left
            else:  # the player's last call: nothing is kept per player between bursts
                del self._users[key], self._slots[key]

    def gate(self, rpcs: Iterable[Rpc]) -> list[Rpc]:
        """``rpcs`` with each unary handler taking its turn in its caller's share (none when ``per_player`` is 0)."""
        if self.per_player <= 0:
            return list(rpcs)
        return [rpc if rpc.stream is not None else replace(rpc, handler=self._gated(rpc.handler)) for rpc in rpcs]

    def _gated(self, handler: Handler) -> Handler:
        async def gated(request: Any, ctx: CallContext) -> Any:
            key = f"player:{ctx.caller.player_id}" if ctx.caller is not None else f"address:{ctx.address}"
            return await self.run(key, lambda: handler(request, ctx))

        return gated
