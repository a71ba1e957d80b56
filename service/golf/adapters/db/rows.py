"""Reading and writing row values the same way in every store: times, placeholders, the solver's verdict."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from golf.adapters.db.drivers import Row
from golf.app.records import Verdict


def when(value: Any) -> datetime:
    """A stored time, aware: asyncpg gives aware datetimes; SQLite gives the naive UTC text the driver stored."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def maybe_when(value: Any) -> datetime | None:
    """A nullable stored time."""
    return None if value is None else when(value)


def marks(columns: str) -> str:
    """One ``?`` placeholder per column of a comma-separated list."""
    return ", ".join("?" * len(columns.split(",")))


def verdict(row: Row, with_line: bool = True) -> Verdict | None:
    """The solver's verdict of a ``deals`` row (columns ``winnable``, ``fewest_left``, ``difficulty``,
    ``difficulty_score`` and, ``with_line``, ``solution``); None when the solver has not decided."""
    winnable = row["winnable"]
    if winnable is None and row["fewest_left"] is None:
        return None
    line = tuple(row["solution"].split(",")) if with_line and row["solution"] else ()
    return Verdict(
        None if winnable is None else bool(winnable),
        line,
        row["fewest_left"],
        row["difficulty"],
        row["difficulty_score"],
    )
