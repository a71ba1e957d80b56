"""The secret that signs this service's access tokens: configured, or generated once and kept beside the SQLite file."""

from __future__ import annotations

import logging
import os
import secrets
import time

from sqlalchemy.engine import make_url

from golf.adapters.db.urls import is_sqlite

log = logging.getLogger("golf.auth")

MIN_KEY_CHARS = 32
_SETTLE_SECONDS = 2.0  # how long to wait for a key file another process has just created to be written


def load_signing_key(configured: str | None, database_url: str) -> bytes:
    """The token signing key: ``configured`` (GOLF_TOKEN_KEY), else with a SQLite file the key kept in
    ``<database>.token-key`` (generated on first start). PostgreSQL and in-memory SQLite need it configured."""
    if configured is not None:
        if len(configured) < MIN_KEY_CHARS:
            raise ValueError(
                f"GOLF_TOKEN_KEY must be at least {MIN_KEY_CHARS} characters "
                "(make one with: python -c 'import secrets; print(secrets.token_urlsafe(48))')"
            )
        return configured.encode()
    if not is_sqlite(database_url):
        raise ValueError(
            "GOLF_TOKEN_KEY is required with PostgreSQL: every replica must sign and check tokens with the same key, "
            f"so set it ({MIN_KEY_CHARS} characters or more) from a secret shared by all of them"
        )
    database = make_url(database_url).database
    if not database or database == ":memory:":
        raise ValueError("GOLF_TOKEN_KEY is required with an in-memory SQLite database: no file to keep a key beside")
    return _kept_key(database + ".token-key")


def _kept_key(path: str) -> bytes:
    """The key in ``path``, created (mode 0600) if missing; a process racing us to create it wins and we read its."""
    if os.path.exists(path):
        kept = _read_key(path)
        log.info("using the token key kept at %s", path)
        return kept
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_key(path)
    key = secrets.token_urlsafe(48)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(key + "\n")
        file.flush()
        os.fsync(file.fileno())
    log.warning(
        "generated a token key and kept it at %s (set GOLF_TOKEN_KEY to choose one; keep this file to keep "
        "players signed in across restarts)",
        os.path.abspath(path),
    )
    return key.encode()


def _read_key(path: str) -> bytes:
    """Read a kept key, waiting briefly when its creator has not finished writing it."""
    deadline = time.monotonic() + _SETTLE_SECONDS
    while True:
        with open(path, encoding="utf-8") as file:
            key = file.read().strip()
        if len(key) >= MIN_KEY_CHARS:
            break
        if time.monotonic() >= deadline:
            raise ValueError(
                f"the token key kept at {path} is shorter than {MIN_KEY_CHARS} characters: "
                "delete the file to generate a new one, or set GOLF_TOKEN_KEY"
            )
        time.sleep(0.05)
    if os.stat(path).st_mode & 0o077:
        log.warning("the token key kept at %s can be read by other users: chmod 600 it", path)
    return key.encode()
