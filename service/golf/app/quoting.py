"""Client text inside error messages: never more than a short prefix of what the client sent."""

from __future__ import annotations

MAX_SHOWN = 64


def shown(value: str) -> str:
    """``value`` quoted for a message, cut to ``MAX_SHOWN`` characters (an id is 36)."""
    if len(value) <= MAX_SHOWN:
        return repr(value)
    return repr(value[:MAX_SHOWN]) + f"... ({len(value)} characters)"
