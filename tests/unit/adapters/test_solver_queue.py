"""Turns at the solver: players take turns, the queue is bounded, a call whose client left leaves the queue, and a
running search keeps its slot until it really ends."""

from __future__ import annotations

import asyncio

import pytest

from golf.adapters.solver_queue import FairQueue
from golf.app.errors import RateLimited, SolverBusy


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


def STILL() -> float:
    """A clock that stands still: every fake search is charged the same, however fast the machine runs it."""
    return 0.0


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_players_take_turns() -> None:
    queue, s = FairQueue(slots=1, max_waiting=100, clock=STILL), Searches()
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
    queue, s = FairQueue(slots=1, max_waiting=2, clock=STILL), Searches()
    ann = [asyncio.create_task(queue.run("ann", s.call(f"a{i}"))) for i in range(2)]  # type: ignore[arg-type]
    await _settle()
    bob = asyncio.create_task(queue.run("bob", s.call("b0")))  # type: ignore[arg-type]
    await _settle()
    assert queue.waiting == 2  # a1 and b0: full
    with pytest.raises(SolverBusy) as busy:  # cid would have as many waiting as the most of anyone: refused
        await queue.run("cid", s.call("c0"))  # type: ignore[arg-type]
    assert busy.value.retry_after > 0
    for name in ("a0", "a1", "b0"):
        s.finish(name)
    await asyncio.gather(*ann, bob)


async def test_a_full_queue_makes_room_for_a_player_with_fewer_calls_in_it() -> None:
    queue, s = FairQueue(slots=1, max_waiting=3, clock=STILL), Searches()
    ann = [asyncio.create_task(queue.run("ann", s.call(f"a{i}"))) for i in range(4)]  # type: ignore[arg-type]
    await _settle()
    assert queue.waiting == 3
    bob = asyncio.create_task(queue.run("bob", s.call("b0")))  # type: ignore[arg-type]
    await _settle()
    # Ann's newest waiting call gave its place to Bob's: a flood can never lock out a player who asks rarely.
    assert ann[3].done() and isinstance(ann[3].exception(), SolverBusy) and queue.waiting == 3
    for name in ("a0", "b0", "a1", "a2"):
        assert s.started[-1] == name
        s.finish(name)
        await _settle()
    assert await bob == "b0" and [await t for t in ann[:3]] == ["a0", "a1", "a2"]


async def test_one_player_is_bounded_on_its_own() -> None:
    queue, s = FairQueue(slots=1, max_waiting=100, per_player=2, clock=STILL), Searches()
    ann = [asyncio.create_task(queue.run("ann", s.call(f"a{i}"))) for i in range(2)]  # type: ignore[arg-type]
    await _settle()
    with pytest.raises(RateLimited) as refused:  # one running, one waiting: Ann's share
        await queue.run("ann", s.call("a2"))  # type: ignore[arg-type]
    assert refused.value.retry_after > 0 and "at most 2" in refused.value.message
    bob = asyncio.create_task(queue.run("bob", s.call("b0")))  # type: ignore[arg-type]
    s.finish("a0")
    await _settle()
    ann.append(asyncio.create_task(queue.run("ann", s.call("a2"))))  # type: ignore[arg-type]  # room again
    for name in ("b0", "a1", "a2"):
        await _settle()
        s.finish(name)
    assert [await t for t in ann] == ["a0", "a1", "a2"] and await bob == "b0"


async def test_a_player_who_asks_rarely_goes_ahead_of_thirty_who_keep_the_solver_busy() -> None:
    # Thirty guests each keep two searches queued; the honest player's hint runs next, not after 29 others'.
    queue, s = FairQueue(slots=1, max_waiting=64, per_player=3, clock=STILL), Searches()
    guests = sorted(f"guest{n}" for n in range(30))
    tasks = [asyncio.create_task(queue.run(g, s.call(f"{g}-{i}"))) for i in range(2) for g in guests]  # type: ignore[arg-type]
    await _settle()
    for _ in range(40):  # the flood runs a while: every guest has used the solver recently
        s.finish(s.started[-1])
        await _settle()
        done = s.started[-1].rpartition("-")[0]
        if sum(1 for t in s.started if t.startswith(done + "-")) < 4:
            tasks.append(asyncio.create_task(queue.run(done, s.call(f"{done}-{len(s.started)}"))))  # type: ignore[arg-type]
        await _settle()
    honest = asyncio.create_task(queue.run("honest", s.call("hint")))  # type: ignore[arg-type]
    await _settle()
    s.finish(s.started[-1])  # the search running when the hint came
    await _settle()
    assert s.started[-1] == "hint"
    s.finish("hint")
    assert await honest == "hint"
    # Among the guests, turns: none started a second search before every other had started one.
    assert sorted(name.rpartition("-")[0] for name in s.started[:30]) == guests
    for task in tasks:
        task.cancel()
    for name in list(s.gates):
        s.finish(name)
    await asyncio.gather(*tasks, return_exceptions=True)


async def test_at_a_floods_start_a_player_with_one_call_goes_ahead_of_thirty_with_three() -> None:
    # Nobody has used the solver yet: the honest player, come last with one call, is next after the one running
    # (bench/fair_solver.py measured 25 s behind thirty guests' first searches when arrival order decided).
    queue, s = FairQueue(slots=1, max_waiting=100, per_player=3, clock=STILL), Searches()
    guests = [f"guest{n}" for n in range(30)]
    tasks = [asyncio.create_task(queue.run(g, s.call(f"{g}-{i}"))) for g in guests for i in range(3)]  # type: ignore[arg-type]
    await _settle()
    honest = asyncio.create_task(queue.run("honest", s.call("hint")))  # type: ignore[arg-type]
    await _settle()
    assert s.started == ["guest0-0"]
    s.finish("guest0-0")
    await _settle()
    assert s.started[-1] == "hint"
    s.finish("hint")
    assert await honest == "hint"
    for name in list(s.gates):
        s.finish(name)
    await asyncio.gather(*tasks)
    # The guests still take turns: each one's first search before anyone's second.
    assert sorted(name.rpartition("-")[0] for name in s.started[2:31]) == sorted(guests[1:])


async def test_a_call_whose_client_left_leaves_the_queue() -> None:
    queue, s = FairQueue(slots=1, max_waiting=300, clock=STILL), Searches()
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
    queue, s = FairQueue(slots=1, max_waiting=10, clock=STILL), Searches()
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
