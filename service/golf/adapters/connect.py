"""The Connect protocol and gRPC-Web on the HTTP port (connectrpc), for browsers and mobile clients that cannot
speak plain gRPC: every RPC of the table at its standard path ``/golf.v1.TableService/GetTable``, unary and server
streaming, in binary protobuf or proto3 JSON.

No generated service code: the endpoints are built from the same RPC table as the other transports, so a call passes
the same edge (rate limits, bearer token), the same field rules (protovalidate) and the same handler, and a refusal
carries the same rich details as a gRPC status (the standard ``google.rpc`` details, then the ``golf.v1.Error``), under
the Connect code of the gRPC code. Plain gRPC needs HTTP/2 trailers, which the HTTP server does not have: it stays
on the gRPC port.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from time import perf_counter
from typing import Any, TypeVar

from connectrpc._protocol import ConnectWireError  # the library's Connect error encoding
from connectrpc.code import Code
from connectrpc.codec import Codec
from connectrpc.compat import google_protobuf_binary_codec, google_protobuf_json_codec
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf.descriptor_pb2 import MethodOptions
from google.protobuf.message import Message
from protobuf.wkt import Any as WireAny
from starlette.types import Message as AsgiMessage
from starlette.types import Receive, Scope, Send

from golf.adapters.auth.header import one_authorization
from golf.adapters.edge import Edge
from golf.adapters.json_keys import duplicate_key, twice_message
from golf.adapters.logs import REQUEST_ID_HEADER, accept_request_id, request_id
from golf.adapters.metrics import Metrics
from golf.api.error_details import pack, standard_details
from golf.api.errors import ApiError, call_failure, invalid, too_large
from golf.api.rpc import CallContext, ItemStream, Rpc
from golf.api.validation import check_request

log = logging.getLogger("golf.connect")
M = TypeVar("M", bound=Message)

_IDEMPOTENCY = {
    MethodOptions.IDEMPOTENCY_UNKNOWN: IdempotencyLevel.UNKNOWN,
    MethodOptions.NO_SIDE_EFFECTS: IdempotencyLevel.NO_SIDE_EFFECTS,
    MethodOptions.IDEMPOTENT: IdempotencyLevel.IDEMPOTENT,
}


def connect_error(failure: ApiError) -> ConnectError:
    """A refusal in Connect's terms: the Connect code of its gRPC code (they share names), its message, and the
    details of the gRPC status (``golf.api.error_details``), the ``golf.v1.Error`` last."""
    details = [WireAny(type_url=a.type_url, value=a.value) for a in pack([*standard_details(failure), failure.body])]
    return ConnectError(Code[failure.code.name], failure.body.message, details)


def _refusal(err: Exception, rpc: Rpc, ctx: RequestContext[Any, Any]) -> ConnectError:
    """The error a call ends with, and the HTTP headers REST sends with the same refusal."""
    failure = call_failure(err, rpc.name, log)
    if failure.www_authenticate is not None:
        ctx.response_headers["www-authenticate"] = failure.www_authenticate
    if failure.retry_after is not None:
        ctx.response_headers["retry-after"] = str(max(1, math.ceil(failure.retry_after)))
    return connect_error(failure)


class _RequestCodec(Codec[Message, M]):
    """A codec of google.protobuf messages whose undecodable requests are refused as the other transports refuse
    them (INVALID_ARGUMENT with the ``golf.v1.Error``), not with the library's bare error."""

    def __init__(self, inner: Codec[Message, Any]) -> None:
        self._inner = inner

    def name(self) -> str:
        return self._inner.name()

    def encode(self, message: Message) -> bytes:
        return self._inner.encode(message)

    def decode(self, data: bytes | bytearray, message_class: type[M]) -> M:
        try:
            decoded: M = self._inner.decode(data, message_class)
        except Exception as err:  # DecodeError, ParseError, and anything else a parser raises on bad input
            twice = duplicate_key(data) if self.name() == "json" else None
            if twice is not None:  # json_format refuses it without naming the key: name it, as REST does
                raise connect_error(invalid(twice, twice_message(twice))) from err
            name = message_class.DESCRIPTOR.full_name
            raise connect_error(invalid("", f"the request is not a valid {name}")) from err
        return decoded


def _address(ctx: RequestContext[Any, Any]) -> str:
    """The client's host, as REST takes it (the TCP peer, without its port)."""
    peer = ctx.client_address
    if not peer:
        return "unknown"
    return peer.rpartition(":")[0].strip("[]") or peer


async def _admit(rpc: Rpc, edge: Edge, request: Message, ctx: RequestContext[Any, Any]) -> CallContext:
    """The call's context once the edge lets it in and its request keeps the contract's field rules; the request id
    is taken (or made) and sent back."""
    rid = accept_request_id(ctx.request_headers.get(REQUEST_ID_HEADER))
    request_id.set(rid)
    ctx.response_headers[REQUEST_ID_HEADER] = rid
    call = await edge.admit(rpc, one_authorization(ctx.request_headers.getall("authorization")), _address(ctx))
    check_request(request)
    return call


def _method(rpc: Rpc) -> MethodInfo[Any, Any]:
    level = _IDEMPOTENCY.get(rpc.method.GetOptions().idempotency_level, IdempotencyLevel.UNKNOWN)
    return MethodInfo(
        name=rpc.name,
        service_name=rpc.service,
        input=rpc.request,
        output=rpc.response,
        idempotency_level=level,
        stream_type=StreamType.SERVER_STREAM if rpc.stream is not None else StreamType.UNARY,
    )


def _unobserved(code: str, seconds: float) -> None:
    """Where a call's code and time go without metrics."""


def _observer(rpc: Rpc, metrics: Metrics | None) -> Callable[[str, float], None]:
    return metrics.connect(rpc.name).observe if metrics is not None else _unobserved


def _unary(rpc: Rpc, edge: Edge, metrics: Metrics | None) -> Endpoint[Any, Any]:
    """A unary call; its metrics: the final code and the time to answer."""
    observe = _observer(rpc, metrics)

    async def call(request: Message, ctx: RequestContext[Any, Any]) -> Message:
        start = perf_counter()
        try:
            reply = await rpc.handler(request, await _admit(rpc, edge, request, ctx))
        except asyncio.CancelledError:
            observe("CANCELLED", perf_counter() - start)
            raise
        except Exception as err:
            refusal = _refusal(err, rpc, ctx)
            observe(refusal.code.name, perf_counter() - start)
            raise refusal from err
        observe("OK", perf_counter() - start)
        return reply

    return Endpoint.unary(_method(rpc), call)


def _server_stream(rpc: Rpc, edge: Edge, metrics: Metrics | None) -> Endpoint[Any, Any]:
    """A server stream: refused as a unary call is (before its first message, or ending it); the handler's stream is
    closed whatever happens, and cancelled with the call when the client goes away. Its metrics, as gRPC's: the final
    code, and the time to accept or refuse the call."""
    assert rpc.stream is not None
    open_stream = rpc.stream
    observe = _observer(rpc, metrics)

    async def call(request: Message, ctx: RequestContext[Any, Any]) -> AsyncIterator[Message]:
        start = perf_counter()
        setup = 0.0
        items: ItemStream | None = None
        try:
            items = await open_stream(request, await _admit(rpc, edge, request, ctx))
            setup = perf_counter() - start
            async for item in items:
                yield item.message
        except (asyncio.CancelledError, GeneratorExit):
            observe("CANCELLED", setup or perf_counter() - start)
            raise
        except Exception as err:
            refusal = _refusal(err, rpc, ctx)
            observe(refusal.code.name, setup or perf_counter() - start)
            raise refusal from err
        else:
            observe("OK", setup)
        finally:
            if items is not None:
                await items.aclose()

    return Endpoint.server_stream(_method(rpc), call)


class ConnectApp(ConnectASGIApplication[tuple[Rpc, ...]]):
    """Every RPC of the table over Connect and gRPC-Web, one ASGI app (mounted under each service's path)."""

    def __init__(self, rpcs: Iterable[Rpc], edge: Edge, read_max_bytes: int, metrics: Metrics | None = None) -> None:
        def endpoints(table: tuple[Rpc, ...]) -> Mapping[str, Any]:  # the library's union of endpoint kinds
            return {
                f"/{rpc.service}/{rpc.name}": (
                    _server_stream(rpc, edge, metrics) if rpc.stream is not None else _unary(rpc, edge, metrics)
                )
                for rpc in table
            }

        super().__init__(
            service=tuple(rpcs),
            endpoints=endpoints,
            read_max_bytes=read_max_bytes,
            codecs=[_RequestCodec(google_protobuf_binary_codec()), _RequestCodec(google_protobuf_json_codec())],
        )
        self._max_bytes = read_max_bytes
        self._too_large = _too_large_answer(read_max_bytes)

    @property
    def path(self) -> str:
        return "/"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The library's app, with a body over the limit refused 413 (the library says 429, which is for rates):
        before it is read when its ``Content-Length`` says so, else once read past the limit or inflated past it."""
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self._max_bytes:
                await _send_answer(send, self._too_large, close=True)
                return
        await super().__call__(scope, receive, _SizeRefusals(send, self._too_large))


def _too_large_answer(limit: int) -> bytes:
    """The Connect error body of a request over ``limit`` bytes: the code and details gRPC's refusal has."""
    return ConnectWireError.from_exception(connect_error(too_large(limit))).to_json_bytes()


async def _send_answer(send: Send, body: bytes, close: bool = False) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if close:  # the body is never read: the connection goes, rather than the server reading it to throw it away
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": 413, "headers": headers, "trailers": False})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class _SizeRefusals:
    """The app's ``send``, with the library's refusal of a message over its limit made a 413 with our body: a 429
    without ``Retry-After`` (the edge's rate limits always say when to retry; the library's size limit is the only
    other 429)."""

    def __init__(self, send: Send, body: bytes) -> None:
        self._send = send
        self._body = body
        self._replaced = False

    async def __call__(self, message: AsgiMessage) -> None:
        start = message["type"] == "http.response.start"
        if start and message["status"] == 429 and not any(n.lower() == b"retry-after" for n, _ in message["headers"]):
            self._replaced = True
            await _send_answer(self._send, self._body)
            return
        if self._replaced:
            return  # the library's body of the answer replaced
        await self._send(message)


def connect_paths(rpcs: Iterable[Rpc]) -> list[str]:
    """The path prefix of each service (``/golf.v1.TableService``): where the Connect app is mounted."""
    return [f"/{service}" for service in dict.fromkeys(rpc.service for rpc in rpcs)]
