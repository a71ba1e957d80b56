"""The gRPC transport: grpc.aio, one generic handler per RPC of the table, health checking and reflection."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from time import perf_counter
from typing import Any

import grpc
from grpc_health.v1 import _async as health_async
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from golf.adapters.logs import REQUEST_ID_HEADER, accept_request_id, new_request_id, request_id
from golf.adapters.metrics import Metrics
from golf.api.errors import ApiError, internal_error, to_api_error
from golf.api.handlers import Rpc
from golf.app.errors import AppError
from golf.v1 import solitaire_service_pb2

SERVICE_NAME = solitaire_service_pb2.DESCRIPTOR.services_by_name["SolitaireService"].full_name
ERROR_TRAILER = "golf-error-bin"
log = logging.getLogger("golf.grpc")


def _request_id(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == REQUEST_ID_HEADER:
            return accept_request_id(value if isinstance(value, str) else None)
    return new_request_id()


def _unary(rpc: Rpc, metrics: Metrics | None) -> Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]:
    observe = metrics.rpc(rpc.name).observe if metrics is not None else None

    async def call(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        start = perf_counter()
        rid = _request_id(context)
        request_id.set(rid)
        try:
            reply = await rpc.handler(request)
        except ApiError as err:
            failure = err
        except AppError as err:
            failure = to_api_error(err)
        except Exception:
            log.exception("unhandled error in %s", rpc.name)
            failure = internal_error()
        else:
            context.set_trailing_metadata(((REQUEST_ID_HEADER, rid),))
            if observe is not None:
                observe("OK", perf_counter() - start)
            return reply
        context.set_trailing_metadata(((ERROR_TRAILER, failure.body.SerializeToString()), (REQUEST_ID_HEADER, rid)))
        if observe is not None:
            observe(failure.code.name, perf_counter() - start)
        await context.abort(failure.code, failure.body.message)

    return call


def build_grpc_server(
    rpcs: list[Rpc], address: str, metrics: Metrics | None = None
) -> tuple[grpc.aio.Server, health_async.HealthServicer, int]:
    """A server with the RPCs, health and reflection, bound to ``address``; returns the bound port too."""
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handlers = {
        rpc.name: grpc.unary_unary_rpc_method_handler(
            _unary(rpc, metrics),
            request_deserializer=rpc.request.FromString,
            response_serializer=rpc.response.SerializeToString,
        )
        for rpc in rpcs
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    health_servicer = health_async.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME),
        server,
    )
    port = server.add_insecure_port(address)
    if port == 0:
        raise OSError(f"could not bind gRPC to {address}")
    return server, health_servicer, port
