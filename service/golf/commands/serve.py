"""``golf serve``: REST and gRPC in one process."""

from __future__ import annotations

import argparse
import asyncio

from golf.adapters.settings import Settings


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("serve", help="serve REST and gRPC (settings from GOLF_* environment variables)")
    # ``golf.cli`` notes a Ctrl-C from its start and leaves it so; ``serve`` stops at once if one came early.
    parser.set_defaults(func=run, takes_interrupts=True)


def run(_args: argparse.Namespace) -> int:
    from golf.adapters.logs import configure_logging
    from golf.bootstrap import serve
    from golf.interrupts import note_interrupts

    # A Ctrl-C is noted, not raised (``golf.cli`` began so; said again for callers of ``run`` alone): left as it
    # is, asyncio's runner would turn the first one into a cancellation of the starting server, which a library on
    # the way may swallow (the server then kept running). ``serve`` takes SIGINT over as soon as its loop runs, and
    # stops at once if one came before.
    note_interrupts()
    settings = Settings()
    configure_logging(settings.log_level, settings.log_format)
    try:
        import uvloop
    except ImportError:  # not on every platform
        asyncio.run(serve(settings))
    else:
        uvloop.run(serve(settings))
    return 0
