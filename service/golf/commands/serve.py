"""``golf serve``: REST and gRPC in one process."""

from __future__ import annotations

import argparse
import asyncio
import signal

from golf.adapters.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="serve REST and gRPC (settings from GOLF_* environment variables)")
    parser.set_defaults(func=run)


def run(_args: argparse.Namespace) -> int:
    from golf.adapters.logs import configure_logging
    from golf.bootstrap import EARLY_INTERRUPT, serve

    # From here on a Ctrl-C is noted, not raised: left as it is, asyncio's runner would turn the first one into a
    # cancellation of the starting server, which a library on the way may swallow (the server then kept running).
    # ``serve`` takes SIGINT over as soon as its loop runs, and stops at once if one came before.
    signal.signal(signal.SIGINT, lambda _sig, _frame: EARLY_INTERRUPT.set())
    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    try:
        import uvloop
    except ImportError:  # not on every platform
        asyncio.run(serve(settings))
    else:
        uvloop.run(serve(settings))
    return 0
