"""Alembic, driven from code: ``golf migrate`` and the readiness check use these."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from golf.adapters.db.urls import sync_url

log = logging.getLogger("golf.migrate")
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


class DatabaseNotReached(Exception):
    """The database could not be reached within the wait; the message says why (the last failure)."""


def wait_for_database(
    url: str,
    seconds: float,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Return once a connection to ``url`` opens and answers, trying for up to ``seconds`` (at least once), with a
    growing pause between tries (0.25 s up to 5 s); else raise ``DatabaseNotReached``.

    So ``golf migrate`` (``make run``, a Kubernetes Job or init container) outlives a database that starts after it,
    is not accepting connections yet, or is still being created. Only reaching the database is retried: a
    migration that fails once connected is not (it is reported as it is)."""
    deadline = clock() + seconds
    pause = 0.25
    engine = create_engine(sync_url(url), pool_pre_ping=False, connect_args=_connect_timeout(url))
    try:
        while True:
            try:
                with engine.connect() as conn:
                    conn.execute(text("SELECT 1"))
                return
            except DBAPIError as err:
                why = _reason(err)
                left = deadline - clock()
                if left <= 0:
                    raise DatabaseNotReached(f"the database could not be reached in {seconds:g} s: {why}") from err
                if pause == 0.25:  # the first failure: one line, not one per try
                    log.warning("the database cannot be reached yet (%s); trying again for up to %.0f s", why, left)
                sleep(min(pause, left))
                pause = min(pause * 2, 5.0)
    finally:
        engine.dispose()


def _connect_timeout(url: str) -> dict[str, int]:
    """A connect timeout for PostgreSQL (a host that drops packets would hold a try for minutes)."""
    return {} if sync_url(url).get_backend_name() == "sqlite" else {"connect_timeout": 5}


def _reason(err: DBAPIError) -> str:
    """The driver's own words, on one line."""
    return " ".join(str(err.orig).split())[:300]
