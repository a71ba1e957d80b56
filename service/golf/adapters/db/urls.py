"""Plain database URLs in, SQLAlchemy URLs with our chosen drivers out (the service's own drivers take the plain
URL: ``postgres_driver.py``, ``sqlite_driver.py``)."""

from __future__ import annotations

from sqlalchemy.engine import URL, make_url


def _plain(url: str) -> URL:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgres":
        parsed = parsed.set(drivername="postgresql")
    elif backend not in ("postgresql", "sqlite"):
        raise ValueError(f"GOLF_DATABASE_URL: unsupported database {backend!r} (use sqlite:// or postgresql://)")
    return parsed


def sync_url(url: str) -> URL:
    """The URL for migrations: psycopg for PostgreSQL, the standard sqlite3 module for SQLite."""
    parsed = _plain(url)
    driver = "sqlite" if parsed.get_backend_name() == "sqlite" else "postgresql+psycopg"
    return parsed.set(drivername=driver)


def is_sqlite(url: str) -> bool:
    return _plain(url).get_backend_name() == "sqlite"
