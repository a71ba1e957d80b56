"""The solver in worker processes, so a long search never holds up the event loop that serves requests.

A process pool cannot cancel a task that has started, so each running call has a stop flag in shared memory (one
byte per slot of the queue: at most that many calls run at once) that its search reads every few thousand
positions. A call whose client has gone away raises its flag, and its worker is free again within milliseconds,
without the cost of ending and restarting a process.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from golf.adapters.solver_queue import FairQueue
from golf.app import solving
from golf.app.records import Verdict
from golf.engine.solitaire.autoplay import AutoRun, choose_run
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.solver import SearchStopped, SolveResult, solve
from golf.engine.solitaire.state import State

T = TypeVar("T")
_stop_flags: Any = None
"""In a worker process: the pool's stop flags (shared memory, one byte per slot)."""


def _worker_init(increment: int, parent: int, stop_flags: Any) -> None:
    """Runs in each worker: keep the stop flags, lower its priority, and end it if the server dies without
    shutting the pool down (a killed server would otherwise leave its solver processes behind)."""
    global _stop_flags
    _stop_flags = stop_flags
    if increment:
        os.nice(increment)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _stoppable(slot: int, fn: Callable[..., Any], *args: Any) -> Any:
    """Runs in a worker: ``fn(*args)``, stopped early (``None``) when slot ``slot``'s flag is raised."""
    flags = _stop_flags

    def stop() -> bool:
        return bool(flags[slot])

    try:
        return fn(*args, stop=stop)
    except SearchStopped:
        return None  # nobody is waiting for it


class ProcessPoolSolver:
    """``workers`` processes (spawned, not forked: the server runs threads). ``nice`` lowers their priority,
    for background work that must yield to requests. Calls take turns by player, the fewest recent searches
    first (``solver_queue``); at most ``max_waiting`` wait, and more are refused with ``SolverBusy``; one player has
    at most ``per_player`` waiting or running (0: no bound of its own). A call cancelled while it runs (its client
    went away) stops its search."""

    def __init__(self, workers: int = 1, nice: int = 0, max_waiting: int = 64, per_player: int = 0) -> None:
        context = multiprocessing.get_context("spawn")
        self._stop_flags = context.RawArray("b", workers)
        self._free_slots = list(range(workers))
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_worker_init,
            initargs=(nice, os.getpid(), self._stop_flags),
        )
        self._queue = FairQueue(workers, max_waiting, per_player)

    @property
    def queue(self) -> FairQueue:
        """The turns at this pool's workers (calls running and waiting)."""
        return self._queue

    async def _run(self, owner: str | None, fn: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        slot = -1

        def start() -> asyncio.Future[Any]:
            nonlocal slot
            # The queue lets at most ``workers`` calls run, and a slot is given back (below) before the queue
            # passes the turn on, so a free slot is always there.
            slot = self._free_slots.pop()
            self._stop_flags[slot] = 0
            try:
                future = loop.run_in_executor(self._pool, _stoppable, slot, fn, *args)
            except BaseException:
                self._free_slots.append(slot)
                raise
            future.add_done_callback(lambda _: self._free_slots.append(slot))
            return future

        def stop() -> None:
            self._stop_flags[slot] = 1

        return await self._queue.run(owner, start, stop)

    async def solve(self, state: State, budget: int | None, owner: str | None = None) -> SolveResult:
        result: SolveResult = await self._run(owner, solve, state, budget)
        return result

    async def autoplay_run(self, state: State, budget: int | None, owner: str | None = None) -> AutoRun:
        run: AutoRun = await self._run(owner, choose_run, state, budget)
        return run

    async def verdict(self, state: State, budget: int | None, owner: str | None = None) -> Verdict:
        verdict: Verdict = await self._run(owner, solving.verdict_of, state, budget)
        return verdict

    async def find_winnable(
        self,
        rules: SolitaireRules,
        difficulty: Difficulty | None,
        budget: int | None,
        attempts: int,
        owner: str | None = None,
    ) -> tuple[str, Verdict] | None:
        found: tuple[str, Verdict] | None = await self._run(
            owner, solving.find_winnable, rules, difficulty, budget, attempts
        )
        return found

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
