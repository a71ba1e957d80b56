"""The ``authorization`` value of a call, as every transport takes it from its headers or metadata."""

from __future__ import annotations

from collections.abc import Sequence

from golf.app.errors import Unauthenticated


def one_authorization(values: Sequence[str]) -> str | None:
    """The call's one ``authorization`` value (None when it sends none); ``Unauthenticated`` when it sends more than
    one. Which of two names the caller is not for the server to guess: REST read the first, gRPC the last, so one
    request could act as one player over one transport and as another over the other (or as whoever a proxy that
    adds its own value passes for)."""
    if len(values) > 1:
        raise Unauthenticated(
            f"the request carries {len(values)} 'authorization' values; send one: 'Bearer <access token>'"
        )
    return values[0] if values else None
