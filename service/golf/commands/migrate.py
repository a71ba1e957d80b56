"""``golf migrate``: apply Alembic migrations to the configured database."""

from __future__ import annotations

import argparse
import sys

from golf.adapters.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("migrate", help="apply database migrations (GOLF_DATABASE_URL)")
    parser.add_argument("--revision", default="head", help="target revision (default: head)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Wait for the database (``GOLF_MIGRATE_WAIT_SECONDS``), then migrate; 1 with the reason if it never came."""
    from golf.adapters.db.migrate import DatabaseNotReached, upgrade, wait_for_database

    settings = Settings()
    try:
        wait_for_database(settings.database_url, settings.migrate_wait_seconds)
    except DatabaseNotReached as err:
        print(f"golf migrate: {err}", file=sys.stderr)
        return 1
    upgrade(settings.database_url, args.revision)
    return 0
