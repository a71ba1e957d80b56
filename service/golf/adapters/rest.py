"""The REST gateway: FastAPI routes built from the same RPC table and handlers as gRPC.

Bodies are the proto3 JSON mapping of the request and response messages (lowerCamelCase names, enums as
strings, 64-bit integers as strings, fields with default values included).
"""

from __future__ import annotations

import json
import logging
import math
import re
from time import perf_counter
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from starlette.routing import Route

from golf.adapters.edge import Edge
from golf.adapters.health import Readiness
from golf.adapters.json_input import parse_body, parse_object
from golf.adapters.logs import REQUEST_ID_HEADER, accept_request_id, request_id
from golf.adapters.metrics import CONTENT_TYPE_LATEST, Metrics
from golf.adapters.openapi import components, rpc_openapi
from golf.adapters.proto_json import to_json
from golf.api.errors import ApiError, internal_error, to_api_error
from golf.api.rpc import Rpc
from golf.api.text import check_text
from golf.app.errors import AppError
from golf.v1 import errors_pb2

log = logging.getLogger("golf.rest")
JSON = "application/json"


def _route(rpc: Rpc, edge: Edge, metrics: Metrics | None) -> Any:
    path_fields = re.findall(r"{(\w+)}", rpc.http_path)
    has_body = rpc.http_method == "POST"
    observe = metrics.route(rpc.http_method, rpc.http_path).observe if metrics is not None else None

    async def answer(request: Request) -> tuple[bytes, int, ApiError | None]:
        try:
            client = request.client
            ctx = await edge.admit(rpc, request.headers.get("authorization"), client.host if client else "unknown")
            message = rpc.request()
            if has_body:
                parse_body(await request.body(), message)
            else:
                parse_object(dict(request.query_params), message)
            if path_fields:
                parse_object({f: request.path_params[f] for f in path_fields}, message)
            check_text(message)
            reply = await rpc.handler(message, ctx)
            return to_json(reply), 200, None
        except ApiError as err:
            failure = err
        except AppError as err:
            failure = to_api_error(err)
        except Exception:
            log.exception("unhandled error in %s", rpc.name)
            failure = internal_error()
        return to_json(failure.body), failure.http_status, failure

    async def endpoint(request: Request) -> Response:
        start = perf_counter()
        rid = accept_request_id(request.headers.get(REQUEST_ID_HEADER))
        request_id.set(rid)
        body, status, failure = await answer(request)
        if observe is not None:
            observe(status, perf_counter() - start)
        headers = {REQUEST_ID_HEADER: rid}
        if failure is not None:
            if failure.www_authenticate is not None:
                headers["www-authenticate"] = failure.www_authenticate
            if failure.retry_after is not None:
                headers["retry-after"] = str(max(1, math.ceil(failure.retry_after)))
        return Response(body, status_code=status, media_type=JSON, headers=headers)

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


def build_rest_app(
    rpcs: list[Rpc], edge: Edge, metrics: Metrics | None = None, readiness: Readiness | None = None
) -> FastAPI:
    """The FastAPI app serving every RPC at its REST route, with OpenAPI at ``/openapi.json`` and ``/docs``,
    and the operations endpoints ``/healthz``, ``/readyz`` and ``/metrics``."""
    app = FastAPI(
        title="Golf game service",
        version="1.0.0",
        description="Golf solitaire and card Golf over REST. The same API is served over gRPC "
        "(package golf.v1); REST bodies are the proto3 JSON mapping of the same messages. Refusals carry an "
        "`Error` body with a typed `reason`. Sign in first (`POST /v1/players:guest`) and send "
        "`Authorization: Bearer <accessToken>` with every other call.",
    )
    # Plain Starlette routes: the endpoints read the request themselves, so FastAPI's dependency machinery
    # would only cost time (about 40 us a request, measured). The OpenAPI document is built from the RPC table.
    for rpc in rpcs:
        app.router.routes.append(
            Route(rpc.http_path, _route(rpc, edge, metrics), methods=[rpc.http_method], name=rpc.name)
        )
    _operations(app, metrics, readiness)
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
