"""The table both transports are built from: each RPC with its handler, and what a call carries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast

from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

from golf.api.contract import HttpRoute, comment, http_route
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
    """An RPC of a ``golf.v1`` service, with its handler. Its REST route and its summary are the contract's: the
    method's ``google.api.http`` option and its comment in the ``.proto``."""

    service: str
    """The service's full name, e.g. ``golf.v1.SolitaireService``."""
    name: str
    request: type[Message]
    response: type[Message]
    handler: Handler
    public: bool = False
    """Callable without an access token (signing in)."""

    def __post_init__(self) -> None:
        method = self.method
        if method.input_type is not self.request.DESCRIPTOR or method.output_type is not self.response.DESCRIPTOR:
            raise ValueError(f"{method.full_name}: the row's request or response type is not the contract's")

    @cached_property
    def method(self) -> MethodDescriptor:
        """The method's descriptor (``KeyError`` at start-up if the service has no such method)."""
        service = self.request.DESCRIPTOR.file.pool.FindServiceByName(self.service)
        return cast(MethodDescriptor, service.methods_by_name[self.name])  # upb's or pure Python's class

    @cached_property
    def route(self) -> HttpRoute:
        return http_route(self.method)

    @property
    def http_method(self) -> str:
        return self.route.method

    @property
    def http_path(self) -> str:
        """With path variables in proto3 JSON form: ``/v1/games/{gameId}``."""
        return self.route.path

    @property
    def summary(self) -> str:
        """The method's comment in the ``.proto``."""
        return comment(self.method.full_name)

    @property
    def tag(self) -> str:
        """The OpenAPI tag: the service's short name."""
        return self.service.rsplit(".", 1)[-1]
