"""SQLite locked by another process past the busy timeout: CONFLICT (retry), not a 500."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from golf.adapters.db.drivers import SqliteDriver
from golf.adapters.db.migrate import upgrade
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
