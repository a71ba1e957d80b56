"""Every setting comes from an environment variable prefixed ``GOLF_``; defaults suit a laptop."""

from __future__ import annotations

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
    log_level: str = "info"
