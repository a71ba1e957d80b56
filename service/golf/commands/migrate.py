"""``golf migrate``: apply Alembic migrations to the configured database."""

from __future__ import annotations

import argparse

from golf.adapters.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("migrate", help="apply database migrations (GOLF_DATABASE_URL)")
    parser.add_argument("--revision", default="head", help="target revision (default: head)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from golf.adapters.db.migrate import upgrade

    upgrade(Settings().database_url, args.revision)
    return 0
