"""A Ctrl-C that comes while a command is starting up: noted, not raised.

A ``KeyboardInterrupt`` raised in the middle of an import can surface as something else: pydantic, building a
model's schema, reported one as a ``SchemaError`` and the command ended with a traceback. So the ``golf`` command
notes Ctrl-C from the first statement of its entry module (``golf.command``) until the command is ready to take it.

This module is imported before anything else of the command, so it imports only what the interpreter has loaded
already (``os``, ``sys``) and the C module under ``signal`` (``signal`` itself would import ``enum`` first): each
import before SIGINT is taken over widens the moment in which a Ctrl-C still prints a traceback.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C half: no enum to import first
import os
import sys

SIGINT: int = _signal.SIGINT


class _Noted:
    """Whether a Ctrl-C came before the command took SIGINT over (set from the signal handler, in the main thread)."""

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


EARLY_INTERRUPT = _Noted()
"""Set when a Ctrl-C comes before the command has taken SIGINT over."""


def _note(_sig: int, _frame: object) -> None:
    EARLY_INTERRUPT.set()


def note_interrupts() -> None:
    """From now on a Ctrl-C sets ``EARLY_INTERRUPT`` instead of raising ``KeyboardInterrupt``."""
    _signal.signal(SIGINT, _note)


def exit_on_interrupt(code: int) -> None:
    """From now on a Ctrl-C ends the process at once with exit ``code``, without unwinding.

    Raised as ``KeyboardInterrupt``, a Ctrl-C could land anywhere, even in a garbage collector's callback, where
    Python prints it as "Exception ignored" and goes on: ``golf migrate`` once ran on after a Ctrl-C that way. The
    commands other than ``golf serve`` hold nothing that must be released in this process: a database transaction
    left open is rolled back when its connection drops (or, for SQLite, when the file is next opened).
    """

    import contextlib  # not at the top: this module is imported before SIGINT is taken over

    def leave(_sig: int, _frame: object) -> None:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a write the signal cut short may refuse a flush
                stream.flush()
        os._exit(code)

    _signal.signal(SIGINT, leave)
