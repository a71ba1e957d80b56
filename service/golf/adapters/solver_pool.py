"""The solver in worker processes, so a long search never holds up the event loop that serves requests."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from golf.adapters.solver_queue import FairQueue
from golf.app import solving
from golf.app.records import Verdict
from golf.engine.solitaire.autoplay import AutoRun, choose_run
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.solver import SolveResult, solve
from golf.engine.solitaire.state import State

T = TypeVar("T")


def _worker_init(increment: int, parent: int) -> None:
    """Runs in each worker: lower its priority, and end it if the server dies without shutting the pool down
    (a killed server would otherwise leave its solver processes behind)."""
    if increment:
        os.nice(increment)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class ProcessPoolSolver:
    """``workers`` processes (spawned, not forked: the server runs threads). ``nice`` lowers their priority,
    for background work that must yield to requests. Calls take turns by player (``solver_queue``); at most
    ``max_waiting`` wait, and more are refused with ``SolverBusy``."""

    def __init__(self, workers: int = 1, nice: int = 0, max_waiting: int = 64) -> None:
        self._pool = ProcessPoolExecutor(
            max_workers=workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_worker_init,
            initargs=(nice, os.getpid()),
        )
        self._queue = FairQueue(workers, max_waiting)

    async def _run(self, owner: str | None, fn: Any, *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await self._queue.run(owner, lambda: loop.run_in_executor(self._pool, fn, *args))

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
