"""Every setting comes from an environment variable prefixed ``GOLF_``; defaults suit a laptop."""

from __future__ import annotations

from typing import Literal

from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GOLF_", extra="ignore")

    database_url: str = "sqlite:///golf.db"
    """Plain URL: ``sqlite:///path/golf.db`` or ``postgresql://user@host:5432/db``; drivers are picked here."""
    host: str = "0.0.0.0"
    http_port: int = 8080
    grpc_port: int = 50051
    db_pool_size: int = 10
    """Connections per process (PostgreSQL)."""
    shutdown_grace_seconds: float = 10.0
    """On SIGTERM, how long requests in flight may take to finish."""
    shutdown_drain_seconds: float = 1.0
    """On SIGTERM, how long gRPC keeps taking up calls already sent before it stops (health says NOT_SERVING)."""
    solver_workers: int = 1
    """Processes that run the solver for requests (hints, AutoPlay, winnable deals when the pool is empty)."""
    solver_budget: int = 2_000_000
    """Positions one solver call may search for a request; a budget run out is reported, never taken as "no"."""
    pool_library: int = 500
    """Deals kept per preset and difficulty; when no fresh deal is left the least dealt is dealt again."""
    pool_size: int = 30
    """Winnable deals kept ready per preset and difficulty, refilled in the background; 0 turns refilling off."""
    pool_presets: str = "standard,queens-on-kings,wrap"
    """Presets the pool keeps ready (comma-separated)."""
    log_level: str = "info"
    log_format: Literal["json", "text"] = "json"
    """``json``: one JSON object per line with the request id (for log collectors); ``text`` for a terminal."""
    access_log: bool = False
    """One log line per HTTP request (costs CPU on the hot path)."""
    readiness_interval_seconds: float = 5.0
    """How often the database and schema are re-checked for the gRPC health status (``/readyz`` checks on call)."""
    metrics_refresh_seconds: float = 15.0
    """``/metrics`` counts games in progress in the database at most this often."""
    sqlite_synchronous: Literal["NORMAL", "FULL", "EXTRA"] = "FULL"
    """SQLite's ``synchronous`` pragma: FULL makes each acknowledged move durable even across a power cut;
    NORMAL survives process crashes only and is faster."""
