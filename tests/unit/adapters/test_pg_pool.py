"""The PostgreSQL driver's connection pool: at most ``max_size`` open, a connection given back goes to the first
caller waiting, one in doubt (closed, in a transaction, being cancelled) is closed and not reused, and nothing leaks
when callers are cancelled or connecting fails."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from golf.adapters.db import postgres_pool
from golf.adapters.db.postgres_pool import PostgresPool


class _Protocol:
    def __init__(self) -> None:
        self.cancelling = False

    def _is_cancelling(self) -> bool:
        return self.cancelling


class _Conn:
    """What the pool reads of an asyncpg connection."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.closed = False
        self.terminated = False
        self.in_transaction = False
        self._protocol = _Protocol()

    def is_closed(self) -> bool:
        return self.closed

    def is_in_transaction(self) -> bool:
        return self.in_transaction

    def terminate(self) -> None:
        self.closed = self.terminated = True

    async def close(self, **_: Any) -> None:
        self.closed = True


class _Server:
    def __init__(self) -> None:
        self.made: list[_Conn] = []
        self.refuse = False

    async def connect(self) -> Any:
        await asyncio.sleep(0)
        if self.refuse:
            raise ConnectionRefusedError()
        conn = _Conn(len(self.made))
        self.made.append(conn)
        return conn


async def test_idle_connections_are_reused_and_the_size_is_capped() -> None:
    server = _Server()
    pool = PostgresPool(server.connect, 2)
    a = await pool.acquire()
    pool.release(a)
    assert await pool.acquire() is a
    b = await pool.acquire()
    third = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0.01)
    assert not third.done() and len(server.made) == 2  # waits: two are open
    pool.release(b)
    assert await third is b  # handed to the caller waiting
    pool.release(a)
    pool.release(b)
    await pool.close()
    assert a.closed and b.closed


@pytest.mark.parametrize("doubt", ["closed", "in_transaction", "cancelling"])
async def test_a_connection_in_doubt_is_closed_and_replaced(doubt: str) -> None:
    server = _Server()
    pool = PostgresPool(server.connect, 1)
    a = await pool.acquire()
    waiting = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0.01)
    if doubt == "closed":
        a.closed = True
    elif doubt == "in_transaction":
        a.in_transaction = True
    else:
        a._protocol.cancelling = True
    pool.release(a)
    b = await waiting
    assert b is not a and a.closed and len(server.made) == 2
    pool.release(b)
    assert await pool.acquire() is b
    await pool.close()


async def test_a_caller_cancelled_while_handed_a_connection_passes_it_on() -> None:
    server = _Server()
    pool = PostgresPool(server.connect, 1)
    a = await pool.acquire()
    first = asyncio.ensure_future(pool.acquire())
    second = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0.01)
    pool.release(a)  # handed to ``first``...
    first.cancel()  # ... which is cancelled before it runs
    assert await second is a
    with pytest.raises(asyncio.CancelledError):
        await first
    pool.release(a)
    assert await pool.acquire() is a and len(server.made) == 1
    await pool.close()


async def test_cancelled_waiters_are_skipped() -> None:
    server = _Server()
    pool = PostgresPool(server.connect, 1)
    a = await pool.acquire()
    gone = asyncio.ensure_future(pool.acquire())
    await asyncio.sleep(0.01)
    gone.cancel()
    await asyncio.sleep(0)
    pool.release(a)
    assert await pool.acquire() is a
    await pool.close()


async def test_a_failed_connect_frees_its_place() -> None:
    server = _Server()
    pool = PostgresPool(server.connect, 1)
    server.refuse = True
    for _ in range(3):
        with pytest.raises(ConnectionRefusedError):
            await pool.acquire()
    server.refuse = False
    a = await pool.acquire()
    assert a is server.made[0]
    pool.release(a)
    await pool.close()


async def test_connections_idle_too_long_are_closed_but_one() -> None:
    server = _Server()
    pool = PostgresPool(server.connect, 3)
    conns = [await pool.acquire() for _ in range(3)]
    for conn in conns:
        pool.release(conn)
    pool._idle = [(conn, since - postgres_pool.IDLE_LIFETIME - 1) for conn, since in pool._idle]  # long ago
    pool.release(await pool.acquire())  # the oldest idle one goes
    await asyncio.sleep(0.01)
    assert conns[0].closed and not conns[1].closed and not conns[2].closed
    assert len(server.made) == 3
    await pool.close()
    assert all(c.closed for c in conns)


async def test_closed_pool_refuses_and_closes_what_comes_back() -> None:
    server = _Server()
    pool = PostgresPool(server.connect, 2)
    a = await pool.acquire()
    await pool.close()
    with pytest.raises(Exception, match="closed"):
        await pool.acquire()
    pool.release(a)
    assert a.closed
