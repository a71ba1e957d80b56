"""SQLite locked by another process past the busy timeout: CONFLICT (retry), not a 500; and the wait for the lock
leaves the event loop free (both transports serve on meanwhile)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from golf.adapters.db.migrate import upgrade
from golf.adapters.db.sqlite_driver import SqliteDriver
from golf.api.errors import to_api_error
from golf.app.errors import Conflict


async def test_a_write_lock_held_elsewhere_is_a_conflict_to_retry(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    upgrade(url)
    driver = SqliteDriver(url, busy_timeout_ms=50)
    other = sqlite3.connect(tmp_path / "golf.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process (a shell, a migration) holds the write lock
        with pytest.raises(Conflict) as busy:
            await driver.begin()  # SQLite takes the write lock when the transaction begins
        refusal = to_api_error(busy.value)
        assert refusal.http_status == 409 and "retry" in refusal.body.message
        other.execute("ROLLBACK")
        # The lock gone, the same work goes through.
        tx, token = await driver.begin()
        await tx.execute("DELETE FROM daily_deals WHERE day = 'd'")
        await tx.commit()
        await driver.release(token)
    finally:
        other.close()
        await driver.close()


TICKS = 20
"""Turns of a 10 ms sleep the event loop must give another task while BEGIN waits for the write lock (the busy
timeout is 10 s: a loop frozen by the wait gives none before it ends)."""


async def test_the_wait_for_the_write_lock_leaves_the_event_loop_free(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    upgrade(url)
    driver = SqliteDriver(url, busy_timeout_ms=10_000)
    other = sqlite3.connect(tmp_path / "golf.db", isolation_level=None)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        begin = asyncio.create_task(driver.begin())
        while ticks < TICKS:  # the loop runs other work while BEGIN waits
            await asyncio.sleep(0.01)
            assert not begin.done(), "BEGIN ended while the lock was held: it waited on the event loop"
        other.execute("ROLLBACK")
        tx, token = await asyncio.wait_for(begin, 10)  # the lock gone, BEGIN goes through
        await tx.execute("DELETE FROM daily_deals WHERE day = 'd'")
        await tx.commit()
        await driver.release(token)
    finally:
        ticker.cancel()
        other.close()
        await driver.close()


async def test_a_request_cancelled_while_waiting_for_the_lock_leaves_the_connection_clean(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    upgrade(url)
    driver = SqliteDriver(url, busy_timeout_ms=10_000)
    other = sqlite3.connect(tmp_path / "golf.db", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        begin = asyncio.create_task(driver.begin())
        await asyncio.sleep(0.1)
        begin.cancel()  # its client hung up while it waited
        with pytest.raises(asyncio.CancelledError):
            await begin
        other.execute("ROLLBACK")
        # The next unit of work gets the connection once the abandoned BEGIN has ended, with no transaction left open.
        for _ in range(2):
            tx, token = await asyncio.wait_for(driver.begin(), 10)
            await tx.execute("DELETE FROM daily_deals WHERE day = 'd'")
            await tx.commit()
            await driver.release(token)
    finally:
        other.close()
        await driver.close()
