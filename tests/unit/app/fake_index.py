"""An in-memory record index for the exports (golf.app.exports), over the fake store."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from golf.app.exports import (
    ExportQuery,
    IndexedRecord,
)
from golf.app.history import RecordKind
from tests.unit.app.fakes import FakeStore


class ListIndex:
    """The lead rows the fake store holds, as the SQL index orders them (without its access rules: the use case's
    second check is what these tests look at); each page it gave is kept."""

    def __init__(self, store: FakeStore, extra: Sequence[IndexedRecord] = ()) -> None:
        self.store = store
        self.extra = list(extra)
        self.pages: list[tuple[tuple[datetime, int] | None, int, int]] = []

    def rows(self) -> list[IndexedRecord]:
        found = [
            IndexedRecord(r.id, r.kind.value, r.record_id, r.started_at, r.finished_at)
            for r in self.store.tables.records
            if r.lead and r.kind in (RecordKind.GAME, RecordKind.MATCH)
        ]
        return sorted(found + self.extra, key=lambda r: (r.finished_at, r.id))

    async def page(self, query: ExportQuery, after: tuple[datetime, int] | None, limit: int) -> Sequence[IndexedRecord]:
        rows = [r for r in self.rows() if query.kind in (None, r.kind)]
        if after is not None:
            rows = [r for r in rows if (r.finished_at, r.id) > after]
        self.pages.append((after, limit, len(rows[:limit])))
        return rows[:limit]
