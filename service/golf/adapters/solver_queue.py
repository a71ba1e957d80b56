"""Turns at the solver: its worker processes are shared by every player, so calls wait in one queue per player and
the player with the least claim goes next (its solver seconds in the last searches plus what its next search is
expected to take: a cheap hint weighs little; then its calls in the queue; round-robin among equals), the queue
is bounded per player and in all, and a call whose client has gone away leaves the queue.

Fairness by recent use, not only by turns: with thirty players each keeping a search queued, plain turns make an
honest player's one hint wait behind twenty-nine others' searches (``bench/fair_solver.py``; its figures are in
bench/README.md). Served by least claim
first (``FairQueue._claim``; the calls in the queue decide at a flood's start, when nobody has used any), a player
who asks now and then, or whose searches are cheap, goes ahead of every player who keeps the solver busy with
long ones, and waits for the searches already running only; players alike still share it in turns.

Bounds: a player may have at most ``per_player`` calls waiting or running (more: ``RateLimited``, 429, the
player's own doing); at most ``max_waiting`` calls wait in all (more: ``SolverBusy``, 503). When the queue is full
a player with fewer calls in it than the player with the most takes that player's newest waiting call's place
(that call is refused ``SolverBusy``), so a flood of many players can never lock out one who asks rarely.

A call already running when its client goes away is told to ``stop`` (the pool's workers then end its search
within milliseconds); its slot is freed only when it really ends, so the next player's turn is never overbooked.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import Counter, OrderedDict, defaultdict, deque
from collections.abc import Awaitable, Callable
from typing import TypeVar

from golf.app.errors import RateLimited, SolverBusy

T = TypeVar("T")
SHARED = ""
"""The owner of calls made for no player (verdicts of finished games, background work)."""
RECENT = 64
"""How many of the last searches ended count as a player's recent use."""
SEARCH_CHARGE = 0.001
"""Seconds charged to each search beside its time, so that searches count even where they take no time."""
FIRST_COST = 1.0
"""Seconds a search is expected to take before any has ended (then: the recent searches' mean)."""
BUSY_RETRY = 2.0
"""Retry-After of a refusal for a full queue (seconds)."""


class FairQueue:
    """``slots`` calls run at once; the others wait, each player's in order, the player with the fewest recent
    searches first (see the module docstring). ``per_player`` bounds one player's calls waiting or running (0: no
    bound of its own)."""

    def __init__(
        self, slots: int, max_waiting: int, per_player: int = 0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        """``clock`` measures how long each search held its slot (seconds; tests give one that stands still)."""
        if slots < 1 or max_waiting < 0 or per_player < 0:
            raise ValueError("a solver queue needs at least one slot and non-negative bounds")
        self._slots = slots
        self._max_waiting = max_waiting
        self._per_player = per_player
        self._clock = clock
        self._running = 0
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()
        self._count = 0
        self._held: Counter[str] = Counter()
        """Each owner's calls waiting or running."""
        self._recent: deque[tuple[str, float]] = deque()
        """The last ``RECENT`` searches that ended: whose, and the seconds they held a slot."""
        self._recent_use: defaultdict[str, float] = defaultdict(float)
        """Each owner's seconds in ``_recent``."""
        self._recent_n: Counter[str] = Counter()
        """Each owner's searches in ``_recent``."""
        self._recent_total = 0.0

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
        if self._per_player and self._held[who] >= self._per_player:
            raise RateLimited(
                f"at most {self._per_player} hint, AutoPlay and winnable-deal searches of one player wait or run at"
                " once; retry when one has ended",
                BUSY_RETRY,
            )
        self._held[who] += 1
        try:
            await self._turn(who)
        except BaseException:
            self._drop_held(who)
            raise
        began = self._clock()
        task = asyncio.ensure_future(call())
        task.add_done_callback(lambda _task: self._charge(who, self._clock() - began))
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
                self._drop_held(who)
                self._release(who)

    def _drop_held(self, owner: str) -> None:
        self._held[owner] -= 1
        if self._held[owner] <= 0:
            del self._held[owner]

    def _charge(self, owner: str, seconds: float) -> None:
        """``owner``'s search ended after ``seconds`` in a slot: it counts in their recent use."""
        if len(self._recent) == RECENT:
            oldest, used = self._recent.popleft()
            self._recent_total -= used
            self._recent_use[oldest] -= used
            self._recent_n[oldest] -= 1
            if self._recent_n[oldest] <= 0:
                del self._recent_use[oldest], self._recent_n[oldest]
        charged = max(seconds, 0.0) + SEARCH_CHARGE
        self._recent.append((owner, charged))
        self._recent_total += charged
        self._recent_use[owner] += charged
        self._recent_n[owner] += 1

    def _claim(self, owner: str) -> tuple[float, int]:
        """How ``owner``'s next turn ranks, lowest first: its recent solver seconds plus what its next search is
        expected to take (its own recent mean, else everyone's), then its calls in the queue. A player whose
        searches are cheap, or who asks rarely, goes ahead of those who keep the solver busy; players alike take
        turns (a turn adds its time to the player's claim)."""
        n = self._recent_n.get(owner, 0)
        used = self._recent_use.get(owner, 0.0)
        everyone = self._recent_total / len(self._recent) if self._recent else FIRST_COST
        return used + (used / n if n else everyone), self._held[owner]

    def _release_after(self, owner: str, task: asyncio.Future[object]) -> None:
        if not task.cancelled():
            task.exception()  # retrieved: nobody is waiting for it any more
        self._drop_held(owner)
        self._release(owner)

    async def _turn(self, owner: str) -> None:
        if self._running < self._slots and not self._count:
            self._running += 1
            return
        if self._count >= self._max_waiting and not self._make_room(owner):
            raise SolverBusy("the solver is busy with other players' requests; retry shortly", retry_after=BUSY_RETRY)
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(owner, deque()).append(turn)
        self._count += 1
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled() and turn.exception() is None:
                self._release(owner)  # the turn came just as the client left: pass it on
            else:
                self._forget(owner, turn)
            raise

    def _make_room(self, owner: str) -> bool:
        """The queue is full: refuse the newest waiting call of the player with the most waiting, if that player
        has more than one more than ``owner`` (so ``owner`` is not the flooder). Whether a place was made."""
        if not self._waiting:
            return False
        mine = len(self._waiting.get(owner, ()))
        biggest, queue = max(self._waiting.items(), key=lambda item: len(item[1]))
        if len(queue) <= mine + 1:
            return False
        turn = queue.pop()
        self._count -= 1
        if not queue:
            del self._waiting[biggest]
        if not turn.done():
            turn.set_exception(
                SolverBusy("the solver is busy with other players' requests; retry shortly", retry_after=BUSY_RETRY)
            )
        return True

    def _forget(self, owner: str, turn: asyncio.Future[None]) -> None:
        queue = self._waiting.get(owner)
        if queue is not None and turn in queue:
            queue.remove(turn)
            self._count -= 1
            if not queue:
                del self._waiting[owner]

    def _release(self, done: str) -> None:
        """``done``'s call ended: give its slot to the waiting player with the fewest recent searches (the first
        in line among equals), or leave it free. A player served goes to the back of the line, so among equals
        nobody has two turns while another waits."""
        if done in self._waiting and len(self._waiting) > 1:
            self._waiting.move_to_end(done)
        while self._waiting:
            owner = min(self._waiting, key=self._claim)  # min keeps the first of equals
            queue = self._waiting[owner]
            turn = queue.popleft()
            self._count -= 1
            if queue:
                self._waiting.move_to_end(owner)
            else:
                del self._waiting[owner]
            if not turn.done():
                turn.set_result(None)  # the slot passes straight to it
                return
        self._running -= 1
