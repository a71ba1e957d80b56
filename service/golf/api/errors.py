"""The one error table: each domain error maps to one reason, one gRPC status code and one HTTP status."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import grpc

from golf.api.convert import game_to_proto
from golf.api.table_convert import table_to_proto
from golf.app.errors import (
    AppError,
    Conflict,
    DealInPlay,
    DealUnavailable,
    IdempotencyKeyReused,
    InvalidArgument,
    MoveRefused,
    NotFinished,
    NotFound,
    PermissionDenied,
    RateLimited,
    RoundOver,
    SolverBusy,
    StaleVersion,
    StorageUnavailable,
    Unauthenticated,
)
from golf.app.tables.errors import TableMoveRefused, TableRefusal, TableRefused
from golf.app.tables.read_model import StaleTableVersion
from golf.app.webhooks import TooManyWebhooks
from golf.engine.cardgolf.moves import Refusal as GolfRefusal
from golf.engine.solitaire.moves import Refusal
from golf.v1 import errors_pb2

R = errors_pb2.ErrorReason

# Refusals of the rules. Moves that can never be right from any position are INVALID_ARGUMENT / 400;
# moves that are wrong only in this position are FAILED_PRECONDITION / 409.
_REFUSALS: dict[Refusal, tuple[errors_pb2.ErrorReason.ValueType, grpc.StatusCode, int]] = {
    Refusal.NO_SUCH_COLUMN: (R.ERROR_REASON_NO_SUCH_COLUMN, grpc.StatusCode.INVALID_ARGUMENT, 400),
    Refusal.COLUMN_EMPTY: (R.ERROR_REASON_COLUMN_EMPTY, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.NOT_ADJACENT_RANK: (R.ERROR_REASON_NOT_ADJACENT_RANK, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.NOTHING_ON_KING: (R.ERROR_REASON_NOTHING_ON_KING, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.CARD_MISMATCH: (R.ERROR_REASON_CARD_MISMATCH, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.STOCK_EMPTY: (R.ERROR_REASON_STOCK_EMPTY, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.DRAW_NOT_ALLOWED: (R.ERROR_REASON_DRAW_NOT_ALLOWED, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.GAME_OVER: (R.ERROR_REASON_GAME_OVER, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.NOTHING_TO_UNDO: (R.ERROR_REASON_NOTHING_TO_UNDO, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.UNDO_NOT_ALLOWED: (R.ERROR_REASON_UNDO_NOT_ALLOWED, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.UNDO_LIMIT_REACHED: (R.ERROR_REASON_UNDO_LIMIT_REACHED, grpc.StatusCode.FAILED_PRECONDITION, 409),
    Refusal.NOTHING_TO_PLAY: (R.ERROR_REASON_NOTHING_TO_PLAY, grpc.StatusCode.FAILED_PRECONDITION, 409),
}

# Refusals at a live table: the command does not fit the table's state now (FAILED_PRECONDITION / 409).
_TABLE_REFUSALS: dict[TableRefusal, errors_pb2.ErrorReason.ValueType] = {
    TableRefusal.ALREADY_STARTED: R.ERROR_REASON_TABLE_ALREADY_STARTED,
    TableRefusal.NOT_STARTED: R.ERROR_REASON_TABLE_NOT_STARTED,
    TableRefusal.MATCH_OVER: R.ERROR_REASON_MATCH_OVER,
    TableRefusal.SEAT_TAKEN: R.ERROR_REASON_SEAT_TAKEN,
    TableRefusal.TABLE_FULL: R.ERROR_REASON_TABLE_FULL,
    TableRefusal.ALREADY_SEATED: R.ERROR_REASON_ALREADY_SEATED,
    TableRefusal.SEATS_EMPTY: R.ERROR_REASON_SEATS_EMPTY,
    TableRefusal.SEAT_EMPTY: R.ERROR_REASON_SEAT_EMPTY,
    TableRefusal.BOT_SEAT: R.ERROR_REASON_BOT_SEAT,
}

_WRONG_NOW = (grpc.StatusCode.FAILED_PRECONDITION, 409)
_NEVER_RIGHT = (grpc.StatusCode.INVALID_ARGUMENT, 400)
# Card Golf moves the engine refuses. A move that can never be right at this table (a position outside the grid, a
# position named twice, a seat the table does not have, a reveal of another number of cards than the rules' start
# cards) is INVALID_ARGUMENT / 400 naming the field ``move``; a move wrong only now is FAILED_PRECONDITION / 409.
_GOLF_REFUSALS: dict[GolfRefusal, tuple[errors_pb2.ErrorReason.ValueType, grpc.StatusCode, int]] = {
    GolfRefusal.HOLE_OVER: (R.ERROR_REASON_HOLE_OVER, *_WRONG_NOW),
    GolfRefusal.NOT_YOUR_TURN: (R.ERROR_REASON_NOT_YOUR_TURN, *_WRONG_NOW),
    GolfRefusal.NO_SUCH_SEAT: (R.ERROR_REASON_NO_SUCH_SEAT, *_NEVER_RIGHT),
    GolfRefusal.WRONG_PHASE: (R.ERROR_REASON_WRONG_PHASE, *_WRONG_NOW),
    GolfRefusal.ALREADY_REVEALED: (R.ERROR_REASON_ALREADY_REVEALED, *_WRONG_NOW),
    GolfRefusal.WRONG_REVEAL_COUNT: (R.ERROR_REASON_WRONG_REVEAL_COUNT, *_NEVER_RIGHT),
    GolfRefusal.DUPLICATE_POSITION: (R.ERROR_REASON_DUPLICATE_POSITION, *_NEVER_RIGHT),
    GolfRefusal.NO_SUCH_POSITION: (R.ERROR_REASON_NO_SUCH_POSITION, *_NEVER_RIGHT),
    GolfRefusal.ALREADY_FACE_UP: (R.ERROR_REASON_ALREADY_FACE_UP, *_WRONG_NOW),
    GolfRefusal.MUST_SWAP_TAKEN_DISCARD: (R.ERROR_REASON_MUST_SWAP_TAKEN_DISCARD, *_WRONG_NOW),
    GolfRefusal.FLIP_REQUIRED: (R.ERROR_REASON_FLIP_REQUIRED, *_WRONG_NOW),
    GolfRefusal.DISCARD_PILE_EMPTY: (R.ERROR_REASON_DISCARD_PILE_EMPTY, *_WRONG_NOW),
    GolfRefusal.STOCK_EMPTY: (R.ERROR_REASON_STOCK_EMPTY, *_WRONG_NOW),
    GolfRefusal.KNOCK_NOT_ALLOWED: (R.ERROR_REASON_KNOCK_NOT_ALLOWED, *_WRONG_NOW),
    GolfRefusal.ALREADY_KNOCKED: (R.ERROR_REASON_ALREADY_KNOCKED, *_WRONG_NOW),
    GolfRefusal.PEEK_NOT_ALLOWED: (R.ERROR_REASON_PEEK_NOT_ALLOWED, *_WRONG_NOW),
    GolfRefusal.NO_POWER: (R.ERROR_REASON_NO_POWER, *_WRONG_NOW),
    GolfRefusal.BAD_TARGET: (R.ERROR_REASON_BAD_TARGET, *_WRONG_NOW),
    GolfRefusal.SHIELDED: (R.ERROR_REASON_SHIELDED, *_WRONG_NOW),
    GolfRefusal.POWER_USED: (R.ERROR_REASON_POWER_USED, *_WRONG_NOW),
    GolfRefusal.EARLY_OUT_NOT_ALLOWED: (R.ERROR_REASON_EARLY_OUT_NOT_ALLOWED, *_WRONG_NOW),
    GolfRefusal.MALFORMED_MOVE: (R.ERROR_REASON_MALFORMED_MOVE, *_NEVER_RIGHT),
}


REALM = "golf"


class ApiError(Exception):
    """A refusal ready for either transport: the ``Error`` body, its gRPC code and its HTTP status, and what the
    transports add in their own terms: ``retry_after`` seconds (HTTP ``Retry-After``, gRPC ``RetryInfo``) and the
    HTTP ``WWW-Authenticate`` challenge; for an invalid request, every field ``violation`` (field, description,
    rule), when there are several. The body's ``status`` is set to the code's name here; its standard ``details``
    are built by ``golf.api.error_details`` for each transport."""

    def __init__(
        self,
        body: errors_pb2.Error,
        code: grpc.StatusCode,
        http_status: int,
        retry_after: float | None = None,
        www_authenticate: str | None = None,
        violations: list[Violation] | None = None,
    ) -> None:
        super().__init__(body.message)
        body.status = code.name
        self.body = body
        self.code = code
        self.http_status = http_status
        self.retry_after = retry_after
        self.www_authenticate = www_authenticate
        self.violations = violations or []
        """Every rule broken, when the refusal lists them (else ``body.field`` and ``body.message`` say it)."""


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule of a request: the field (proto3 JSON path), what is wrong, and the rule's id when the
    contract states it (``string.max_len``)."""

    field: str
    description: str
    rule: str = ""


def invalid(field: str, message: str, violations: list[Violation] | None = None) -> ApiError:
    """INVALID_ARGUMENT naming ``field``; ``violations`` lists every rule broken when there are more."""
    return ApiError(
        errors_pb2.Error(reason=R.ERROR_REASON_INVALID_ARGUMENT, message=message, field=field),
        grpc.StatusCode.INVALID_ARGUMENT,
        400,
        violations=violations,
    )


def too_large(limit: int) -> ApiError:
    """A request body over ``limit`` bytes (REST 413; nothing past the limit was read)."""
    body = errors_pb2.Error(
        reason=R.ERROR_REASON_PAYLOAD_TOO_LARGE, message=f"the request body is larger than {limit} bytes"
    )
    return ApiError(body, grpc.StatusCode.RESOURCE_EXHAUSTED, 413)


def method_not_allowed(method: str, allowed: list[str]) -> ApiError:
    """A path that exists, called with a method it does not have (REST 405; ``allowed`` goes in ``Allow``)."""
    body = errors_pb2.Error(
        reason=R.ERROR_REASON_METHOD_NOT_ALLOWED,
        message=f"{method} is not allowed on this path; it takes {', '.join(allowed)}",
    )
    return ApiError(body, grpc.StatusCode.UNIMPLEMENTED, 405)


def to_api_error(err: AppError) -> ApiError:
    """The table. Every ``AppError`` subclass has a row; anything else is a bug and becomes INTERNAL."""
    if isinstance(err, InvalidArgument):
        return invalid(err.field, err.message)
    if isinstance(err, NotFound):
        body = errors_pb2.Error(reason=R.ERROR_REASON_NOT_FOUND, message=err.message)
        return ApiError(body, grpc.StatusCode.NOT_FOUND, 404)
    if isinstance(err, StaleVersion):
        body = errors_pb2.Error(
            reason=R.ERROR_REASON_STALE_VERSION, message=err.message, game=game_to_proto(err.current)
        )
        return ApiError(body, grpc.StatusCode.ABORTED, 409)
    if isinstance(err, StaleTableVersion):
        body = errors_pb2.Error(
            reason=R.ERROR_REASON_STALE_VERSION, message=err.message, table=table_to_proto(err.current)
        )
        return ApiError(body, grpc.StatusCode.ABORTED, 409)
    if isinstance(err, TableRefused):
        body = errors_pb2.Error(reason=_TABLE_REFUSALS[err.reason], message=err.message)
        if err.current is not None:
            body.table.CopyFrom(table_to_proto(err.current))
        return ApiError(body, *_WRONG_NOW)
    if isinstance(err, TableMoveRefused):
        reason, code, status = _GOLF_REFUSALS[err.illegal.reason]
        body = errors_pb2.Error(reason=reason, message=err.message)
        if err.current is not None:
            body.table.CopyFrom(table_to_proto(err.current))
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            body.field = "move"
        return ApiError(body, code, status)
    if isinstance(err, IdempotencyKeyReused):
        body = errors_pb2.Error(
            reason=R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED, message=err.message, field="idempotencyKey"
        )
        return ApiError(body, grpc.StatusCode.ALREADY_EXISTS, 409)
    if isinstance(err, MoveRefused):
        reason, code, status = _REFUSALS[err.illegal.reason]
        body = errors_pb2.Error(reason=reason, message=err.message, game=game_to_proto(err.current))
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            body.field = "move"
        return ApiError(body, code, status)
    if isinstance(err, Conflict):
        body = errors_pb2.Error(reason=R.ERROR_REASON_CONFLICT, message=err.message)
        return ApiError(body, grpc.StatusCode.ABORTED, 409)
    if isinstance(err, TooManyWebhooks):
        body = errors_pb2.Error(reason=R.ERROR_REASON_TOO_MANY_WEBHOOKS, message=err.message)
        return ApiError(body, grpc.StatusCode.FAILED_PRECONDITION, 409)
    if isinstance(err, RoundOver):
        body = errors_pb2.Error(reason=R.ERROR_REASON_ROUND_OVER, message=err.message)
        return ApiError(body, grpc.StatusCode.FAILED_PRECONDITION, 409)
    if isinstance(err, DealInPlay):
        body = errors_pb2.Error(reason=R.ERROR_REASON_DEAL_IN_PLAY, message=err.message)
        return ApiError(body, grpc.StatusCode.FAILED_PRECONDITION, 409)
    if isinstance(err, NotFinished):
        body = errors_pb2.Error(reason=R.ERROR_REASON_NOT_FINISHED, message=err.message)
        return ApiError(body, grpc.StatusCode.FAILED_PRECONDITION, 409)
    if isinstance(err, Unauthenticated):
        body = errors_pb2.Error(reason=R.ERROR_REASON_UNAUTHENTICATED, message=err.message)
        # RFC 6750: a missing token gets the bare challenge, a bad one says why (the message never echoes it).
        challenge = f'Bearer realm="{REALM}"'
        if err.invalid_token:
            challenge += f', error="invalid_token", error_description="{_quotable(err.message)}"'
        return ApiError(body, grpc.StatusCode.UNAUTHENTICATED, 401, www_authenticate=challenge)
    if isinstance(err, PermissionDenied):
        body = errors_pb2.Error(reason=R.ERROR_REASON_PERMISSION_DENIED, message=err.message)
        return ApiError(body, grpc.StatusCode.PERMISSION_DENIED, 403)
    if isinstance(err, RateLimited):
        return _retry_later(
            R.ERROR_REASON_RATE_LIMITED, err.message, err.retry_after, grpc.StatusCode.RESOURCE_EXHAUSTED, 429
        )
    if isinstance(err, DealUnavailable):
        # No winnable deal of what was asked (rules, difficulty) turned up within the solver's budget. The service
        # is not at fault and retrying the same request rarely helps (these rules' winnable deals are rare):
        # relaxing it does. So not UNAVAILABLE / 503, which clients and gateways retry by themselves.
        body = errors_pb2.Error(reason=R.ERROR_REASON_DEAL_UNAVAILABLE, message=err.message)
        return ApiError(body, grpc.StatusCode.FAILED_PRECONDITION, 422)
    if isinstance(err, SolverBusy | StorageUnavailable):
        # The solver's queue is full, or the database is out of reach: not the request at fault; the same request
        # (same idempotency key) may succeed shortly.
        return _retry_later(R.ERROR_REASON_UNAVAILABLE, err.message, err.retry_after, grpc.StatusCode.UNAVAILABLE, 503)
    return internal_error()


def _retry_later(
    reason: errors_pb2.ErrorReason.ValueType, message: str, seconds: float, code: grpc.StatusCode, status: int
) -> ApiError:
    """A refusal the client should retry after ``seconds`` (``retry_delay``; Retry-After / RetryInfo)."""
    body = errors_pb2.Error(reason=reason, message=message)
    body.retry_delay.FromNanoseconds(int(seconds * 1e9))
    return ApiError(body, code, status, retry_after=seconds)


def internal_error() -> ApiError:
    body = errors_pb2.Error(
        reason=R.ERROR_REASON_INTERNAL,
        message="the server could not finish the request; retrying with the same idempotency key is safe",
    )
    return ApiError(body, grpc.StatusCode.INTERNAL, 500)


def _quotable(text: str) -> str:
    """Text safe inside a quoted HTTP header parameter."""
    return "".join(ch for ch in text if " " <= ch <= "~" and ch not in '"\\')


def call_failure(err: Exception, rpc_name: str, log: logging.Logger) -> ApiError:
    """The refusal an exception out of a call becomes, on every transport: an ``ApiError`` as it is, an ``AppError``
    by :func:`to_api_error`; anything else is a bug: logged on ``log``, and INTERNAL."""
    if isinstance(err, ApiError):
        return err
    if isinstance(err, AppError):
        return to_api_error(err)
    log.exception("unhandled error in %s", rpc_name, exc_info=err)
    return internal_error()
