"""``golf serve``: REST and gRPC in one process."""

from __future__ import annotations

import argparse
import asyncio
import logging

from golf.adapters.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="serve REST and gRPC (settings from GOLF_* environment variables)")
    parser.set_defaults(func=run)


def run(_args: argparse.Namespace) -> int:
    from golf.bootstrap import serve

    settings = Settings()
    logging.basicConfig(level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s")
    try:
        import uvloop
    except ImportError:  # not on every platform
        asyncio.run(serve(settings))
    else:
        uvloop.run(serve(settings))
    return 0
