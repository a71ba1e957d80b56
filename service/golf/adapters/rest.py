"""The REST gateway: FastAPI routes built from the same RPC table and handlers as gRPC.

Bodies are the proto3 JSON mapping of the request and response messages (lowerCamelCase names, enums as
strings, 64-bit integers as strings, fields with default values included).
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response

from golf.adapters.json_input import parse_body, parse_object
from golf.adapters.openapi import components, rpc_openapi
from golf.adapters.proto_json import to_json
from golf.api.errors import ApiError, internal_error, to_api_error
from golf.api.handlers import Rpc
from golf.app.errors import AppError
from golf.v1 import errors_pb2

log = logging.getLogger("golf.rest")
JSON = "application/json"


def _error_response(err: ApiError) -> Response:
    return Response(to_json(err.body), status_code=err.http_status, media_type=JSON)


def _route(rpc: Rpc) -> Any:
    path_fields = re.findall(r"{(\w+)}", rpc.http_path)
    has_body = rpc.http_method == "POST"

    async def endpoint(request: Request) -> Response:
        try:
            message = rpc.request()
            if has_body:
                parse_body(await request.body(), message)
            else:
                parse_object(dict(request.query_params), message)
            if path_fields:
                parse_object({f: request.path_params[f] for f in path_fields}, message)
            reply = await rpc.handler(message)
            return Response(to_json(reply), media_type=JSON)
        except ApiError as err:
            return _error_response(err)
        except AppError as err:
            return _error_response(to_api_error(err))
        except Exception:
            log.exception("unhandled error in %s", rpc.name)
            return _error_response(internal_error())

    endpoint.__name__ = rpc.name
    return endpoint


def build_rest_app(rpcs: list[Rpc]) -> FastAPI:
    """The FastAPI app serving every RPC at its REST route, with OpenAPI at ``/openapi.json`` and ``/docs``."""
    app = FastAPI(
        title="Golf game service",
        version="1.0.0",
        description="Golf solitaire and card Golf over REST. The same API is served over gRPC "
        "(package golf.v1); REST bodies are the proto3 JSON mapping of the same messages. Refusals carry an "
        "`Error` body with a typed `reason`.",
    )
    for rpc in rpcs:
        app.add_api_route(
            rpc.http_path,
            _route(rpc),
            methods=[rpc.http_method],
            summary=rpc.summary,
            operation_id=rpc.name,
            openapi_extra=rpc_openapi(rpc),
            tags=["solitaire"],
        )
    messages = [m.DESCRIPTOR for rpc in rpcs for m in (rpc.request, rpc.response)] + [errors_pb2.Error.DESCRIPTOR]

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            schema.setdefault("components", {}).setdefault("schemas", {}).update(components(messages))
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app
