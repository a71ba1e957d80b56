"""Wiring: settings to database, use cases, handlers and both transports, served in one event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import uvicorn
from fastapi import FastAPI
from grpc_health.v1 import health_pb2

from golf.adapters.db.repository import Database
from golf.adapters.grpc_server import SERVICE_NAME, build_grpc_server
from golf.adapters.rest import build_rest_app
from golf.adapters.settings import Settings
from golf.adapters.solver_pool import ProcessPoolSolver
from golf.api.handlers import SolitaireHandlers
from golf.app.dealing import Dealer, DealSettings
from golf.app.services import build_services

log = logging.getLogger("golf")


def utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Container:
    database: Database
    solver: ProcessPoolSolver
    background_solver: ProcessPoolSolver
    dealer: Dealer
    refill_dealer: Dealer
    handlers: SolitaireHandlers


def build(settings: Settings) -> Container:
    database = Database(settings.database_url, settings.db_pool_size, settings.sqlite_synchronous)
    solver = ProcessPoolSolver(settings.solver_workers)
    background = ProcessPoolSolver(1, nice=10)
    deal_settings = DealSettings(
        solver_budget=settings.solver_budget,
        pool_size=settings.pool_size,
        pool_presets=tuple(p.strip() for p in settings.pool_presets.split(",") if p.strip()),
    )
    services = build_services(database, utc_now, solver, deal_settings)
    refill = Dealer(database, utc_now, background, deal_settings)
    handlers = SolitaireHandlers(services.games, services.rounds, services.dealer)
    return Container(database, solver, background, services.dealer, refill, handlers)


class _Uvicorn(uvicorn.Server):
    """Uvicorn without its own signal handlers: ``serve`` below stops both transports together."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(settings: Settings) -> None:
    """Serve REST and gRPC until SIGTERM or SIGINT, then finish requests in flight and exit."""
    container = build(settings)
    app: FastAPI = build_rest_app(container.handlers.rpcs())
    grpc_server, health_servicer, grpc_port = build_grpc_server(
        container.handlers.rpcs(), f"{settings.host}:{settings.grpc_port}"
    )
    http = _Uvicorn(
        uvicorn.Config(
            app,
            host=settings.host,
            port=settings.http_port,
            log_level=settings.log_level,
            access_log=settings.access_log,
            http="httptools",
            lifespan="off",
        )
    )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)

    await container.database.ping()
    await grpc_server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    http_task = asyncio.create_task(http.serve())
    refill_task = asyncio.create_task(container.refill_dealer.refill_forever()) if settings.pool_size else None
    log.info("serving gRPC on %s:%d and REST on %s:%d", settings.host, grpc_port, settings.host, settings.http_port)
    stop_wait = asyncio.create_task(stopping.wait())
    await asyncio.wait({http_task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)

    log.info("shutting down: finishing requests in flight")
    await health_servicer.enter_graceful_shutdown()
    http.should_exit = True
    # gRPC cancels calls it has received but not yet handed to a handler when stop() begins; keep serving a
    # moment so calls sent before the signal are taken up (load balancers see NOT_SERVING meanwhile).
    await asyncio.sleep(min(settings.shutdown_drain_seconds, settings.shutdown_grace_seconds))
    if refill_task is not None:
        refill_task.cancel()
    await asyncio.gather(grpc_server.stop(settings.shutdown_grace_seconds), http_task, return_exceptions=True)
    container.solver.close()
    container.background_solver.close()
    await container.database.dispose()
    stop_wait.cancel()
    log.info("stopped")
