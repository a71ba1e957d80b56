"""The REST gateway: FastAPI routes built from the same RPC table and handlers as gRPC, each at the route its
method's ``google.api.http`` option declares (a path variable is one segment, never running into a custom verb).

Bodies are the proto3 JSON mapping of the request and response messages (lowerCamelCase names, enums written as
strings, 64-bit integers as strings, fields with default values included). Query strings are read by the same rules
(``golf.adapters.json_input``): an enum by name or by number; a key given twice in a body is refused. A body over
``max_body_bytes`` is refused (413) before it is read: on its ``Content-Length``, or as soon as the bytes streamed
in pass the limit.
Unknown paths (404) and methods a path does not have (405, ``Allow`` listing every method of the path) get the
same ``Error`` body and ``x-request-id`` header as every other refusal. Keys of the request the message does not
have are ignored and named in the ``x-golf-unknown-fields`` header; a handler whose client hangs up is cancelled.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response, StreamingResponse
from fastapi.telemetry import TelemetryConfig
from starlette.convertors import Convertor, register_url_convertor
from starlette.requests import ClientDisconnect
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.types import Receive, Scope, Send

from golf.adapters.auth.header import one_authorization
from golf.adapters.connect import ConnectApp, connect_paths
from golf.adapters.docs import add_docs
from golf.adapters.edge import Edge
from golf.adapters.hangups import CLIENT_GONE, unless_client_leaves
from golf.adapters.health import Readiness
from golf.adapters.json_input import UNKNOWN_FIELDS_HEADER, clip, parse_body, parse_object, unknown_fields_header
from golf.adapters.logs import REQUEST_ID_HEADER, accept_request_id, request_id
from golf.adapters.metrics import CONTENT_TYPE_LATEST, Metrics
from golf.adapters.openapi import components, rpc_openapi
from golf.adapters.proto_json import memoise, to_json
from golf.adapters.settings import Settings
from golf.adapters.web import add_play
from golf.api.error_details import rest_body
from golf.api.errors import ApiError, call_failure, internal_error, invalid, method_not_allowed, to_api_error, too_large
from golf.api.rpc import NDJSON, SSE, ItemStream, Rpc, StreamItem
from golf.api.validation import check_request
from golf.app.errors import AppError, NotFound
from golf.v1 import errors_pb2

log = logging.getLogger("golf.rest")
# Parts of a table that repeat unchanged from one reply or event to the next: its rules, its seats, the grids
# (one card changes per move), the score sheet (once per hole) and the finished holes (for the rest of the match);
# and of a solitaire game: its columns (a move changes one) and its legal moves.
for _part in (
    "CardGolfRules",
    "TableSeat",
    "Grid",
    "GridCard",
    "ScoreSheet",
    "HoleResult",
    "HoleView",
    "Column",
    "Move",
):
    memoise(f"golf.v1.{_part}")
JSON = "application/json"
EVENT_STREAM = "text/event-stream"
NDJSON_TYPE = "application/x-ndjson"
RECONNECT_MS = 1000
"""The ``retry`` an event stream starts with: how long a browser's ``EventSource`` waits before reconnecting."""


def check_declared_length(request: Request, limit: int) -> None:
    """``too_large`` when the request's ``Content-Length`` says its body is over ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise too_large(limit)


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, or ``too_large`` without reading it when its ``Content-Length`` says it is over
    ``limit`` bytes, and as soon as the bytes received pass ``limit`` when it has none (chunked) or lies."""
    check_declared_length(request, limit)
    chunks: list[bytes] = []
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise too_large(limit)
            chunks.append(chunk)
    except ClientDisconnect:
        raise invalid("body", "the client went away before the whole body was sent") from None
    return b"".join(chunks)


def _route(rpc: Rpc, edge: Edge, metrics: Metrics | None, max_body_bytes: int) -> Any:
    path_fields = rpc.route.path_fields
    has_body = rpc.route.body
    observe = metrics.route(rpc.http_method, rpc.http_path).observe if metrics is not None else None

    async def answer(request: Request, unknown: list[str]) -> tuple[bytes, int, ApiError | None]:
        try:
            if has_body:
                # First, before the token and the rate limits: a body too large to take is refused as it is
                # announced, and the connection closed, whoever sends it.
                check_declared_length(request, max_body_bytes)
            client = request.client
            authorization = one_authorization(request.headers.getlist("authorization"))
            ctx = await edge.admit(rpc, authorization, client.host if client else "unknown")
            message = rpc.request()
            if has_body:
                unknown += parse_body(await read_body(request, max_body_bytes), message)
            else:
                unknown += parse_object(dict(request.query_params), message)
            if path_fields:
                parse_object({f: request.path_params[f] for f in path_fields}, message)
            check_request(message)
            reply = await unless_client_leaves(request, rpc.handler(message, ctx))
            if reply is None:
                return b"", CLIENT_GONE, None
            return to_json(reply), 200, None
        except Exception as err:
            failure = call_failure(err, rpc.name, log)
        return to_json(rest_body(failure)), failure.http_status, failure

    async def endpoint(request: Request) -> Response:
        start = perf_counter()
        rid = accept_request_id(request.headers.get(REQUEST_ID_HEADER))
        request_id.set(rid)
        unknown: list[str] = []  # the request's keys the message does not have: ignored, and named in a header
        body, status, failure = await answer(request, unknown)
        if observe is not None:
            observe(status, perf_counter() - start)
        headers = {REQUEST_ID_HEADER: rid}
        if unknown:
            headers[UNKNOWN_FIELDS_HEADER] = unknown_fields_header(unknown)
        if failure is not None:
            if failure.www_authenticate is not None:
                headers["www-authenticate"] = failure.www_authenticate
            if failure.retry_after is not None:
                headers["retry-after"] = str(max(1, math.ceil(failure.retry_after)))
            if status == 413:
                # The rest of the body is never read: closing the connection spares the client sending it (and
                # the server draining it) before the next request could start.
                headers["connection"] = "close"
        return Response(body, status_code=status, media_type=JSON, headers=headers)

    endpoint.__name__ = rpc.name
    return endpoint


# -- server streams as Server-Sent Events ------------------------------------------------------------------------
def _sse_frame(item: StreamItem) -> bytes:
    """One event: ``id`` (when the item has one), ``event``, and ``data``, the proto3 JSON of the item's data (one
    line: JSON escapes line breaks). Encoded once for every client the item goes to."""

    def encode(it: StreamItem) -> bytes:
        head = f"id: {it.id}\n" if it.id is not None else ""
        return f"{head}event: {it.event}\ndata: ".encode() + to_json(it.data) + b"\n\n"

    return item.encoded("sse", encode)


def _sse_error(failure: ApiError) -> bytes:
    """The last event of a stream that ends with a refusal: ``event: error`` with the ``Error`` body as data (for
    UNAVAILABLE, after ``retry`` set to its retry delay: the client reconnects with ``Last-Event-ID``)."""
    retry = f"retry: {max(1, math.ceil(failure.retry_after * 1000))}\n" if failure.retry_after is not None else ""
    return f"{retry}event: error\ndata: ".encode() + to_json(rest_body(failure)) + b"\n\n"


# -- server streams as newline-delimited JSON ------------------------------------------------------------------
def _ndjson_line(item: StreamItem) -> bytes:
    """One line: the proto3 JSON of the item's data (JSON escapes line breaks), then a line feed."""
    return item.encoded("ndjson", lambda it: to_json(it.data) + b"\n")


def _ndjson_error(failure: ApiError) -> bytes:
    """The last line of a stream that ends with a refusal: ``{"error": Error}``."""
    return b'{"error":' + to_json(rest_body(failure)) + b"}\n"


@dataclass(frozen=True, slots=True)
class _Form:
    """How a server stream is written over REST: its media type, what starts it, each item and a closing refusal."""

    media_type: str
    head: bytes
    frame: Callable[[StreamItem], bytes]
    error: Callable[[ApiError], bytes]


_FORMS = {
    SSE: _Form(EVENT_STREAM, f"retry: {RECONNECT_MS}\n".encode(), _sse_frame, _sse_error),
    NDJSON: _Form(NDJSON_TYPE, b"", _ndjson_line, _ndjson_error),
}


class _ItemStream(StreamingResponse):
    """A server stream in its REST form (Server-Sent Events or newline-delimited JSON). The first item was taken
    before the response began (refusals are plain JSON errors); the rest go out as they come. A refusal that ends
    the stream is its last event or line. When the client hangs up, the stream is cancelled at once (not at its next
    write) and closed."""

    def __init__(self, items: ItemStream, first: StreamItem, headers: dict[str, str], form: _Form) -> None:
        super().__init__(iter(()), media_type=form.media_type, headers=headers)
        self.items = items
        self.first = first
        self.form = form

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        streaming = asyncio.current_task()
        assert streaming is not None
        gone = False
        form = self.form

        async def hang_up() -> None:
            nonlocal gone
            while (await receive())["type"] != "http.disconnect":
                pass
            gone = True
            streaming.cancel()

        watch = asyncio.ensure_future(hang_up())
        try:
            await send({"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers})
            first = form.head + form.frame(self.first)
            await send({"type": "http.response.body", "body": first, "more_body": True})
            end = b""
            try:
                async for item in self.items:
                    await send({"type": "http.response.body", "body": form.frame(item), "more_body": True})
            except ApiError as err:
                end = form.error(err)
            except AppError as err:
                end = form.error(to_api_error(err))
            except Exception:
                log.exception("unhandled error in a server stream")
                end = form.error(internal_error())
            await send({"type": "http.response.body", "body": end, "more_body": False})
        except asyncio.CancelledError:
            if not gone:
                raise
            streaming.uncancel()  # the client left: nothing more to send, and nothing wrong
        finally:
            watch.cancel()
            await self.items.aclose()


_EVENT_ID = re.compile(r"[0-9]{1,19}")


def _event_id(value: str) -> int:
    """A ``Last-Event-ID``: an event's ``id`` as the stream sent it, a sequence number; else ``invalid``."""
    if not _EVENT_ID.fullmatch(value) or int(value) >= 2**63:
        raise invalid("Last-Event-ID", "Last-Event-ID must be the id of an event of this stream (a sequence number)")
    return int(value)


def _stream_route(rpc: Rpc, edge: Edge, metrics: Metrics | None) -> Any:
    """A server-streaming RPC at its GET route, as Server-Sent Events or newline-delimited JSON (``rest_stream``).
    The request comes from the query and the path, and for Server-Sent Events the ``Last-Event-ID`` header sets the
    row's ``resume_from`` field (it wins over the query: it is what the browser received last). Refusals before the
    stream starts are the usual JSON errors. An event stream with nothing to send (ever) is 204, which tells an
    ``EventSource`` to stop reconnecting; a newline-delimited one is an empty 200 (no lines: nothing matched)."""
    assert rpc.stream is not None
    open_stream = rpc.stream
    form = _FORMS[rpc.rest_stream]
    events = rpc.rest_stream == SSE
    path_fields = rpc.route.path_fields
    observe = metrics.route(rpc.http_method, rpc.http_path).observe if metrics is not None else None

    async def endpoint(request: Request) -> Response:
        start = perf_counter()
        rid = accept_request_id(request.headers.get(REQUEST_ID_HEADER))
        request_id.set(rid)
        unknown: list[str] = []
        headers = {REQUEST_ID_HEADER: rid}
        items: ItemStream | None = None
        first: StreamItem | None = None
        try:
            client = request.client
            authorization = one_authorization(request.headers.getlist("authorization"))
            ctx = await edge.admit(rpc, authorization, client.host if client else "unknown")
            message = rpc.request()
            unknown += parse_object(dict(request.query_params), message)
            if path_fields:
                parse_object({f: request.path_params[f] for f in path_fields}, message)
            resumed = request.headers.get("last-event-id")
            if events and rpc.resume_from and resumed is not None:
                parse_object({rpc.resume_from: _event_id(resumed)}, message)
            check_request(message)
            items = await open_stream(message, ctx)
            try:
                first = await items.__anext__()
            except StopAsyncIteration:
                first = None
        except Exception as err:  # a refusal, before anything was sent
            if items is not None:
                await items.aclose()
            failure = call_failure(err, rpc.name, log)
            if observe is not None:
                observe(failure.http_status, perf_counter() - start)
            if failure.www_authenticate is not None:
                headers["www-authenticate"] = failure.www_authenticate
            if failure.retry_after is not None:
                headers["retry-after"] = str(max(1, math.ceil(failure.retry_after)))
            return Response(
                to_json(rest_body(failure)), status_code=failure.http_status, media_type=JSON, headers=headers
            )
        if unknown:
            headers[UNKNOWN_FIELDS_HEADER] = unknown_fields_header(unknown)
        if first is None:
            await items.aclose()
            status = 204 if events else 200
            if observe is not None:
                observe(status, perf_counter() - start)
            if events:
                return Response(status_code=204, headers=headers)
            return Response(b"", media_type=form.media_type, headers=headers)
        if observe is not None:
            observe(200, perf_counter() - start)
        # No caching, and no buffering by a proxy (nginx reads X-Accel-Buffering): each event goes out as it comes.
        headers.update({"cache-control": "no-cache", "x-accel-buffering": "no"})
        return _ItemStream(items, first, headers, form)

    endpoint.__name__ = rpc.name
    return endpoint


def _operations(app: FastAPI, metrics: Metrics | None, readiness: Readiness | None) -> None:
    """``/healthz`` (live), ``/readyz`` (ready: database and schema) and ``/metrics`` (Prometheus), outside the
    API's OpenAPI document."""

    async def healthz() -> Response:
        return Response(b'{"status":"ok"}', media_type=JSON)

    async def readyz() -> Response:
        if readiness is None:
            return Response(b'{"status":"ready"}', media_type=JSON)
        verdict = await readiness.check()
        body = {"status": "ready" if verdict.ready else "not ready", "checks": verdict.checks}
        return Response(json.dumps(body).encode(), status_code=200 if verdict.ready else 503, media_type=JSON)

    app.add_api_route("/healthz", healthz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/readyz", readyz, methods=["GET"], include_in_schema=False)
    if metrics is not None:

        async def metrics_page() -> Response:
            return Response(await metrics.exposition(), media_type=CONTENT_TYPE_LATEST)

        app.add_api_route("/metrics", metrics_page, methods=["GET"], include_in_schema=False)


def _refusal(request: Request, failure: ApiError, headers: dict[str, str] | None = None) -> Response:
    """A refusal made outside the RPC routes, in the same shape: the ``Error`` body and ``x-request-id``."""
    rid = accept_request_id(request.headers.get(REQUEST_ID_HEADER))
    request_id.set(rid)
    return Response(
        to_json(rest_body(failure)),
        status_code=failure.http_status,
        media_type=JSON,
        headers={REQUEST_ID_HEADER: rid, **(headers or {})},
    )


def _routing_refusals(app: FastAPI) -> None:
    """404 and 405 from the router as ``Error`` bodies. Starlette answers 405 from the first route whose path
    matches and lists only that route's methods; ``Allow`` here lists those of every route matching the path."""

    async def not_found(request: Request, _exc: Exception) -> Response:
        failure = to_api_error(NotFound(f"nothing is served at {clip(request.url.path)!r}; see /openapi.json"))
        return _refusal(request, failure)

    async def not_allowed(request: Request, _exc: Exception) -> Response:
        allowed: set[str] = set()
        for route in app.router.routes:
            if isinstance(route, BaseRoute) and route.matches(request.scope)[0] != Match.NONE:
                allowed |= getattr(route, "methods", None) or set()
        methods = sorted(allowed)
        failure = method_not_allowed(clip(request.method), methods)
        return _refusal(request, failure, {"allow": ", ".join(methods)})

    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_allowed)


class _Segment(Convertor[str]):
    """A path variable as ``google.api.http`` reads it: one segment, not running into a custom verb (``:hint``).
    So ``/v1/games/g1:hint`` is Hint's path only, never GetGame's with ``gameId`` ``g1:hint``."""

    regex = "[^/:]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("segment", _Segment())


def _starlette_path(path: str) -> str:
    return re.sub(r"{(\w+)}", r"{\1:segment}", path)


def _fastapi_telemetry() -> TelemetryConfig | None:
    """FastAPI's own OpenTelemetry (a span, metrics and logs per request) as it comes (None) when this process has
    OpenTelemetry set up as the app is built, or asks FastAPI to set it up (``FASTAPI_OTEL_AUTO_CONFIGURE``); else
    off. Left on with nothing set up, FastAPI asks on every request whether a provider was set up since (three
    provider look-ups and an environment read, a noticeable share of a move's CPU: bench/README.md): the service's
    metrics are Prometheus' (``/metrics``)."""
    if os.getenv("FASTAPI_OTEL_AUTO_CONFIGURE", "").lower() == "true":
        return None
    from opentelemetry import _logs, metrics, trace

    providers = (trace.get_tracer_provider(), metrics.get_meter_provider(), _logs.get_logger_provider())
    if any(type(p).__name__ not in _OTEL_PLACEHOLDERS for p in providers):
        return None
    return {"tracing": False, "metrics": False, "logs": False}


_OTEL_PLACEHOLDERS = {"ProxyTracerProvider", "_ProxyMeterProvider", "ProxyLoggerProvider"}
"""OpenTelemetry's stand-ins for a provider nobody has set (FastAPI reads them the same way)."""


def build_rest_app(
    rpcs: list[Rpc],
    edge: Edge,
    metrics: Metrics | None = None,
    readiness: Readiness | None = None,
    max_body_bytes: int = Settings.model_fields["max_body_bytes"].default,
) -> FastAPI:
    """The FastAPI app serving every RPC at its REST route, with OpenAPI at ``/openapi.json`` and ``/docs``,
    and the operations endpoints ``/healthz``, ``/readyz`` and ``/metrics``; bodies over ``max_body_bytes`` are
    refused with 413."""
    app = FastAPI(
        title="Golf game service",
        version="1.0.0",
        description="Golf solitaire and card Golf over REST. The same API is served over gRPC "
        "(package golf.v1); REST bodies are the proto3 JSON mapping of the same messages. Refusals carry an "
        "`Error` body with a typed `reason`. Sign in first (`POST /v1/players:guest`) and send "
        "`Authorization: Bearer <accessToken>` with every other call.",
        docs_url=None,  # FastAPI's pages load from a CDN: add_docs serves them from the package instead
        redoc_url=None,
        telemetry=_fastapi_telemetry(),
    )
    add_docs(app)
    add_play(app)
    # Plain Starlette routes: the endpoints read the request themselves, so FastAPI's dependency machinery
    # would only cost time (its measured cost per request is in bench/README.md). The OpenAPI document is built from
    # the RPC table.
    for rpc in rpcs:
        route = (
            _stream_route(rpc, edge, metrics) if rpc.stream is not None else _route(rpc, edge, metrics, max_body_bytes)
        )
        app.router.routes.append(Route(_starlette_path(rpc.http_path), route, methods=[rpc.http_method], name=rpc.name))
    # The Connect protocol and gRPC-Web at the standard paths (/golf.v1.TableService/GetTable), beside the REST
    # routes (all under /v1/): one app for every service, mounted at each service's name.
    connect = ConnectApp(rpcs, edge, max_body_bytes, metrics)
    for prefix in connect_paths(rpcs):
        if any(rpc.http_path.startswith(prefix) for rpc in rpcs):
            raise ValueError(f"a REST route is under the Connect path {prefix}")
        app.router.routes.append(Mount(prefix, app=connect, name=prefix.lstrip("/")))
    _operations(app, metrics, readiness)
    _routing_refusals(app)
    messages = [m.DESCRIPTOR for rpc in rpcs for m in (rpc.request, rpc.response)] + [errors_pb2.Error.DESCRIPTOR]

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            paths = schema.setdefault("paths", {})
            for rpc in rpcs:
                paths.setdefault(rpc.http_path, {})[rpc.http_method.lower()] = {
                    "tags": [rpc.tag],
                    "summary": rpc.summary,
                    "operationId": rpc.name,
                    **rpc_openapi(rpc),
                }
            parts = schema.setdefault("components", {})
            parts.setdefault("schemas", {}).update(components(messages))
            parts["securitySchemes"] = {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "JWT",
                    "description": "An access token from CreateGuest or RefreshToken, or a trusted portal's token.",
                }
            }
            schema["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
