"""Readiness follows the database and the schema; logs are JSON lines carrying the request id; metrics count."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest

from golf.adapters.db.migrate import upgrade
from golf.adapters.db.repository import Database
from golf.adapters.health import Readiness
from golf.adapters.logs import JsonFormatter, accept_request_id, request_id
from golf.adapters.metrics import Metrics, TimedSolver
from golf.api.rpc import Rpc
from golf.v1 import solitaire_service_pb2 as pb


async def test_ready_only_at_head_or_newer(database_url: str) -> None:
    db = Database(database_url)
    try:
        readiness = Readiness(db, None, ())
        verdict = await readiness.check()
        assert not verdict.ready and "golf migrate" in verdict.checks["migrations"]
        (first, *_) = sorted(readiness.known)
        upgrade(database_url, first)
        behind = await readiness.check()
        assert not behind.ready and behind.checks["database"] == "ok"
        upgrade(database_url)
        assert (await readiness.check()).ready
        # A newer release's pre-upgrade Job migrated ahead of this code: still ready (migrations are compatible).
        async with db() as uow:
            await uow.tx.execute("UPDATE alembic_version SET version_num = 'from_the_future'")
            await uow.commit()
        assert (await readiness.check()).ready
        await readiness.stop()
        assert not (await readiness.check()).ready
    finally:
        await db.dispose()


async def test_not_ready_when_the_database_does_not_answer(tmp_path: Any) -> None:
    db = Database(f"sqlite:///{tmp_path / 'golf.db'}")
    upgrade(f"sqlite:///{tmp_path / 'golf.db'}")
    readiness = Readiness(db, None, ())
    await db.dispose()  # a closed connection stands for a database that is gone
    verdict = await readiness.check()
    assert not verdict.ready and verdict.checks["database"] != "ok"


def test_json_log_lines_carry_the_request_id() -> None:
    record = logging.LogRecord("golf.x", logging.WARNING, __file__, 1, "moved %s", ("3C",), None)
    record.game_id = "g1"
    token = request_id.set("rid-7")
    try:
        line = json.loads(JsonFormatter().format(record))
    finally:
        request_id.reset(token)
    assert line["message"] == "moved 3C" and line["level"] == "warning" and line["logger"] == "golf.x"
    assert line["request_id"] == "rid-7" and line["game_id"] == "g1"


@pytest.mark.parametrize(("given", "kept"), [("abc-123", True), ("", False), (None, False), ("x" * 200, False)])
def test_request_ids_from_clients(given: str | None, kept: bool) -> None:
    rid = accept_request_id(given)
    assert (rid == given) is kept and rid
    assert accept_request_id(None) != accept_request_id(None)


async def test_moves_counted_once_per_stored_move() -> None:
    metrics = Metrics()

    class Reply:
        def __init__(self, replayed: bool, moves: int = 0) -> None:
            self.replayed = replayed
            self.moves = [object()] * moves

    replies = iter([Reply(False), Reply(True), Reply(False, 3), Reply(True, 3)])

    async def handler(_req: Any, _ctx: Any) -> Any:
        return next(replies)

    service = "golf.v1.SolitaireService"
    rpcs = [
        Rpc(service, n, getattr(pb, f"{n}Request"), getattr(pb, f"{n}Response"), handler)
        for n in ("PlayMove", "AutoPlay")
    ]
    play, auto = metrics.count_moves(rpcs)
    for call in (play, play, auto, auto):
        await call.handler(None, None)
    assert metrics.registry.get_sample_value("golf_moves_played_total") == 4


async def test_solver_durations_count_completed_calls_only() -> None:
    """A solver call cancelled (its client went away) or refused (the queue full) is no solver duration."""
    metrics = Metrics()

    class Inner:
        def __init__(self) -> None:
            self.outcomes: list[Any] = []

        async def solve(self, state: Any, budget: Any, owner: Any = None) -> Any:
            outcome = self.outcomes.pop(0)
            if isinstance(outcome, BaseException):
                raise outcome
            return outcome

    inner = Inner()
    timed = TimedSolver(inner, metrics)  # type: ignore[arg-type]
    inner.outcomes = ["answer", asyncio.CancelledError(), RuntimeError("queue full"), "answer"]
    assert await timed.solve(None, None) == "answer"  # type: ignore[arg-type]
    with pytest.raises(asyncio.CancelledError):
        await timed.solve(None, None)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError):
        await timed.solve(None, None)  # type: ignore[arg-type]
    assert await timed.solve(None, None) == "answer"  # type: ignore[arg-type]
    count = metrics.registry.get_sample_value("golf_solver_duration_seconds_count", {"kind": "solve"})
    assert count == 2


async def test_group_commit_counts_are_read_on_scrape() -> None:
    metrics = Metrics()
    counts = [(0, 0)]
    metrics.count_group_commit_with(lambda: counts[0])
    counts[0] = (3, 7)
    page = (await metrics.exposition()).decode()
    assert "golf_db_group_commit_statements_total 3.0" in page
    assert "golf_db_group_commit_entries_total 7.0" in page
    assert "# TYPE golf_db_group_commit_entries_total counter" in page
