"""``GOLF_DB_GROUP_COMMIT_DELAY_MS``: the group commit's delay under load, in milliseconds, from 0 to 100."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from golf.adapters.db.postgres_driver import PostgresDriver
from golf.adapters.settings import Settings
from golf.bootstrap import build

URL = "postgresql://golf@127.0.0.1:5432/golf"
KEY = "k" * 40


def _driver(monkeypatch: pytest.MonkeyPatch, delay: str | None) -> PostgresDriver:
    monkeypatch.setenv("GOLF_DATABASE_URL", URL)
    monkeypatch.setenv("GOLF_TOKEN_KEY", KEY)
    if delay is not None:
        monkeypatch.setenv("GOLF_DB_GROUP_COMMIT_DELAY_MS", delay)
    driver = build(Settings()).database.driver
    assert isinstance(driver, PostgresDriver)
    return driver


def test_the_delay_is_twelve_milliseconds_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _driver(monkeypatch, None).group.delay == pytest.approx(0.012)
    assert _driver(monkeypatch, "0").group.delay == 0
    assert _driver(monkeypatch, "12.5").group.delay == pytest.approx(0.0125)


@pytest.mark.parametrize("value", ["-1", "101", "soon"])
def test_a_delay_out_of_range_stops_the_start(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("GOLF_DB_GROUP_COMMIT_DELAY_MS", value)
    with pytest.raises(ValidationError, match="db_group_commit_delay_ms"):
        Settings()
