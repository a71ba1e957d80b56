"""The refusals of live tables. Bad input is ``golf.app.errors.InvalidArgument`` and a wrong join code is
``PermissionDenied``; what is left needs two classes of its own: a table command refused in the table's present
state (``TableRefused``, FAILED_PRECONDITION / 409 on the wire) and a card Golf move the engine refuses
(``TableMoveRefused``, carrying the engine's typed :class:`~golf.engine.cardgolf.Refusal`). The solitaire
``MoveRefused`` cannot serve: it carries the solitaire engine's refusal and a solitaire snapshot."""

from __future__ import annotations

from enum import Enum

from golf.app.errors import AppError, Conflict
from golf.app.tables.read_model import TableSnapshot
from golf.engine.cardgolf.moves import IllegalMove


class TableRefusal(Enum):
    """Why a table command was refused. The names are meant to become the wire contract's reason codes."""

    ALREADY_STARTED = "ALREADY_STARTED"
    """Seats change only before the start (join, add a bot, leave, start)."""
    NOT_STARTED = "NOT_STARTED"
    """Moves and resignations wait for the start."""
    MATCH_OVER = "MATCH_OVER"
    SEAT_TAKEN = "SEAT_TAKEN"
    TABLE_FULL = "TABLE_FULL"
    ALREADY_SEATED = "ALREADY_SEATED"
    """A player holds at most one seat of a table."""
    SEATS_EMPTY = "SEATS_EMPTY"
    """The match starts only when every seat is filled."""
    SEAT_EMPTY = "SEAT_EMPTY"
    """Nobody sits there to leave or resign."""
    BOT_SEAT = "BOT_SEAT"
    """A bot plays this seat (from the start, or since its player resigned): nobody may act or resign for it."""


class TableRefused(AppError):
    """A table command refused in the table's present state; the table is unchanged."""

    def __init__(self, reason: TableRefusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.current: TableSnapshot | None = None
        """The table as the caller sees it now, when the use case that refused knows it (the wire's
        ``Error.table``)."""


class TableMoveRefused(AppError):
    """A move the engine refuses (or that is not among the seat's legal moves); the table is unchanged."""

    def __init__(self, illegal: IllegalMove) -> None:
        super().__init__(illegal.message)
        self.illegal = illegal
        self.current: TableSnapshot | None = None
        """The table as the caller sees it now, when the use case that refused knows it (the wire's
        ``Error.table``)."""


class TableChanged(Conflict):
    """A write to a table's log lost: the table was no longer at the version the writer read (another writer
    appended first), or ``key_taken``: the command's idempotency key is already in the log (look its command up
    to answer a retry with the stored result). A ``Conflict``, so a client that sees it may retry."""

    def __init__(self, message: str, key_taken: bool = False) -> None:
        super().__init__(message)
        self.key_taken = key_taken
