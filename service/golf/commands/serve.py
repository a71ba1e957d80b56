"""``golf serve``: REST and gRPC in one process."""

from __future__ import annotations

import argparse
import asyncio

from golf.adapters.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="serve REST and gRPC (settings from GOLF_* environment variables)")
    parser.set_defaults(func=run)


def run(_args: argparse.Namespace) -> int:
    from golf.adapters.logs import configure_logging
    from golf.bootstrap import serve

    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    try:
        import uvloop
    except ImportError:  # not on every platform
        asyncio.run(serve(settings))
    else:
        uvloop.run(serve(settings))
    return 0
