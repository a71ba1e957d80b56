"""The ``golf`` console command. Each subcommand lives in its own module under ``golf.commands``."""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import os
import signal
import sys
from collections.abc import Sequence

from golf.interrupts import EARLY_INTERRUPT, note_interrupts, raise_interrupts

# Each module defines ``register(subparsers)``, which adds its parser and sets ``func`` (args -> exit code).
COMMAND_MODULES = (
    "golf.commands.serve",
    "golf.commands.migrate",
    "golf.commands.solve",
    "golf.commands.simulate",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="golf", description="Golf game service and tools.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


INTERRUPTED = 130
"""The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells report it."""


def main(argv: Sequence[str] | None = None) -> int:
    # ``kill -USR1 <pid>`` prints every thread's stack to stderr: the way to see where a stuck process is.
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    # Until the command is chosen and its modules imported, Ctrl-C is noted rather than raised (see golf.interrupts).
    note_interrupts()
    try:
        args = build_parser().parse_args(argv)
        if not getattr(args, "takes_interrupts", False):  # ``golf serve`` takes SIGINT over itself
            raise_interrupts()
            if EARLY_INTERRUPT.is_set():
                raise KeyboardInterrupt
        code: int = args.func(args)
    except KeyboardInterrupt:
        # Ctrl-C (``make run`` while migrating, say) is the user's choice, not a crash: no traceback. ``golf serve``
        # takes Ctrl-C itself once it is running, stops gracefully and exits 0. Interrupted half-way through
        # starting up, threads and pools may be half made: leave at once rather than wait for them at exit.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(INTERRUPTED)
    return code


if __name__ == "__main__":
    sys.exit(main())
