"""Pages of a list: the page size asked for, and the page token of the next page (the keyset of the last row of a
page, base64 JSON).

What a page token may hold once decoded: a forged token is base64 JSON the client chose, and JSON escapes write
text no database column takes (``\\u0000``: PostgreSQL text holds no NUL; ``\\ud800``: a lone surrogate is no UTF-8
at all, on either database). Such text is refused as a token not of this service (INVALID_ARGUMENT naming
``pageToken``) before it reaches a query, where it was a 500."""

from __future__ import annotations

import base64
import binascii
import json
from datetime import UTC, datetime
from typing import Any

from golf.app.errors import InvalidArgument

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100


def check_page_size(page_size: int) -> int:
    """The page size asked for (0: the default), or ``InvalidArgument`` naming ``pageSize``."""
    if page_size < 0 or page_size > MAX_PAGE_SIZE:
        raise InvalidArgument("pageSize", f"pageSize must be 0 to {MAX_PAGE_SIZE}")
    return page_size or DEFAULT_PAGE_SIZE


def encode_page_token(created_at: datetime, row_id: str) -> str:
    """The keyset of the last row of a page, for the next page."""
    raw = json.dumps([created_at.isoformat(), row_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(token: str) -> tuple[datetime, str]:
    """The keyset a page token of :func:`encode_page_token` holds; ``InvalidArgument`` naming ``pageToken`` for
    anything else (a forged one, or text no database takes: :func:`storable`)."""
    try:
        when, row_id = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        at = datetime.fromisoformat(when)
        if at.tzinfo is None:
            raise ValueError("naive time")
        if not isinstance(row_id, str) or not storable(row_id):
            raise ValueError("not an id")
        # In UTC, as stored: a forged offset at the ends of the calendar fails here, not in the database.
        return at.astimezone(UTC), row_id
    except (ValueError, TypeError, OverflowError, binascii.Error):
        raise InvalidArgument("pageToken", "not a page token from this service") from None


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
