"""The composition root: settings to database, use cases, handlers and both transports, served in one event loop
(``serve``; its signals, start and stop are ``golf.adapters.lifecycle``'s). Every part is made and wired here, and
nowhere else."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

import uvicorn
from fastapi import FastAPI

from golf.adapters.auth.keys import load_signing_key
from golf.adapters.auth.tokens import Tokens, TrustedIssuer
from golf.adapters.db.gauges import games_in_progress, tables_active
from golf.adapters.db.postgres_driver import PostgresDriver
from golf.adapters.db.record_index import SqlRecordIndex
from golf.adapters.db.repository import Database
from golf.adapters.edge import Edge
from golf.adapters.fair_calls import FairCalls
from golf.adapters.grpc_server import GrpcLimits, build_grpc_server
from golf.adapters.health import Readiness
from golf.adapters.http_protocol import HttpLimits, edge_protocol
from golf.adapters.lifecycle import Background, HttpServer, Served, run, stop_signals
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
from golf.app.players import PlayerService
from golf.app.ports import Clock, RateLimiter, Solver, TokenIssuer, UnitOfWorkFactory
from golf.app.record_queries import RecordQueries
from golf.app.recording import RecordKeeper, match_recorder
from golf.app.replays import ReplayService
from golf.app.rounds import RoundService
from golf.app.solitaire import SolitaireService
from golf.app.tables.events import TableEvents
from golf.app.tables.service import TableService
from golf.app.webhooks import WebhookOutbox, WebhookService
from golf.interrupts import EARLY_INTERRUPT


def utc_now() -> datetime:
    """The service's clock."""
    return datetime.now(UTC)


@dataclass(frozen=True)
class Services:
    """The use cases over one storage, clock and solver (what ``build`` wires to handlers; the tests' own wiring)."""

    games: SolitaireService
    rounds: RoundService
    dealer: Dealer
    players: PlayerService
    tables: TableService


def build_services(
    uow: UnitOfWorkFactory,
    clock: Clock,
    solver: Solver,
    settings: DealSettings,
    tokens: TokenIssuer,
    limiter: RateLimiter,
    refresh_days: int = 365,
) -> Services:
    """The use cases wired together over ``uow``, ``clock`` and ``solver`` (fakes in the unit tests)."""
    dealer = Dealer(uow, clock, solver, settings, limiter)
    records = RecordKeeper()
    games = SolitaireService(uow, clock, dealer, solver, limiter, solver_budget=settings.solver_budget, records=records)
    rounds = RoundService(uow, clock, games, limiter)
    players = PlayerService(uow, clock, tokens, limiter, refresh_days)
    tables = TableService(uow, clock, limiter)
    tables.observers.append(match_recorder(records))
    return Services(games, rounds, dealer, players, tables)


@dataclass
class Container:
    """One server process's parts, made by ``build``: what ``serve`` puts on the transports, runs and stops."""

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

    async def close(self) -> None:
        """Free the solver's processes, the rate limiter's connections and the database's, once nothing uses them."""
        self.solver.close()
        self.background_solver.close()
        await self.limits.close()
        await self.database.dispose()


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
    metrics.count_games_with(lambda: games_in_progress(database))
    metrics.count_tables_with(lambda: tables_active(database))
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
    rpcs = FairCalls(settings.player_concurrent_calls).gate(rpcs)
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


async def serve(settings: Settings) -> None:
    """Serve REST and gRPC until SIGTERM or SIGINT, then finish requests in flight and exit."""
    # First: a Ctrl-C while starting up stops the server as soon as it is up, like one while serving.
    stopping = stop_signals()
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
    http = HttpServer(
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
    served = Served(
        grpc_server,
        health_servicer,
        readiness,
        http,
        container.background,
        container.refill_dealer.refill_forever if settings.pool_size else None,
        container.close,
        f"gRPC on {settings.host}:{grpc_port} and REST on {settings.host}:{settings.http_port}",
        readiness_interval=settings.readiness_interval_seconds,
        drain_seconds=settings.shutdown_drain_seconds,
        grace_seconds=settings.shutdown_grace_seconds,
    )
    await run(served, stopping)
