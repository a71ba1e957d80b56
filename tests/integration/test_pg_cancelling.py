"""The one private attribute of asyncpg the driver's pool reads (``postgres_pool._busy``, from
``Protocol._is_cancelling``): a connection whose statement is being cancelled (its request was: a client that hung
up) must not be handed to the next unit of work, and no public call tells it apart from an idle one. This test fails
when an asyncpg release drops or renames the attribute (``_busy`` would then say False): see the pin of asyncpg in
pyproject.toml."""

from __future__ import annotations

import asyncio
import contextlib

import asyncpg

from golf.adapters.db.postgres_pool import _busy


async def test_a_connection_whose_statement_is_being_cancelled_is_busy(postgres_url: str) -> None:
    conn = await asyncpg.connect(postgres_url)
    try:
        assert not _busy(conn)
        sleeping = asyncio.create_task(conn.execute("SELECT pg_sleep(30)"))
        await asyncio.sleep(0.2)  # the statement is on the server
        sleeping.cancel()  # as a request's task is when its client hangs up
        with contextlib.suppress(asyncio.CancelledError):
            await sleeping
        assert not conn.is_closed() and not conn.is_in_transaction()  # what the public calls say
        assert _busy(conn)  # until asyncpg has seen the cancel through
        assert await conn.fetchval("SELECT 1") == 1  # the next statement waits for that first
        assert not _busy(conn)
    finally:
        await conn.close()
