"""The index of an export (``golf.app.exports.RecordIndex``): lead rows of ``records`` in (finished_at, id) order,
read a page at a time by keyset, each page in a short transaction of its own.

The rules of who may export what (``golf.app.exports``) are in the query, so a page holds only what the caller may
have and ``max`` counts exactly; the use case checks each record again when it loads it. A private table's match
needs the caller's own row of it (one is written for every person seated, also one who resigned); another player's
solitaire game is held back while its deal is in play (``golf.app.reveals``); a record with a player of a private
portal needs the caller to be of that portal or to have played in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from golf.adapters.db.repository import Database
from golf.adapters.db.rows import when
from golf.app.exports import GAME, MATCH, ExportQuery, IndexedRecord

_SELECT = """
SELECT r.id, r.kind, r.record_id, r.started_at, r.finished_at
FROM records r
LEFT JOIN card_golf_tables t ON r.kind = 'match' AND t.id = r.record_id
LEFT JOIN games g ON r.kind = 'game' AND g.id = r.record_id
WHERE r.lead
"""
_PLAYED_IN = "EXISTS (SELECT 1 FROM records p WHERE p.kind = r.kind AND p.record_id = r.record_id AND p.player_id = ?)"
"""The player ``?`` has a row of the record: they played the game, or held a seat of the match."""
_PRIVATE_TABLE = f"(r.kind <> 'match' OR t.listed OR {_PLAYED_IN})"
_SHOWN_GAME = (
    "(r.kind <> 'game' OR g.owner_id = ? OR EXISTS (SELECT 1 FROM deals d WHERE d.id = g.deal_id "
    "AND d.closed_at <= ? AND NOT EXISTS (SELECT 1 FROM games o WHERE o.deal_id = g.deal_id "
    "AND o.status = 'in_progress' AND NOT o.practice)))"
)
"""``golf.app.reveals.shown_to`` in SQL: the caller's own game, or one whose deal closed a grace before the export
began (``ExportQuery.shown_closed_before``) with no ranked game on it in progress (ix_games_deal_ranked_in_play)."""


def _private_portals(query: ExportQuery, sql: list[str], args: list[Any]) -> None:
    """Leave out records with a player of a private portal other than the caller's, unless the caller played."""
    hidden = [issuer for issuer in query.private_issuers if issuer != query.caller_issuer]
    if not hidden:
        return
    marks = ", ".join("?" * len(hidden))
    sql.append(
        f"AND (NOT EXISTS (SELECT 1 FROM records q WHERE q.kind = r.kind AND q.record_id = r.record_id "
        f"AND q.issuer IN ({marks})) OR {_PLAYED_IN})"
    )
    args += [*hidden, query.caller_id]


class SqlRecordIndex:
    """The export's index on ``database`` (a transaction per page)."""

    def __init__(self, database: Database) -> None:
        self.database = database

    async def page(self, query: ExportQuery, after: tuple[datetime, int] | None, limit: int) -> Sequence[IndexedRecord]:
        sql = [_SELECT]
        args: list[Any] = []
        if query.kind is None:
            sql.append(f"AND r.kind IN ('{GAME}', '{MATCH}')")
        else:
            sql.append("AND r.kind = ?")
            args.append(query.kind)
        if query.since is not None:
            sql.append("AND r.finished_at >= ?")
            args.append(query.since)
        if query.until is not None:
            sql.append("AND r.finished_at < ?")
            args.append(query.until)
        if query.preset is not None:
            sql.append("AND r.preset = ?")
            args.append(query.preset)
        if query.player_id is not None:
            sql.append(f"AND {_PLAYED_IN}")
            args.append(query.player_id)
        if after is not None:
            sql.append("AND (r.finished_at > ? OR (r.finished_at = ? AND r.id > ?))")
            args += [after[0], after[0], after[1]]
        sql.append(f"AND {_PRIVATE_TABLE} AND {_SHOWN_GAME}")
        args += [query.caller_id, query.caller_id, query.shown_closed_before]
        _private_portals(query, sql, args)
        sql.append("ORDER BY r.finished_at, r.id LIMIT ?")
        args.append(limit)
        async with self.database() as uow:
            rows = await uow.tx.fetchall("\n".join(sql), *args)
        return [
            IndexedRecord(
                int(row["id"]), row["kind"], row["record_id"], when(row["started_at"]), when(row["finished_at"])
            )
            for row in rows
        ]
