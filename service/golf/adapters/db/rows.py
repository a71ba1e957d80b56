"""Reading and writing row values the same way in every store: times, placeholders, the solver's verdict, keyset
paging, and the names of the unique constraints a row broke."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from golf.adapters.db.drivers import Row, UniqueViolation
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


def qualified(columns: str, alias: str) -> str:
    """``columns`` qualified by a table alias, for queries that join."""
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


def keyset_after(alias: str, after: tuple[datetime, str] | None, sql: list[str], args: list[Any]) -> None:
    """Keyset paging: the rows strictly after the last one seen, in (created_at, id) descending order."""
    if after is not None:
        # The plain bound lets the (owner_id, created_at, id) index start the scan at the keyset.
        when, row_id = after
        sql.append(
            f"{alias}.created_at <= ? AND ({alias}.created_at < ? OR ({alias}.created_at = ? AND {alias}.id < ?))"
        )
        args += [when, when, when, row_id]


def created_between(
    alias: str, after: datetime | None, before: datetime | None, sql: list[str], args: list[Any]
) -> None:
    """The rows created at or after ``after`` and before ``before`` (each when given)."""
    if after is not None:
        sql.append(f"{alias}.created_at >= ?")
        args.append(after)
    if before is not None:
        sql.append(f"{alias}.created_at < ?")
        args.append(before)


_SQLITE_PREFIX = "UNIQUE constraint failed: "


def unique_constraint(err: UniqueViolation, sqlite_names: Mapping[str, str]) -> str:
    """The name of the constraint ``err`` broke, as PostgreSQL reports it, on either database.

    SQLite names the columns of the unique constraint or index a row broke, not the constraint: ``sqlite_names``
    maps those columns to the constraint's name, so callers can tell the constraints apart on both databases."""
    text = err.constraint
    if text.startswith(_SQLITE_PREFIX):
        return sqlite_names.get(text[len(_SQLITE_PREFIX) :], text)
    return text
