"""Every failure to reach or keep a PostgreSQL connection is ``StorageUnavailable`` (UNAVAILABLE / 503 with a retry
delay), logged once per outage, and the driver heals by itself (issue 26, section 2).

Faults come from a proxy of the test's own between the driver and PostgreSQL (``tests.pg_faults.FaultProxy``:
refused, cut, stalled, ended while idle) and from PostgreSQL itself, on databases (and a role) the tests create:
``ALLOW_CONNECTIONS false``, ``pg_terminate_backend``, ``DROP DATABASE``, a connection limit reached.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Iterator

import pytest
from sqlalchemy.engine import make_url

from golf.adapters.db import postgres_driver as pg_driver
from golf.adapters.db.group_commit import Grouped
from golf.adapters.db.migrate import upgrade
from golf.adapters.db.repository import Database
from golf.adapters.health import Readiness
from golf.app.errors import StorageUnavailable
from tests.conftest import ADMIN_URL
from tests.pg_faults import FaultProxy, admin, database_of, terminate_backends

GUARD = 20.0
"""A fault must be answered long before this (seconds): a wait that reaches it is the bug (a request hanging)."""


def _lines(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "golf.db" and text in r.getMessage()]


async def _read(db: Database) -> int:
    """A short unit of work (a read in a transaction), as a request does."""
    async with db() as uow:
        row = await asyncio.wait_for(uow.tx.fetchone("SELECT count(*) AS n FROM games"), GUARD)
    assert row is not None
    return int(row["n"])


async def _atomic(db: Database) -> int:
    """A unit of work of one statement outside a transaction (as a move's reads are)."""
    async with db() as uow:
        row = await asyncio.wait_for(uow.tx.fetchone_atomic("SELECT count(*) AS n FROM games"), GUARD)
    assert row is not None
    return int(row["n"])


async def _refused(db: Database, times: int = 3) -> str:
    """Every kind of unit of work is refused with StorageUnavailable; the last reason."""
    reason = ""
    for _ in range(times):
        for work in (_read, _atomic):
            with pytest.raises(StorageUnavailable) as info:
                await work(db)
            reason = info.value.reason
    return reason


async def _heals(db: Database) -> None:
    """The same Database answers again, without being made anew (within the retry delay of a refused connect)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD
    while True:
        try:
            await _read(db)
            await _atomic(db)
            return
        except StorageUnavailable:
            assert loop.time() < deadline, "still refused after the fault ended"
            await asyncio.sleep(0.1)


@pytest.fixture
def migrated(postgres_url: str) -> str:
    upgrade(postgres_url)
    return postgres_url


@pytest.fixture
async def proxied(migrated: str) -> AsyncIterator[tuple[FaultProxy, Database]]:
    url = make_url(migrated)
    proxy = await FaultProxy((url.host or "127.0.0.1", url.port or 5432)).start()
    db = Database(url.set(port=proxy.port).render_as_string(hide_password=False), pool_size=4)
    try:
        yield proxy, db
    finally:
        await db.dispose()
        await proxy.close()


# -- the proxy's faults -------------------------------------------------------------------------------------------
async def test_refused_connections_are_unavailable_logged_once_and_heal(
    proxied: tuple[FaultProxy, Database], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "golf.db")
    proxy, db = proxied
    assert await _read(db) == 0
    await proxy.refuse()
    reason = await _refused(db)
    assert reason in ("connection refused", "connection lost", "connection closed"), reason
    await proxy.heal()
    await _heals(db)
    assert len(_lines(caplog, "database unreachable")) == 1
    assert len(_lines(caplog, "database reachable again")) == 1


async def test_connections_cut_mid_transaction_are_unavailable_and_the_next_work_reconnects(
    proxied: tuple[FaultProxy, Database],
) -> None:
    proxy, db = proxied
    async with db() as uow:
        await uow.tx.fetchone("SELECT count(*) FROM games")  # a transaction begun
        proxy.cut()
        with pytest.raises(StorageUnavailable):
            await asyncio.wait_for(uow.tx.fetchone("SELECT count(*) FROM games"), GUARD)
    assert await _read(db) == 0
    assert await _atomic(db) == 0


async def test_a_stalled_database_is_unavailable_in_bounded_time(
    proxied: tuple[FaultProxy, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No answer at all (a stalled network or server): past the answer timeout the request is refused, not left to
    hang until the client gives up. The timeouts are shortened for the test; GUARD is far beyond them."""
    monkeypatch.setattr(pg_driver, "ANSWER_TIMEOUT", 0.5)
    monkeypatch.setattr(pg_driver, "CONNECT_TIMEOUT", 0.5)
    proxy, db = proxied
    assert await _read(db) == 0  # a connection open, with the short timeout
    proxy.stall()
    with pytest.raises(StorageUnavailable) as info:
        await _read(db)
    assert info.value.reason.startswith("no answer in time"), info.value.reason
    await asyncio.sleep(pg_driver.RETRY_CONNECT_AFTER)
    with pytest.raises(StorageUnavailable):
        await _atomic(db)  # a new connection that gets no answer either
    await proxy.heal()
    await _heals(db)


async def test_connections_the_server_ended_while_idle_are_passed_over(
    proxied: tuple[FaultProxy, Database],
) -> None:
    """A backend terminated while its connection sat in the pool: its FATAL message came and its socket has not
    closed yet. asyncpg refuses to send on it (InternalClientError, a 500 before); the statement goes to another
    connection, and nothing is refused."""
    proxy, db = proxied
    async with db() as one, db() as two:  # two connections in the pool
        await one.tx.fetchone("SELECT 1")
        await two.tx.fetchone("SELECT 1")
    proxy.end_idle()
    await asyncio.sleep(0.05)  # the FATAL messages are read
    for _ in range(3):
        assert await _read(db) == 0
        assert await _atomic(db) == 0


async def test_a_group_commit_connection_ended_while_idle_is_replaced(
    proxied: tuple[FaultProxy, Database],
) -> None:
    proxy, db = proxied
    driver = db.driver
    assert isinstance(driver, pg_driver.PostgresDriver)
    one = Grouped("SELECT ?::int AS v", "SELECT d.entry, d.v FROM unnest($1::int[]) WITH ORDINALITY AS d(v, entry)")
    assert (await driver.group.fetchone(one, (1,)))["v"] == 1
    proxy.end_idle()
    await asyncio.sleep(0.05)
    assert (await asyncio.wait_for(driver.group.fetchone(one, (2,)), GUARD))["v"] == 2


# -- PostgreSQL's own faults, on the test's own database ------------------------------------------------------------
async def test_a_database_not_accepting_connections_is_unavailable_and_heals(
    migrated: str, caplog: pytest.LogCaptureFixture
) -> None:
    """SQLSTATE 55000 (``ALTER DATABASE ... ALLOW_CONNECTIONS false``) with the open connections ended: was a 500
    and a traceback per request."""
    caplog.set_level(logging.INFO, "golf.db")
    name = database_of(migrated)
    db = Database(migrated, pool_size=4)
    try:
        assert await _read(db) == 0
        admin(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            terminate_backends(name)
            reason = await _refused(db)
            assert "not currently accepting connections" in reason, reason
            verdict = await Readiness(db, None, ()).check()
            assert not verdict.ready and "not currently accepting connections" in verdict.checks["database"]
            grouped = Grouped("SELECT 1 AS v", "SELECT 1 AS entry")
            with pytest.raises(StorageUnavailable):
                await db.driver.group.fetchone(grouped, ())  # type: ignore[attr-defined]
        finally:
            admin(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
        await _heals(db)
    finally:
        await db.dispose()
    assert len(_lines(caplog, "database unreachable")) == 1  # the first failure's: a backend ended, or a refusal
    assert len(_lines(caplog, "database reachable again")) == 1


async def test_backends_terminated_mid_transaction_and_while_idle(migrated: str) -> None:
    name = database_of(migrated)
    db = Database(migrated, pool_size=4)
    try:
        assert await _read(db) == 0
        async with db() as uow:
            await uow.tx.fetchone("SELECT count(*) FROM games")
            terminate_backends(name)
            with pytest.raises(StorageUnavailable):
                await asyncio.wait_for(uow.tx.fetchone("SELECT count(*) FROM games"), GUARD)
        for _ in range(5):  # killed again and again between units of work: each one still answers or is refused
            terminate_backends(name)
            try:
                await _read(db)
                await _atomic(db)
            except StorageUnavailable:
                pass
        await _heals(db)
    finally:
        await db.dispose()


async def test_a_dropped_database_is_unavailable_until_it_is_back(migrated: str) -> None:
    """The test's own database dropped (SQLSTATE 3D000 on connecting: a 500 before), then made and migrated again."""
    name = database_of(migrated)
    db = Database(migrated, pool_size=4)
    try:
        assert await _read(db) == 0
        admin(f'DROP DATABASE "{name}" WITH (FORCE)')
        reason = await _refused(db)
        assert "does not exist" in reason, reason
        verdict = await Readiness(db, None, ()).check()
        assert not verdict.ready and f'database "{name}" does not exist' in verdict.checks["database"], verdict
        admin(f'CREATE DATABASE "{name}"')
        upgrade(migrated)
        await _heals(db)
    finally:
        await db.dispose()


@pytest.fixture
def limited_role() -> Iterator[str]:
    """A database owned by a role of the test's own (limits do not hold for superusers), both dropped afterwards;
    its URL as that role."""
    name = f"golf_test_{secrets.token_hex(6)}"
    admin(f'CREATE ROLE "{name}" LOGIN')
    try:
        admin(f'CREATE DATABASE "{name}" OWNER "{name}"')
        try:
            url = make_url(f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}").set(username=name)
            yield url.render_as_string(hide_password=False)
        finally:
            admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin(f'DROP ROLE IF EXISTS "{name}"')


async def test_a_connection_limit_reached_is_unavailable_logged_once(
    limited_role: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Past the role's connection limit new connections are refused (53300) while the open one still works: the
    requests that need another are refused, and the outage is one line however they interleave."""
    caplog.set_level(logging.INFO, "golf.db")
    upgrade(limited_role)
    name = database_of(limited_role)
    db = Database(limited_role, pool_size=4)
    try:
        assert await _read(db) == 0
        admin(f'ALTER ROLE "{name}" CONNECTION LIMIT 1')
        for _ in range(3):
            async with db() as holding:
                await holding.tx.fetchone("SELECT 1")  # the one connection allowed, held
                await asyncio.sleep(pg_driver.RETRY_CONNECT_AFTER)  # a new connection is tried, not refused at once
                with pytest.raises(StorageUnavailable) as info:
                    await _read(db)
                assert "too many connections" in info.value.reason, info.value.reason
            assert await _read(db) == 0  # on the connection given back
        assert len(_lines(caplog, "database unreachable")) == 1
        admin(f'ALTER ROLE "{name}" CONNECTION LIMIT 0')
        terminate_backends(name)
        reason = await _refused(db)
        assert "too many connections" in reason, reason
        admin(f'ALTER ROLE "{name}" CONNECTION LIMIT -1')
        await _heals(db)
    finally:
        await db.dispose()
