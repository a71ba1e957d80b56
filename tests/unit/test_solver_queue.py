"""Turns at the solver: players take turns, the queue is bounded, a call whose client left leaves the queue, and a
running search keeps its slot until it really ends."""

from __future__ import annotations

import asyncio

import pytest

from golf.adapters.solver_queue import FairQueue
from golf.app.errors import SolverBusy


class Searches:
    """Fake searches that end when the test says so, recording the order they started in."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.gates: dict[str, asyncio.Event] = {}

    def call(self, name: str) -> object:
        gate = self.gates.setdefault(name, asyncio.Event())

        async def search() -> str:
            self.started.append(name)
            await gate.wait()
            return name

        return search

    def finish(self, name: str) -> None:
        self.gates[name].set()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_players_take_turns() -> None:
    queue, s = FairQueue(slots=1, max_waiting=100), Searches()
    tasks = [asyncio.create_task(queue.run("ann", s.call(f"ann{i}"))) for i in range(5)]  # type: ignore[arg-type]
    await _settle()
    tasks.append(asyncio.create_task(queue.run("bob", s.call("bob0"))))  # type: ignore[arg-type]
    tasks.append(asyncio.create_task(queue.run("cid", s.call("cid0"))))  # type: ignore[arg-type]
    await _settle()
    assert s.started == ["ann0"] and queue.waiting == 6
    for name in ["ann0", "bob0", "cid0", "ann1", "ann2", "ann3", "ann4"]:
        assert s.started[-1] == name
        s.finish(name)
        await _settle()
    assert [t.result() for t in tasks] == ["ann0", "ann1", "ann2", "ann3", "ann4", "bob0", "cid0"]
    assert queue.running == 0 and queue.waiting == 0


async def test_the_queue_is_bounded() -> None:
    queue, s = FairQueue(slots=1, max_waiting=2), Searches()
    tasks = [asyncio.create_task(queue.run("ann", s.call(f"a{i}"))) for i in range(3)]  # type: ignore[arg-type]
    await _settle()
    with pytest.raises(SolverBusy) as busy:
        await queue.run("bob", s.call("b"))  # type: ignore[arg-type]
    assert busy.value.retry_after > 0
    for name in ("a0", "a1", "a2"):
        s.finish(name)
    await asyncio.gather(*tasks)


async def test_a_call_whose_client_left_leaves_the_queue() -> None:
    queue, s = FairQueue(slots=1, max_waiting=300), Searches()
    first = asyncio.create_task(queue.run("ann", s.call("a0")))  # type: ignore[arg-type]
    await _settle()
    abandoned = [asyncio.create_task(queue.run("ann", s.call(f"x{i}"))) for i in range(200)]  # type: ignore[arg-type]
    await _settle()
    assert queue.waiting == 200
    for task in abandoned:
        task.cancel()
    await _settle()
    assert queue.waiting == 0
    bob = asyncio.create_task(queue.run("bob", s.call("bob")))  # type: ignore[arg-type]
    await _settle()
    s.finish("a0")
    await _settle()
    assert s.started == ["a0", "bob"]  # none of the 200 ever ran
    s.finish("bob")
    assert await bob == "bob" and await first == "a0"


async def test_a_running_search_keeps_its_slot_until_it_ends() -> None:
    queue, s = FairQueue(slots=1, max_waiting=10), Searches()
    running = asyncio.create_task(queue.run("ann", s.call("a0")))  # type: ignore[arg-type]
    await _settle()
    nxt = asyncio.create_task(queue.run("bob", s.call("b0")))  # type: ignore[arg-type]
    await _settle()
    running.cancel()  # the client left; the worker process is still searching
    await _settle()
    assert s.started == ["a0"] and queue.running == 1
    s.finish("a0")  # the search ends: now the slot passes on
    await _settle()
    assert s.started == ["a0", "b0"]
    s.finish("b0")
    assert await nxt == "b0"
    assert queue.running == 0
