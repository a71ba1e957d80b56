"""Domain errors of the use cases. The API layer maps each to one gRPC code and one HTTP status."""

from __future__ import annotations

from typing import TYPE_CHECKING

from golf.engine.solitaire.moves import IllegalMove

if TYPE_CHECKING:
    from golf.app.records import GameSnapshot


class AppError(Exception):
    """Base of every error a use case reports to a client."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidArgument(AppError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class NotFound(AppError):
    pass


class StaleVersion(AppError):
    def __init__(self, message: str, current: GameSnapshot) -> None:
        super().__init__(message)
        self.current = current


class IdempotencyKeyReused(AppError):
    pass


class MoveRefused(AppError):
    def __init__(self, illegal: IllegalMove, current: GameSnapshot) -> None:
        super().__init__(illegal.message)
        self.illegal = illegal
        self.current = current


class Conflict(AppError):
    """Concurrent writers kept winning the race for the same game; the client may retry."""


class DealUnavailable(AppError):
    """No winnable deal could be found within the solver's budget."""


class RoundOver(AppError):
    """The round has no hole left to start."""


class NotFinished(AppError):
    """What was asked for exists and the caller may see it, but it is still being played: only a finished game,
    round or match is replayed (its last step reveals what play still hides)."""


class DealInPlay(AppError):
    """Another player's finished game whose deal is still in play (``golf.app.reveals``): its seed, stock, log and
    replay would show cards of a stock someone may still be playing."""


class Unauthenticated(AppError):
    """No usable bearer token: missing (``invalid_token`` False), or malformed, badly signed, expired, of an
    unknown issuer or for another audience (``invalid_token`` True)."""

    def __init__(self, message: str, invalid_token: bool = True) -> None:
        super().__init__(message)
        self.invalid_token = invalid_token


class PermissionDenied(AppError):
    """The caller is known, and may see that the resource exists, but may not do this to it."""


class RateLimited(AppError):
    """Too many calls of one kind from one player or address; ``retry_after`` seconds until the next is let in."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StorageUnavailable(AppError):
    """The database cannot be reached or cannot be used right now (refused or lost connections, a database file
    that cannot be opened, disk I/O errors); the client may retry after ``retry_after`` seconds. ``reason`` says
    what failed, for the log: it is not sent to clients."""

    def __init__(self, reason: str, retry_after: float = 2.0) -> None:
        super().__init__("the database cannot be reached right now; try again in a few seconds")
        self.reason = reason
        self.retry_after = retry_after


class SolverBusy(AppError):
    """The solver's queue is full (every player's searches wait in it); the client may retry after
    ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: float = 2.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after
