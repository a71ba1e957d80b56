"""The table both transports are built from: each RPC with its REST route, and what a call carries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from golf.app.errors import Unauthenticated
from golf.app.identity import Caller


@dataclass(frozen=True, slots=True)
class CallContext:
    """Who is calling, as the edge established it: the verified caller (None only on public RPCs) and the
    client's address (the TCP peer)."""

    caller: Caller | None
    address: str

    @property
    def player(self) -> Caller:
        """The caller of an RPC that needs one (the edge refuses such calls without a token first)."""
        if self.caller is None:
            raise Unauthenticated("sign in first", invalid_token=False)
        return self.caller


Handler = Callable[[Any, CallContext], Awaitable[Message]]


@dataclass(frozen=True)
class Rpc:
    """An RPC of a ``golf.v1`` service and its REST route."""

    service: str
    """The service's full name, e.g. ``golf.v1.SolitaireService``."""
    name: str
    request: type[Message]
    response: type[Message]
    http_method: str
    http_path: str
    summary: str
    handler: Handler
    public: bool = False
    """Callable without an access token (signing in)."""

    @property
    def tag(self) -> str:
        """The OpenAPI tag: the service's short name."""
        return self.service.rsplit(".", 1)[-1]
