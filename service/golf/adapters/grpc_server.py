"""The gRPC transport: grpc.aio, one generic handler per RPC of the table, health checking and reflection."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.rpc import code_pb2, status_pb2
from grpc_health.v1 import _async as health_async
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import _async as reflection_aio
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc

from golf.adapters.auth.header import one_authorization
from golf.adapters.edge import Edge, grpc_peer_address
from golf.adapters.logs import REQUEST_ID_HEADER, accept_request_id, new_request_id, request_id
from golf.adapters.metrics import Metrics
from golf.adapters.settings import Settings
from golf.api.error_details import pack, standard_details
from golf.api.errors import ApiError, Violation, call_failure, invalid
from golf.api.rpc import CallContext, ItemStream, Rpc, StreamItem
from golf.api.validation import check_request
from golf.v1 import errors_pb2

ERROR_TRAILER = "golf-error-bin"
STATUS_TRAILER = "grpc-status-details-bin"
MAX_DETAILS = 512
"""The most bytes of a refusal's message (the status ``details`` and the ``Error.message`` in the trailers): what
travels in metadata must stay well under the clients' metadata limit (8 KiB by default) whatever the client sent."""
MAX_FIELD = 256
"""The most bytes of ``Error.field`` in the trailers."""
log = logging.getLogger("golf.grpc")


class _Undecodable:
    """What the request deserializer hands the handler in place of bytes that are not a valid request message: the
    deserializer runs before the handler and cannot answer the call, so the handler refuses it."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name


def _decoder(message: type[Any]) -> Callable[[bytes], Any]:
    parse = message.FromString
    type_name = message.DESCRIPTOR.full_name

    def decode(data: bytes) -> Any:
        try:
            return parse(data)
        except Exception:  # DecodeError, and anything else the parser raises on bytes that are not this message
            return _Undecodable(type_name)

    return decode


def _cut(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` bytes of UTF-8, cut at a character and marked with an ellipsis when cut."""
    raw = text.encode("utf-8", "replace")
    if len(raw) <= limit:
        return text
    return raw[: limit - 3].decode("utf-8", "ignore") + "…"


def _bounded(failure: ApiError) -> ApiError:
    """``failure`` with its message, field and field violations cut to what may travel in gRPC metadata (a copy
    when cut). The message goes out three times (``grpc-message``, ``golf-error-bin``, the status) and the
    violations once: together well under the 8 KiB a client takes, past which gRPC starts refusing calls."""
    body = failure.body
    violations = failure.violations
    texts = len(body.message) + len(body.field) + sum(len(v.field) + len(v.description) for v in violations)
    if texts * 4 <= MAX_DETAILS and len(body.field) * 4 <= MAX_FIELD:
        return failure  # short enough whatever its characters: the usual case, without encoding anything
    message, field = _cut(body.message, MAX_DETAILS), _cut(body.field, MAX_FIELD)
    kept: list[Violation] = []
    room = MAX_DETAILS
    for v in violations:
        cut_field, description = _cut(v.field, MAX_FIELD), _cut(v.description, MAX_FIELD)
        room -= len(cut_field.encode()) + len(description.encode())
        if room < 0:
            break
        kept.append(Violation(cut_field, description, v.rule))
    cut = errors_pb2.Error()
    cut.CopyFrom(body)
    cut.message, cut.field = message, field
    return ApiError(cut, failure.code, failure.http_status, failure.retry_after, failure.www_authenticate, kept)


def _metadata(context: grpc.aio.ServicerContext[Any, Any]) -> tuple[str, list[str]]:
    """The request id and the ``authorization`` values sent with the call (``one_authorization`` refuses two)."""
    rid: str | None = None
    authorization: list[str] = []
    for key, value in context.invocation_metadata() or ():
        if key == REQUEST_ID_HEADER:
            rid = accept_request_id(value if isinstance(value, str) else None)
        elif key == "authorization" and isinstance(value, str):
            authorization.append(value)
    return rid or new_request_id(), authorization


def rich_status(failure: ApiError) -> bytes:
    """The standard ``google.rpc.Status`` of a refusal (gRPC's rich error model, as Google's APIs send it), read by
    any gRPC client's status library, grpcurl and buf curl: the standard details of ``standard_details`` (the same
    list a REST body carries in ``Error.details``), then the whole ``golf.v1.Error`` (as in ``golf-error-bin``)."""
    body = failure.body
    status = status_pb2.Status(code=failure.code.value[0], message=body.message)
    status.details.extend(pack([*standard_details(failure), body]))
    assert status.code != code_pb2.OK
    raw: bytes = status.SerializeToString()
    return raw


async def _admit(
    rpc: Rpc, edge: Edge, request: Any, authorization: list[str], context: grpc.aio.ServicerContext[Any, Any]
) -> CallContext:
    """The call's context once the edge lets it in and its request decodes and keeps the contract's field rules
    (raises the refusal otherwise): the same for unary and streaming calls."""
    ctx = await edge.admit(rpc, one_authorization(authorization), grpc_peer_address(context.peer()))
    if type(request) is _Undecodable:
        raise invalid("", f"the request is not a valid {request.type_name}")
    check_request(request)
    return ctx


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], failure: ApiError, rid: str) -> None:
    """End the call with ``failure``: its status, with the rich details and the ``Error`` in the trailers."""
    failure = _bounded(failure)
    context.set_trailing_metadata(
        (
            (ERROR_TRAILER, failure.body.SerializeToString()),
            (STATUS_TRAILER, rich_status(failure)),
            (REQUEST_ID_HEADER, rid),
        )
    )
    await context.abort(failure.code, failure.body.message)


def _unary(
    rpc: Rpc, edge: Edge, metrics: Metrics | None
) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
    observe = metrics.rpc(rpc.name).observe if metrics is not None else None

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        start = perf_counter()
        rid, authorization = _metadata(context)
        request_id.set(rid)
        try:
            ctx = await _admit(rpc, edge, request, authorization, context)
            reply = await rpc.handler(request, ctx)
        except asyncio.CancelledError:
            # grpc.aio cancels the handler when the client cancels the call or its deadline passes (the client
            # may cancel before the server's own timer fires, so the two are not told apart): the cancellation
            # goes on into the solver's queue and its worker, whose search stops. Not an error of the server's.
            if observe is not None:
                observe("CANCELLED", perf_counter() - start)
            raise
        except Exception as err:
            failure = call_failure(err, rpc.name, log)
        else:
            context.set_trailing_metadata(((REQUEST_ID_HEADER, rid),))
            if observe is not None:
                observe("OK", perf_counter() - start)
            return reply
        if observe is not None:
            observe(failure.code.name, perf_counter() - start)
        await _refuse(context, failure, rid)

    return call


def _stream_bytes(item: StreamItem) -> bytes:
    """A stream item's message in protobuf bytes, encoded once for every call it goes to."""
    return item.encoded("grpc", lambda it: it.message.SerializeToString())


def _server_stream(
    rpc: Rpc, edge: Edge, metrics: Metrics | None
) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], AsyncIterator[StreamItem]]:
    """A server-streaming RPC: admitted, decoded and checked as a unary call is, refused the same way (a refusal
    before the first message or one that ends the stream: the status with its rich details in the trailers); the
    handler's stream is closed whatever happens, and cancelled when the client goes away (grpc.aio cancels the
    call's task). Its metrics: the final code, and the time to accept or refuse the call."""
    assert rpc.stream is not None
    open_stream = rpc.stream
    observe = metrics.rpc(rpc.name).observe if metrics is not None else None

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[StreamItem]:
        start = perf_counter()
        setup = 0.0
        rid, authorization = _metadata(context)
        request_id.set(rid)
        items: ItemStream | None = None
        try:
            ctx = await _admit(rpc, edge, request, authorization, context)
            items = await open_stream(request, ctx)
            setup = perf_counter() - start
            async for item in items:
                yield item
        except asyncio.CancelledError:
            if observe is not None:
                observe("CANCELLED", setup or perf_counter() - start)
            raise
        except Exception as err:
            failure = call_failure(err, rpc.name, log)
        else:
            context.set_trailing_metadata(((REQUEST_ID_HEADER, rid),))
            if observe is not None:
                observe("OK", setup)
            return
        finally:
            if items is not None:
                await items.aclose()
        if observe is not None:
            observe(failure.code.name, setup or perf_counter() - start)
        await _refuse(context, failure, rid)

    return call


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def _serve_reflection(server: grpc.aio.Server, services: tuple[str, ...]) -> None:
    """Server reflection under both names clients ask for: ``grpc.reflection.v1`` (newer grpcurl, Postman and
    buf curl try it first) and ``v1alpha``. v1 is v1alpha renamed, the same messages on the wire, so one servicer
    answers both; the v1 file is added to the descriptor pool so reflection can describe itself too."""
    _add_reflection_v1_descriptor()
    servicer = reflection_aio.ReflectionServicer((*services, reflection.SERVICE_NAME, REFLECTION_V1))
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    v1 = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(REFLECTION_V1, {"ServerReflectionInfo": v1}),)
    )


def _add_reflection_v1_descriptor() -> None:
    pool = descriptor_pool.Default()
    try:
        pool.FindServiceByName(REFLECTION_V1)
        return
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    old, new = ".grpc.reflection.v1alpha.", ".grpc.reflection.v1."
    proto.name, proto.package = "grpc/reflection/v1/reflection.proto", "grpc.reflection.v1"
    for message in proto.message_type:
        for field in message.field:
            if field.type_name.startswith(old):  # setting an empty type name would mark scalars as messages
                field.type_name = new + field.type_name[len(old) :]
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new)
            method.output_type = method.output_type.replace(old, new)
    pool.Add(proto)


@dataclass(frozen=True, slots=True)
class GrpcLimits:
    """What one gRPC connection may hold and send (the ``GOLF_`` settings of the same names)."""

    idle_timeout_seconds: float = Settings.model_fields["idle_timeout_seconds"].default
    header_timeout_seconds: float = Settings.model_fields["header_timeout_seconds"].default
    max_connections: int = Settings.model_fields["max_connections"].default
    max_header_bytes: int = Settings.model_fields["max_header_bytes"].default

    @classmethod
    def from_settings(cls, settings: Settings) -> GrpcLimits:
        """The limits ``settings`` set."""
        return cls(**{name: getattr(settings, name) for name in cls.__dataclass_fields__})


MAX_CONCURRENT_STREAMS = 100
"""Calls in progress at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS; gRPC sets none): a client
opens more connections for more, each of them counted against ``max_connections``."""
MIN_PING_INTERVAL_MS = 10_000
"""The most often a client may ping a connection (keepalive); a client that pings more often is sent GOAWAY."""
SERVER_PING_MS = 60_000
"""How often the server pings a connection to find it gone (a peer that vanished without closing it)."""
PING_TIMEOUT_MS = 20_000
"""How long the server waits for the answer to its ping before it drops the connection."""


def server_options(limits: GrpcLimits) -> list[tuple[str, int]]:
    """The channel arguments that hold the edge's limits on the gRPC port (grpc core's names)."""
    return [
        ("grpc.so_reuseport", 0),
        ("grpc.max_connection_idle_ms", int(limits.idle_timeout_seconds * 1000)),
        ("grpc.server_handshake_timeout_ms", int(limits.header_timeout_seconds * 1000)),
        ("grpc.max_allowed_incoming_connections", limits.max_connections),
        ("grpc.max_concurrent_streams", MAX_CONCURRENT_STREAMS),
        # Metadata past the soft limit is refused (RESOURCE_EXHAUSTED), past the absolute one the stream is reset.
        ("grpc.max_metadata_size", limits.max_header_bytes),
        ("grpc.absolute_max_metadata_size", 2 * limits.max_header_bytes),
        # Keepalive enforcement: pings at most every 10 s, even without calls (mobile clients ping idle channels),
        # two strikes, then GOAWAY; an idle connection still ends after the idle timeout.
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", MIN_PING_INTERVAL_MS),
        ("grpc.http2.max_ping_strikes", 2),
        ("grpc.keepalive_time_ms", SERVER_PING_MS),
        ("grpc.keepalive_timeout_ms", PING_TIMEOUT_MS),
    ]


def build_grpc_server(
    rpcs: list[Rpc], address: str, edge: Edge, metrics: Metrics | None = None, limits: GrpcLimits | None = None
) -> tuple[grpc.aio.Server, health_async.HealthServicer, int]:
    """A server with the RPCs, health and reflection, bound to ``address``, holding ``limits`` (the defaults when
    None); returns the bound port too."""
    server = grpc.aio.server(options=server_options(limits or GrpcLimits()))
    services: dict[str, dict[str, grpc.RpcMethodHandler[Any, Any]]] = {}
    for rpc in rpcs:
        handler: grpc.RpcMethodHandler[Any, Any]
        if rpc.stream is not None:
            handler = grpc.unary_stream_rpc_method_handler(
                _server_stream(rpc, edge, metrics),
                request_deserializer=_decoder(rpc.request),
                response_serializer=_stream_bytes,
            )
        else:
            handler = grpc.unary_unary_rpc_method_handler(
                _unary(rpc, edge, metrics),
                request_deserializer=_decoder(rpc.request),
                response_serializer=rpc.response.SerializeToString,
            )
        services.setdefault(rpc.service, {})[rpc.name] = handler
    server.add_generic_rpc_handlers(
        tuple(grpc.method_handlers_generic_handler(name, handlers) for name, handlers in services.items())
    )
    health_servicer = health_async.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    _serve_reflection(server, (*services, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name))
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not bind gRPC to {address}")
    return server, health_servicer, port
