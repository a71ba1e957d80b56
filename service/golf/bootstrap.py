"""Wiring: settings to database, use cases, handlers and both transports, served in one event loop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from multiprocessing import resource_tracker
from typing import Any

import uvicorn
from fastapi import FastAPI
from grpc_health.v1 import health_pb2

from golf.adapters.auth.keys import load_signing_key
from golf.adapters.auth.tokens import Tokens, TrustedIssuer
from golf.adapters.db.postgres_driver import PostgresDriver
from golf.adapters.db.record_index import SqlRecordIndex
from golf.adapters.db.repository import Database
from golf.adapters.edge import Edge
from golf.adapters.grpc_server import GrpcLimits, build_grpc_server
from golf.adapters.health import LIVENESS, Readiness
from golf.adapters.http_protocol import HttpLimits, edge_protocol
from golf.adapters.metrics import Metrics, TimedSolver
from golf.adapters.ratelimit import Limits, limits_from_settings
from golf.adapters.rest import build_rest_app
from golf.adapters.settings import Settings
from golf.adapters.solver_pool import ProcessPoolSolver
from golf.adapters.table_clock import TableClock
from golf.adapters.table_fanout import TableFanout
from golf.adapters.webhook_sender import SenderSettings, WebhookSender
from golf.api.export_handlers import ExportHandlers
from golf.api.handlers import SolitaireHandlers
from golf.api.player_handlers import PlayerHandlers
from golf.api.record_handlers import RecordHandlers
from golf.api.replay_handlers import ReplayHandlers
from golf.api.rpc import Rpc
from golf.api.table_handlers import TableHandlers
from golf.api.table_watch import watch_rpcs
from golf.api.webhook_handlers import WebhookHandlers
from golf.app.dealing import Dealer, DealSettings
from golf.app.exports import Exporter
from golf.app.record_queries import RecordQueries
from golf.app.replays import ReplayService
from golf.app.services import build_services
from golf.app.table_events import TableEvents
from golf.app.table_service import TableService
from golf.app.webhooks import WebhookOutbox, WebhookService
from golf.interrupts import EARLY_INTERRUPT

log = logging.getLogger("golf")


def utc_now() -> datetime:
    return datetime.now(UTC)


Background = Callable[[], Coroutine[Any, Any, None]]
"""Work a server process runs beside its transports for as long as it serves (a loop that returns only when
cancelled): started once both transports are up, cancelled when the server stops."""


@dataclass
class Container:
    database: Database
    solver: ProcessPoolSolver
    background_solver: ProcessPoolSolver
    dealer: Dealer
    refill_dealer: Dealer
    rpcs: list[Rpc]
    edge: Edge
    limits: Limits
    metrics: Metrics
    tables: TableService
    background: dict[str, Background] = field(default_factory=dict)
    """This process's background work by name (the live tables' clock, the event hub's listener)."""


def build(settings: Settings) -> Container:
    # Checked first: a missing or short key is a configuration error that must stop the server with its reason.
    key = load_signing_key(settings.token_key, settings.database_url)
    limits = limits_from_settings(settings)
    database = Database(
        settings.database_url,
        settings.db_pool_size,
        settings.sqlite_synchronous,
        settings.db_group_commit_delay_ms / 1000,
    )
    solver = ProcessPoolSolver(
        settings.solver_workers, max_waiting=settings.solver_queue, per_player=settings.solver_queue_per_player
    )
    background = ProcessPoolSolver(1, nice=10)
    metrics = Metrics(settings.metrics_refresh_seconds)
    metrics.count_games_with(lambda: _games_in_progress(database))
    metrics.count_tables_with(lambda: _tables_active(database))
    driver = database.driver
    if isinstance(driver, PostgresDriver):
        metrics.count_group_commit_with(lambda: (driver.group.batches, driver.group.entries))
    deal_settings = DealSettings(
        solver_budget=settings.solver_budget,
        pool_size=settings.pool_size,
        pool_library=max(settings.pool_library, settings.pool_size),
        pool_presets=tuple(p.strip() for p in settings.pool_presets.split(",") if p.strip()),
    )
    # Every field, by name: a field the settings add reaches the issuer (jwks_refresh_seconds was once dropped).
    trusted = [TrustedIssuer(**t.model_dump()) for t in settings.trusted_issuers]
    # The portal's players are made by the player use cases, which need the token issuer first: a late binding.
    tokens = Tokens(
        key,
        settings.token_issuer,
        settings.token_audience,
        settings.access_token_seconds,
        trusted,
        resolve_external=lambda iss, sub, name: services.players.external_player(iss, sub, name),
        leeway=settings.token_leeway_seconds,
        player_exists=lambda player_id: services.players.exists(player_id),
        player_check_seconds=settings.token_player_check_seconds,
    )
    services = build_services(
        database, utc_now, TimedSolver(solver, metrics), deal_settings, tokens, limits, settings.refresh_token_days
    )
    refill = Dealer(database, utc_now, TimedSolver(background, metrics), deal_settings)
    solitaire = SolitaireHandlers(services.games, services.rounds, services.dealer)
    tables = services.tables
    background_work: dict[str, Background] = {}
    # Live tables. ``tables.observers`` run inside each mutation's transaction, ``tables.publishers`` are told after
    # each commit which version a table reached; background work runs beside the transports.
    # - The table clock (paced bots, turn clocks, autofill, bot moves past a request's budget): claims due tables
    #   with leases; poked after each commit of this process so work due soon is not left to the next round.
    clock = TableClock(tables, database)
    tables.publishers.append(clock.poke)
    background_work["table-clock"] = clock.run
    # - Webhooks: the outbox rows are written with the moves (never lost), the sender delivers them in the background.
    sender = WebhookSender(database, utc_now, SenderSettings.from_settings(settings))
    outbox = WebhookOutbox(wake=sender.wake)
    tables.observers.append(outbox)
    tables.publishers.append(outbox.published)
    background_work["webhook-sender"] = sender.run_forever
    webhooks = WebhookService(database, utc_now, limits, allow_local_urls=settings.webhook_allow_local_urls)
    # - Live events: the hub wakes this process's watchers after each commit and tells the other replicas (NOTIFY
    #   on PostgreSQL); its loop LISTENs and catches up from the log on a timer.
    fanout = TableFanout(database, settings.event_queue_size, settings.event_catch_up_seconds)
    tables.publishers.append(fanout.publish)
    background_work["table-events"] = fanout.run
    metrics.count_subscribers_with(lambda: fanout.hub.subscribers)
    events = TableEvents(database, fanout.hub, settings.event_heartbeat_seconds, codes=tables.codes)
    table_rpcs = TableHandlers(tables).rpcs() + watch_rpcs(events) + WebhookHandlers(webhooks).rpcs()
    queries = RecordQueries(database, utc_now, frozenset(settings.private_issuers))
    record_rpcs = RecordHandlers(queries).rpcs() + ReplayHandlers(ReplayService(database, services.games)).rpcs()
    record_rpcs += ExportHandlers(
        Exporter(database, SqlRecordIndex(database), settings.private_issuers, clock=utc_now)
    ).rpcs()
    rpcs = metrics.count_moves(PlayerHandlers(services.players).rpcs() + solitaire.rpcs() + table_rpcs + record_rpcs)
    return Container(
        database,
        solver,
        background,
        services.dealer,
        refill,
        rpcs,
        Edge(tokens, limits),
        limits,
        metrics,
        tables,
        background_work,
    )


async def _games_in_progress(database: Database) -> int:
    async with database() as uow:
        row = await uow.repo.tx.fetchone("SELECT COUNT(*) AS n FROM games WHERE status = 'in_progress'")
    return int(row["n"]) if row else 0


async def _tables_active(database: Database) -> int:
    async with database() as uow:
        row = await uow.repo.tx.fetchone(
            "SELECT COUNT(*) AS n FROM card_golf_tables WHERE status IN ('seating', 'playing')"
        )
    return int(row["n"]) if row else 0


def _report_stopped(task: asyncio.Task[None]) -> None:
    """Background work ends only when the server stops: any other end is logged, with its error."""
    if not task.cancelled() and task.exception() is not None:
        log.error("background work %s failed", task.get_name(), exc_info=task.exception())
    elif not task.cancelled():
        log.error("background work %s ended while the server was serving", task.get_name())


class _Uvicorn(uvicorn.Server):
    """Uvicorn without its own signal handlers: ``serve`` below stops both transports together."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _take_interrupts(loop: asyncio.AbstractEventLoop, on_interrupt: Callable[[], None]) -> None:
    """Ctrl-C (SIGINT) calls ``on_interrupt`` in the event loop, from a thread that waits for it, for the rest of
    the process; no ``KeyboardInterrupt`` is raised anywhere.

    SIGINT is blocked in the calling thread, so in every thread and process started from it after this: the
    solver's worker processes (a terminal sends Ctrl-C to the whole process group, and each worker would die of
    it with a ``KeyboardInterrupt`` traceback; the server stops them itself) and gRPC's and uvicorn's threads.
    Call it before any of them start.
    """
    # multiprocessing's resource tracker unblocks SIGINT in the thread that starts it (CPython 3.11); the solver's
    # pools start it when they are made: start it first, so that it is running and leaves the mask alone.
    resource_tracker.ensure_running()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def wait() -> None:
        while True:
            signal.sigwait({signal.SIGINT})
            try:
                loop.call_soon_threadsafe(on_interrupt)
            except RuntimeError:  # the loop has closed: the server has stopped already
                return

    threading.Thread(target=wait, name="sigint", daemon=True).start()


STOP_MARGIN_SECONDS = 15.0
"""How long past its drain and grace periods a stopping server may take before it is ended the hard way."""


def _exit_if_stuck(seconds: float) -> None:
    """A stop that has not ended ``seconds`` from now ends the process: a stuck thread must not keep a pod (or a
    terminal) waiting for ever. Every acknowledged move is already committed, so nothing is lost."""

    def watch() -> None:
        time.sleep(seconds)
        log.error("the server did not stop within %.0f s; exiting now", seconds)
        logging.shutdown()
        os._exit(1)

    threading.Thread(target=watch, name="stop-watchdog", daemon=True).start()


async def serve(settings: Settings) -> None:
    """Serve REST and gRPC until SIGTERM or SIGINT, then finish requests in flight and exit."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    # First: a Ctrl-C while starting up stops the server as soon as it is up, like one while serving.
    _take_interrupts(loop, stopping.set)
    for sig in (signal.SIGTERM, signal.SIGINT):  # SIGINT: should it reach a thread that does not block it
        loop.add_signal_handler(sig, stopping.set)
    if EARLY_INTERRUPT.is_set():  # Ctrl-C came while the process was getting here
        stopping.set()
    container = build(settings)
    metrics = container.metrics
    rpcs = container.rpcs
    grpc_server, health_servicer, grpc_port = build_grpc_server(
        rpcs, f"{settings.host}:{settings.grpc_port}", container.edge, metrics, GrpcLimits.from_settings(settings)
    )
    readiness = Readiness(
        container.database,
        health_servicer,
        ("", *dict.fromkeys(rpc.service for rpc in rpcs)),
        on_change=lambda ready: metrics.ready.set(ready),
    )
    app: FastAPI = build_rest_app(rpcs, container.edge, metrics, readiness, settings.max_body_bytes)
    http = _Uvicorn(
        uvicorn.Config(
            app,
            host=settings.host,
            port=settings.http_port,
            log_level=settings.log_level,
            access_log=settings.access_log,
            # httptools, each answer in one write, with the edge's limits (line, headers, bodies, timeouts)
            http=edge_protocol(HttpLimits.from_settings(settings)),
            timeout_keep_alive=settings.idle_timeout_seconds,
            lifespan="off",
            log_config=None,  # our handlers (``golf.adapters.logs``), not uvicorn's
        )
    )

    await grpc_server.start()
    await health_servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
    await readiness.check()  # SERVING for "" and the service only once the database and schema are ready
    watch_task = asyncio.create_task(readiness.watch(settings.readiness_interval_seconds))
    http_task = asyncio.create_task(http.serve())
    refill_task = asyncio.create_task(container.refill_dealer.refill_forever()) if settings.pool_size else None
    background_tasks = [asyncio.create_task(work(), name=name) for name, work in container.background.items()]
    for task in background_tasks:
        task.add_done_callback(_report_stopped)
    log.info("serving gRPC on %s:%d and REST on %s:%d", settings.host, grpc_port, settings.host, settings.http_port)
    stop_wait = asyncio.create_task(stopping.wait())
    await asyncio.wait({http_task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)

    log.info("shutting down: finishing requests in flight")
    _exit_if_stuck(settings.shutdown_drain_seconds + settings.shutdown_grace_seconds + STOP_MARGIN_SECONDS)
    await readiness.stop()  # /readyz 503 and gRPC health NOT_SERVING before requests in flight finish
    watch_task.cancel()
    http.should_exit = True
    # gRPC cancels calls it has received but not yet handed to a handler when stop() begins; keep serving a
    # moment so calls sent before the signal are taken up (load balancers see NOT_SERVING meanwhile).
    await asyncio.sleep(min(settings.shutdown_drain_seconds, settings.shutdown_grace_seconds))
    if refill_task is not None:
        refill_task.cancel()
    for task in background_tasks:
        task.cancel()
    await asyncio.gather(grpc_server.stop(settings.shutdown_grace_seconds), http_task, return_exceptions=True)
    await asyncio.gather(*background_tasks, return_exceptions=True)  # before the database they use goes
    container.solver.close()
    container.background_solver.close()
    await container.limits.close()
    await container.database.dispose()
    stop_wait.cancel()
    log.info("stopped")
