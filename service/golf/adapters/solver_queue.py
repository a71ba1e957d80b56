"""Turns at the solver: its worker processes are shared by every player, so calls wait in one queue per player and
the players take turns (round-robin), the queue is bounded, and a call whose client has gone away leaves the queue.

A call already running when its client goes away is told to ``stop`` (the pool's workers then end its search
within milliseconds); its slot is freed only when it really ends, so the next player's turn is never overbooked.
One player's two hundred abandoned hints therefore delay another player's hint by a few milliseconds, not by the
two hundred searches, nor by the one that was running.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from golf.app.errors import SolverBusy

T = TypeVar("T")
SHARED = ""
"""The owner of calls made for no player (verdicts of finished games, background work)."""


class FairQueue:
    """``slots`` calls run at once; the others wait, each player's in order, the players in turn."""

    def __init__(self, slots: int, max_waiting: int) -> None:
        if slots < 1 or max_waiting < 0:
            raise ValueError("a solver queue needs at least one slot and a non-negative bound")
        self._slots = slots
        self._max_waiting = max_waiting
        self._running = 0
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self._count = 0

    @property
    def waiting(self) -> int:
        """Calls waiting for a turn."""
        return self._count

    @property
    def running(self) -> int:
        return self._running

    async def run(
        self, owner: str | None, call: Callable[[], Awaitable[T]], stop: Callable[[], None] | None = None
    ) -> T:
        """Run ``call`` when ``owner``'s turn comes; ``SolverBusy`` when the queue is full.

        Cancelled while waiting (the client went away), the call leaves the queue and never runs. Cancelled while
        running, ``stop`` is called (it asks the search in its process to end) and the slot stays taken until the
        call really ends."""
        who = owner or SHARED
        await self._turn(who)
        task = asyncio.ensure_future(call())
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():
                # The client went away while its search runs in a worker process: ask it to stop; the slot is
                # free when it has.
                task.add_done_callback(functools.partial(self._release_after, who))
                if stop is not None:
                    stop()
            raise
        finally:
            if task.done():
                self._release(who)

    def _release_after(self, owner: str, task: asyncio.Future[object]) -> None:
        if not task.cancelled():
            task.exception()  # retrieved: nobody is waiting for it any more
        self._release(owner)

    async def _turn(self, owner: str) -> None:
        if self._running < self._slots and not self._count:
            self._running += 1
            return
        if self._count >= self._max_waiting:
            raise SolverBusy("the solver is busy with other players' requests; retry shortly", retry_after=2.0)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(owner, deque()).append(turn)
        self._count += 1
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self._release(owner)  # the turn came just as the client left: pass it on
            else:
                self._forget(owner, turn)
            raise

    def _forget(self, owner: str, turn: asyncio.Future[None]) -> None:
        queue = self._waiting.get(owner)
        if queue is not None and turn in queue:
            queue.remove(turn)
            self._count -= 1
            if not queue:
                del self._waiting[owner]

    def _release(self, done: str) -> None:
        """``done``'s call ended: give its slot to the next player in turn, or leave it free. A player served goes
        to the back of the line, so nobody has two turns while another waits."""
        if done in self._waiting and len(self._waiting) > 1:
            self._waiting.move_to_end(done)
        while self._waiting:
            owner, queue = next(iter(self._waiting.items()))
            turn = queue.popleft()
            self._count -= 1
            if queue:
                self._waiting.move_to_end(owner)
            else:
                del self._waiting[owner]
            if not turn.cancelled():
                turn.set_result(None)  # the slot passes straight to it
                return
        self._running -= 1
