"""Idempotency keys and races for a version, as every use case that changes something handles them.

A client sends an idempotency key with each change (and may send the version it saw): a retry with the key gets
the stored result, the same key for another change is ``IdempotencyKeyReused``. Of two writers at one version the
database keeps exactly one (a unique constraint, not a check in Python); the loser reads again and runs its change
again, or, when its key is the one stored (a retry that raced its first try), answers with the stored result.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

from golf.app.errors import Conflict, InvalidArgument

MAX_KEY_LENGTH = 128
"""The longest idempotency key taken (the contract's own limit on ``idempotency_key``)."""
RACE_ATTEMPTS = 5
"""How often a change is run again on a fresh read after losing the race for a version, before ``Conflict``."""

T = TypeVar("T")
E = TypeVar("E", bound=Exception)


def check_key(key: str | None) -> None:
    """Refuse an idempotency key that is empty or longer than :data:`MAX_KEY_LENGTH` (``None``: none was given,
    where a key is optional)."""
    if key is not None and not 0 < len(key) <= MAX_KEY_LENGTH:
        raise InvalidArgument("idempotencyKey", f"idempotencyKey must be 1 to {MAX_KEY_LENGTH} characters")


def id_from_key(namespace: uuid.UUID, *parts: str) -> str:
    """A row's id made from who sent a create and its idempotency key (``parts``), so a retried create finds the row
    the first request made."""
    return str(uuid.uuid5(namespace, "\n".join(parts)))


async def until_stored(
    attempt: Callable[[], Awaitable[T]],
    lost: type[E],
    stored: Callable[[E], Awaitable[T | None]],
    gave_up: str,
) -> T:
    """Run ``attempt`` (one transaction) until it is not ``lost`` a race for a version, at most
    :data:`RACE_ATTEMPTS` times, then ``Conflict(gave_up)``. After each lost race ``stored`` says what to answer
    instead (the result stored under the request's key, when the race was lost to its own retry), or ``None`` to run
    the attempt again on a fresh read."""
    for _ in range(RACE_ATTEMPTS):
        try:
            return await attempt()
        except lost as race:
            answer = await stored(race)
            if answer is not None:
                return answer
    raise Conflict(gave_up)
