"""REST requests whose client hangs up: their handler is cancelled, as gRPC cancels a call its client gave up.

uvicorn never cancels an endpoint when the connection closes. A hint whose client left would otherwise keep its
turn at the solver and its worker for the whole search; cancelled, it leaves the queue, or stops its search within
milliseconds (``golf.adapters.solver_queue``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

from starlette.requests import Request

T = TypeVar("T")

CLIENT_GONE = 499
"""The status recorded for a request whose client hung up (nginx's "client closed request"); sent to nobody."""
WATCH_AFTER_SECONDS = 0.05
"""Only a request still running this long watches its connection: the quick ones pay for a timer, not a task."""


async def unless_client_leaves(request: Request, work: Awaitable[T]) -> T | None:
    """``work``'s result; or, if the client hangs up first, ``work`` cancelled and ``None``.

    The watcher reads ASGI's ``receive``: the body has been read by then, so its next message is
    ``http.disconnect``, sent when the connection closes. A cancellation from elsewhere (the server stopping)
    goes on as it came.
    """
    handler = asyncio.current_task()
    assert handler is not None
    gone = False
    watch: asyncio.Task[None] | None = None

    async def hang_up() -> None:
        nonlocal gone
        while (await request.receive())["type"] != "http.disconnect":
            pass  # GET's empty body
        gone = True
        handler.cancel()

    def start_watch() -> None:
        nonlocal watch
        watch = asyncio.ensure_future(hang_up())

    timer = asyncio.get_running_loop().call_later(WATCH_AFTER_SECONDS, start_watch)
    try:
        return await work
    except asyncio.CancelledError:
        if not gone:
            raise
        handler.uncancel()
        return None
    finally:
        timer.cancel()
        if watch is not None:
            watch.cancel()
