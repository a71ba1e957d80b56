"""A Ctrl-C that comes while a command is starting up: noted, not raised.

A ``KeyboardInterrupt`` raised in the middle of an import can surface as something else: pydantic, building a
model's schema, reported one as a ``SchemaError`` and the command ended with a traceback. So ``golf`` notes Ctrl-C
from its first line until the command is ready to take it (see ``golf.cli``).
"""

from __future__ import annotations

import signal
import threading

EARLY_INTERRUPT = threading.Event()
"""Set when a Ctrl-C comes before the command has taken SIGINT over."""


def note_interrupts() -> None:
    """From now on a Ctrl-C sets ``EARLY_INTERRUPT`` instead of raising ``KeyboardInterrupt``."""
    signal.signal(signal.SIGINT, lambda _sig, _frame: EARLY_INTERRUPT.set())


def raise_interrupts() -> None:
    """From now on a Ctrl-C raises ``KeyboardInterrupt`` again, as Python's default does."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
