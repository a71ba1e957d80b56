"""The ``golf`` command's entry point (the console script and ``python -m golf``): Ctrl-C is taken over first.

A terminal's Ctrl-C may come at any moment of the command's start. Until this module's first statement runs, the
interpreter's own handler turns it into a ``KeyboardInterrupt`` with a traceback, so SIGINT is taken over here,
before anything else of the command is imported (``golf.cli`` imports ``argparse``; the commands import far more),
and noted until the command is ready to take it (``golf.interrupts``). What remains is the interpreter's own start
(its ``site`` module), which no code of ours precedes. Importing this module takes SIGINT over for the process: it is
meant to be imported only to run the command.
"""

try:
    from golf.interrupts import note_interrupts

    note_interrupts()
except KeyboardInterrupt:  # the Ctrl-C came while this very import ran: the user's choice, said as shells do
    raise SystemExit(130) from None

from golf.cli import main  # after SIGINT is taken over, on purpose

__all__ = ["main"]
