"""``golf serve``: REST and gRPC in one process."""

from __future__ import annotations

import argparse
import asyncio
import gc

from golf.adapters.settings import Settings

GC_YOUNG_THRESHOLD = 20_000
"""Allocations between collections of the cyclic collector's youngest generation (Python's default: 700)."""


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
    # What is loaded by now (modules, the contract's descriptors) lives as long as the process: out of the cyclic
    # collector's sight. And its youngest generation is collected less often: a move makes thousands of short-lived
    # objects, almost none in cycles, and the default threshold (700) ran the collector every few moves.
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    try:
        import uvloop
    except ImportError:  # not on every platform
        asyncio.run(serve(settings))
    else:
        uvloop.run(serve(settings))
    return 0
