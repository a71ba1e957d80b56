"""The solver's worker processes: answers match the engine's, and a killed server leaves none behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from golf.adapters.solver_pool import ProcessPoolSolver
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State


async def test_answers_are_the_engines() -> None:
    pool = ProcessPoolSolver(1)
    try:
        state = State.initial(PRESETS["standard"], Layout.from_pysol(2))
        result = await pool.solve(state, None)
        assert result == solve(state)
        verdict = await pool.verdict(state, None)
        assert verdict.winnable and verdict.solution == tuple(m.code for m in solve(state, fewest_cards=False).line)
    finally:
        pool.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose (its parent, here init, reaps it).
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().split(") ")[1][0] != "Z"


def test_workers_end_when_the_server_is_killed() -> None:
    script = textwrap.dedent(
        """
        import asyncio, os, sys
        from golf.adapters.solver_pool import ProcessPoolSolver
        from golf.engine.solitaire.rules import PRESETS
        from golf.engine.solitaire.state import Layout, State

        async def main():
            pool = ProcessPoolSolver(1)
            await pool.solve(State.initial(PRESETS["wrap"], Layout.from_pysol(1)), 1000)
            print(" ".join(str(p) for p in pool._pool._processes), flush=True)
            await asyncio.sleep(60)

        asyncio.run(main())
        """
    )
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        workers = [int(p) for p in server.stdout.readline().split()]
        assert workers and all(_alive(p) for p in workers)
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait()
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in workers), "solver workers outlived the server"
