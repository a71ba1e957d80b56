"""Alembic, driven from code: ``golf migrate`` and the readiness check use these."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine

from golf.adapters.db.urls import sync_url

MIGRATIONS = Path(__file__).resolve().parents[4] / "migrations"


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", sync_url(url).render_as_string(hide_password=False))
    return config


def upgrade(url: str, revision: str = "head") -> None:
    """Apply migrations up to ``revision``. Creates the SQLite file, and its directory, if they do not exist."""
    target = sync_url(url)
    if target.get_backend_name() == "sqlite" and target.database and target.database != ":memory:":
        Path(target.database).parent.mkdir(parents=True, exist_ok=True)
    command.upgrade(alembic_config(url), revision)


def at_head(url: str) -> bool:
    """Whether the database's schema is at the newest migration."""
    script = ScriptDirectory.from_config(alembic_config(url))
    engine = create_engine(sync_url(url))
    try:
        with engine.connect() as conn:
            current = set(MigrationContext.configure(conn).get_current_heads())
    finally:
        engine.dispose()
    return current == set(script.get_heads())
