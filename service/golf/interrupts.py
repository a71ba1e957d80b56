"""A Ctrl-C that comes while a command is starting up: noted, not raised.

A ``KeyboardInterrupt`` raised in the middle of an import can surface as something else: pydantic, building a
model's schema, reported one as a ``SchemaError`` and the command ended with a traceback. So ``golf`` notes Ctrl-C
from its first line until the command is ready to take it (see ``golf.cli``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

EARLY_INTERRUPT = threading.Event()
"""Set when a Ctrl-C comes before the command has taken SIGINT over."""


def note_interrupts() -> None:
    """From now on a Ctrl-C sets ``EARLY_INTERRUPT`` instead of raising ``KeyboardInterrupt``."""
    signal.signal(signal.SIGINT, lambda _sig, _frame: EARLY_INTERRUPT.set())


def exit_on_interrupt(code: int) -> None:
    """From now on a Ctrl-C ends the process at once with exit ``code``, without unwinding.

    Raised as ``KeyboardInterrupt``, a Ctrl-C could land anywhere, even in a garbage collector's callback, where
    Python prints it as "Exception ignored" and goes on: ``golf migrate`` once ran on after a Ctrl-C that way. The
    commands other than ``golf serve`` hold nothing that must be released in this process: a database transaction
    left open is rolled back when its connection drops (or, for SQLite, when the file is next opened).
    """

    def leave(_sig: int, _frame: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a write the signal cut short may refuse a flush
                stream.flush()
        os._exit(code)

    signal.signal(signal.SIGINT, leave)
