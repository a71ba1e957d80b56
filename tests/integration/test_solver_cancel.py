"""The solver's worker processes stop the search of a call whose client went away, and only that one: the worker
is free again for other players long before the search would have ended by itself."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable

import pytest

from golf.adapters.solver_pool import ProcessPoolSolver
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State

TWO_DECKS = PRESETS["two-decks"]
ENDLESS = State.initial(TWO_DECKS, Layout.from_seed(TWO_DECKS, "flood-2"))
"""Searched without a budget, this deal takes many minutes (no line in 30 million positions): a worker it leaves
within the test's patience was stopped."""
QUICK = State.initial(PRESETS["standard"], Layout.from_pysol(2))
PATIENCE = 20.0


async def _pool(workers: int) -> AsyncIterator[ProcessPoolSolver]:
    pool = ProcessPoolSolver(workers)
    try:
        # Start every worker (a process pool starts them on demand) before the test's searches.
        await asyncio.gather(*(pool.solve(QUICK, None, owner=f"warm{i}") for i in range(workers)))
        yield pool
    finally:
        processes = list(pool._pool._processes or {})
        pool.close()
        for pid in processes:  # a search that was never stopped would run on for minutes: end our own workers
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
async def pool() -> AsyncIterator[ProcessPoolSolver]:
    async for p in _pool(1):
        yield p


@pytest.fixture
async def pool2() -> AsyncIterator[ProcessPoolSolver]:
    async for p in _pool(2):
        yield p


async def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = asyncio.get_running_loop().time() + PATIENCE
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, f"not within {PATIENCE:g} s: {what}"
        await asyncio.sleep(0.02)


async def test_the_search_of_a_call_whose_client_left_stops(pool: ProcessPoolSolver) -> None:
    abandoned = asyncio.create_task(pool.solve(ENDLESS, None, owner="ann"))
    await asyncio.sleep(0.3)  # the search has started in the worker
    assert pool.queue.running == 1
    abandoned.cancel()
    await _until(lambda: pool.queue.running == 0, "the worker is free")
    assert await pool.solve(QUICK, None, owner="bob") == solve(QUICK)  # and serves the next player


async def test_a_call_cancelled_before_its_search_starts_never_searches(pool: ProcessPoolSolver) -> None:
    call = asyncio.create_task(pool.solve(ENDLESS, None, owner="ann"))
    await asyncio.sleep(0)  # handed to the pool, not yet running in the worker
    call.cancel()
    await _until(lambda: pool.queue.running == 0, "the worker is free")
    assert await pool.solve(QUICK, None, owner="bob") == solve(QUICK)


async def test_only_the_abandoned_search_stops(pool2: ProcessPoolSolver) -> None:
    ann = asyncio.create_task(pool2.solve(ENDLESS, None, owner="ann"))
    bob = asyncio.create_task(pool2.solve(ENDLESS, None, owner="bob"))
    await asyncio.sleep(0.3)
    assert pool2.queue.running == 2
    ann.cancel()
    await _until(lambda: pool2.queue.running == 1, "ann's worker is free")
    cid = await pool2.solve(QUICK, None, owner="cid")  # served by the worker ann's search left
    assert cid == solve(QUICK)
    assert not bob.done()  # bob's search goes on: his client is still there
    bob.cancel()
    await _until(lambda: pool2.queue.running == 0, "bob's worker is free")
