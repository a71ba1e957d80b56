"""``golf migrate`` waits a bounded, configurable time (``GOLF_MIGRATE_WAIT_SECONDS``) for a database that cannot be
reached yet, so ``make run`` and a Kubernetes pod outlive a database that starts after them (issue 26, section 2).
The waits run on a fake clock: the tests take no longer on a slow machine."""

from __future__ import annotations

import argparse
import functools
import logging
import secrets
from collections.abc import Iterator

import psycopg
import pytest

from golf.adapters.db import migrate as migrate_module
from golf.adapters.db.migrate import DatabaseNotReached, at_head, wait_for_database
from golf.commands import migrate as migrate_command
from tests.conftest import ADMIN_URL, _need_postgres
from tests.e2e.support import free_ports
from tests.pg_faults import admin


class FakeClock:
    """``time.monotonic`` and ``time.sleep`` for ``wait_for_database``: a sleep moves the clock on, and may do
    what the test needs done meanwhile (the database appears)."""

    def __init__(self, on_sleep: object = None) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []
        self.on_sleep = on_sleep

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if callable(self.on_sleep):
            self.on_sleep()


def _refused_url() -> str:
    (port,) = free_ports(1)  # nothing listens there
    return f"postgresql://golf@127.0.0.1:{port}/golf"


def test_a_database_that_never_comes_is_given_up_after_the_wait(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "golf.migrate")
    fake = FakeClock()
    with pytest.raises(DatabaseNotReached) as info:
        wait_for_database(_refused_url(), 20.0, fake.sleep, fake.clock)
    assert "in 20 s" in str(info.value) and "refused" in str(info.value).lower(), info.value
    assert fake.now == pytest.approx(20.0) and fake.sleeps[:4] == [0.25, 0.5, 1.0, 2.0] and max(fake.sleeps) == 5.0
    lines = [r for r in caplog.records if "cannot be reached yet" in r.getMessage()]
    assert len(lines) == 1, lines  # one line, not one per try


@pytest.fixture
def later_database() -> Iterator[str]:
    """The URL of a database of the test's own that does not exist yet (the test creates it); dropped afterwards."""
    _need_postgres()
    name = f"golf_test_{secrets.token_hex(6)}"
    try:
        yield f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'.encode())


def test_a_database_created_after_migrate_started_is_waited_for_and_migrated(
    later_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database missing (SQLSTATE 3D000) when ``golf migrate`` starts and made while it waits: it migrates."""
    name = later_database.rsplit("/", 1)[1]

    def create_on_second_pause() -> None:
        if len(fake.sleeps) == 2:
            admin(f'CREATE DATABASE "{name}"')

    fake = FakeClock(on_sleep=create_on_second_pause)
    waits = functools.partial(migrate_module.wait_for_database, sleep=fake.sleep, clock=fake.clock)
    monkeypatch.setattr(migrate_module, "wait_for_database", waits)
    monkeypatch.setenv("GOLF_DATABASE_URL", later_database)
    monkeypatch.setenv("GOLF_MIGRATE_WAIT_SECONDS", "30")
    assert migrate_command.run(argparse.Namespace(revision="head")) == 0
    assert len(fake.sleeps) == 2 and at_head(later_database)


def test_migrate_gives_up_with_its_reason_and_no_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GOLF_DATABASE_URL", _refused_url())
    monkeypatch.setenv("GOLF_MIGRATE_WAIT_SECONDS", "0")  # tries once
    assert migrate_command.run(argparse.Namespace(revision="head")) == 1
    err = capsys.readouterr().err
    assert err.startswith("golf migrate: the database could not be reached in 0 s:") and "refused" in err.lower(), err
    assert "Traceback" not in err
