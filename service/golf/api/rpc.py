"""The table both transports are built from: each RPC with its handler, and what a call carries."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, TypeVar, cast

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
T = TypeVar("T")


@dataclass(eq=False, slots=True)
class StreamItem:
    """One message of a server stream, ready for both transports: ``message`` (the RPC's response, for gRPC),
    and for Server-Sent Events its ``event`` name, its ``id`` (what a client resumes from; None: not resumable)
    and the message its ``data`` is (a newline-delimited JSON stream sends ``data`` alone, one per line). The same
    item may go to many subscribers: ``encoded`` makes each encoding once."""

    message: Message
    event: str
    data: Message
    id: str | None = None
    cache: dict[str, Any] = field(default_factory=dict)

    def encoded(self, form: str, encode: Callable[[StreamItem], T]) -> T:
        """``encode(self)``, made once per ``form`` (``grpc``, ``sse``, ``ndjson``) and kept with the item."""
        done = self.cache.get(form)
        if done is None:
            done = self.cache[form] = encode(self)
        return cast(T, done)


class ItemStream(Protocol):
    """What a streaming handler returns once the call is accepted: its items, then ``aclose`` (always)."""

    def __aiter__(self) -> ItemStream: ...
    async def __anext__(self) -> StreamItem: ...
    async def aclose(self) -> None: ...


StreamHandler = Callable[[Any, CallContext], Awaitable[ItemStream]]
"""A server-streaming RPC's handler: it refuses the call (raising, before anything is sent) or returns the stream.
An ``ApiError`` or ``AppError`` raised by the stream ends it with that status."""


async def _unary_only(request: Any, ctx: CallContext) -> Message:
    raise TypeError("a server-streaming RPC is served by its stream handler")


SSE = "sse"
"""A server stream over REST as Server-Sent Events (``text/event-stream``)."""
NDJSON = "ndjson"
"""A server stream over REST as newline-delimited JSON (``application/x-ndjson``)."""


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
    stream: StreamHandler | None = None
    """The handler of a server-streaming RPC (``handler`` is then unused): see :func:`streaming`."""
    resume_from: str = ""
    """Of a server-streaming RPC: the request field (proto3 JSON name) a Server-Sent Events client's
    ``Last-Event-ID`` header sets, so a reconnecting browser resumes where it was."""
    event_names: tuple[tuple[str, str], ...] = ()
    """Of a server-streaming RPC: the Server-Sent Events ``event`` name of members of the response's ``oneof``
    (proto3 JSON name, event name) where it is not the member's own name (for the documentation; the handler's
    ``StreamItem`` says it for each message)."""
    rest_stream: str = SSE
    """Of a server-streaming RPC: its REST form, :data:`SSE` (Server-Sent Events, for live streams a browser follows)
    or :data:`NDJSON` (newline-delimited JSON, one item's ``data`` per line, for exports read to their end)."""

    def event_name(self, member: str) -> str:
        """The Server-Sent Events ``event`` name of the response's ``oneof`` member ``member`` (JSON name)."""
        return dict(self.event_names).get(member, member)

    def __post_init__(self) -> None:
        if self.rest_stream not in (SSE, NDJSON):
            raise ValueError(f"{self.name}: rest_stream must be {SSE!r} or {NDJSON!r}")
        method = self.method
        if method.input_type is not self.request.DESCRIPTOR or method.output_type is not self.response.DESCRIPTOR:
            raise ValueError(f"{method.full_name}: the row's request or response type is not the contract's")
        if method.client_streaming or method.server_streaming != (self.stream is not None):
            raise ValueError(f"{method.full_name}: a server-streaming method needs a stream handler, and only it")

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


def streaming(
    service: str,
    name: str,
    request: type[Message],
    response: type[Message],
    stream: StreamHandler,
    public: bool = False,
    resume_from: str = "",
    event_names: tuple[tuple[str, str], ...] = (),
    rest_stream: str = SSE,
) -> Rpc:
    """The row of a server-streaming RPC; ``rest_stream`` is its REST form (:data:`SSE` or :data:`NDJSON`)."""
    return Rpc(service, name, request, response, _unary_only, public, stream, resume_from, event_names, rest_stream)
