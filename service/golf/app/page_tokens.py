"""What a page token may hold once decoded: a forged token is base64 JSON the client chose, and JSON escapes write
text no database column takes (``\\u0000``: PostgreSQL text holds no NUL; ``\\ud800``: a lone surrogate is no UTF-8
at all, on either database). Such text is refused as a token not of this service (INVALID_ARGUMENT naming
``pageToken``) before it reaches a query, where it was a 500."""

from __future__ import annotations

from typing import Any


def storable(text: str) -> bool:
    """Whether ``text`` can be a query's parameter on every database: no NUL, no lone surrogate."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (JSON's \\ud800 escapes)
        return False
    return True


def storable_items(items: list[Any]) -> bool:
    """Whether every string among a decoded token's ``items`` (the top level: the keys of a page) is ``storable``."""
    return all(storable(item) for item in items if isinstance(item, str))
