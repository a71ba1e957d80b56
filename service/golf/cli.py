"""The ``golf`` console command. Each subcommand lives in its own module under ``golf.commands``."""

from __future__ import annotations

import argparse
import faulthandler
import importlib
import os
import signal
import sys
from collections.abc import Sequence

from golf.interrupts import EARLY_INTERRUPT, exit_on_interrupt, note_interrupts

# Each module defines ``register(subparsers)``, which adds its parser and sets ``func`` (args -> exit code).
COMMAND_MODULES = (
    "golf.commands.serve",
    "golf.commands.migrate",
    "golf.commands.solve",
    "golf.commands.simulate",
    "golf.commands.verify",
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
    # Until the command is chosen and its modules imported, Ctrl-C is noted rather than raised (see golf.interrupts;
    # golf.command began so before importing this module, said again for callers of main alone).
    note_interrupts()
    args = build_parser().parse_args(argv)
    if not getattr(args, "takes_interrupts", False):
        # Every command but ``golf serve`` (which takes SIGINT over, stops gracefully and exits 0) ends at once on
        # Ctrl-C, with 130 and no traceback: it is the user's choice, not a crash (``make run`` while migrating).
        if EARLY_INTERRUPT.is_set():
            sys.stdout.flush()
            os._exit(INTERRUPTED)
        exit_on_interrupt(INTERRUPTED)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
