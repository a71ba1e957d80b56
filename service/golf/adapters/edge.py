"""The edge every call passes first, on both transports: the client address's rate limit, then the bearer token
turned into a ``Caller`` (or refused), then the player's rate limit.

It is one object called by each transport's per-RPC wrapper (gRPC's generic handler, REST's route), which is
where an interceptor and a middleware would sit; calling it there keeps one code path for both and lets public
RPCs (signing in) skip the token check by their row in the RPC table.
"""

from __future__ import annotations

from typing import Protocol

from golf.api.rpc import CallContext, Rpc
from golf.app.identity import Caller
from golf.app.ports import RateLimiter


class TokenVerifier(Protocol):
    async def verify(self, authorization: str | None) -> Caller: ...


class Edge:
    def __init__(self, tokens: TokenVerifier, limiter: RateLimiter) -> None:
        self.tokens = tokens
        self.limiter = limiter

    async def admit(self, rpc: Rpc, authorization: str | None, address: str) -> CallContext:
        """The call's context, or ``Unauthenticated`` / ``RateLimited``."""
        await self.limiter.hit("address", address)
        if rpc.public:
            return CallContext(None, address)
        caller = await self.tokens.verify(authorization)
        await self.limiter.hit("player", caller.player_id)
        return CallContext(caller, address)


def grpc_peer_address(peer: str | None) -> str:
    """The client's address from gRPC's peer string (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``, ``unix:...``)."""
    if not peer:
        return "unknown"
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    if kind == "ipv6":
        host = rest.rpartition(":")[0] or rest
        return host.strip("[]")
    return kind or "unknown"
