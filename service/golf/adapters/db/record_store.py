"""The records of what was played (``golf.app.recording`` writes them, ``golf.app.record_queries`` reads them):
history rows, leaderboard entries and deal statistics, in one unit of work's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from golf.adapters.db.drivers import Row, Transaction
from golf.app.boards import BoardEntry
from golf.app.history import BoardScope, DealStats, HistoryFilter, PlayedRecord, RecordKind, Result

_RECORD_COLUMNS = (
    "player_id, issuer, kind, record_id, lead, preset, result, score, holes, moves, hints, undos, duration_ms, "
    "started_at, finished_at, rated, par, place, players, deal_id"
)
_ENTRY_COLUMNS = (
    "board, player_id, issuer, k1, k2, k3, reached_at, qualifier, record_id, score, duration_ms, assists, "
    "matches, wins, holes, points, mu, sigma"
)
_ENTRY_KEY = "(k1, k2, k3, reached_at, player_id)"
_STATS_COLUMNS = "deal_id, preset, plays, wins, score_sum, duration_ms_sum"
_UPDATED = ", ".join(f"{c} = excluded.{c}" for c in _ENTRY_COLUMNS.split(", ")[2:])


def _marks(columns: str) -> str:
    return ", ".join("?" * len(columns.split(",")))


def _when(value: Any) -> datetime:
    # asyncpg gives aware datetimes; SQLite gives the naive UTC text we stored.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _record(row: Row) -> PlayedRecord:
    return PlayedRecord(
        row["player_id"],
        row["issuer"],
        RecordKind(row["kind"]),
        row["record_id"],
        bool(row["lead"]),
        row["preset"],
        Result(row["result"]),
        row["score"],
        row["holes"],
        row["moves"],
        row["hints"],
        row["undos"],
        row["duration_ms"],
        _when(row["started_at"]),
        _when(row["finished_at"]),
        bool(row["rated"]),
        row["par"],
        row["place"],
        row["players"],
        row["deal_id"],
        row["id"],
    )


def _entry(row: Row) -> BoardEntry:
    return BoardEntry(
        row["board"],
        row["player_id"],
        row["issuer"],
        row["k1"],
        row["k2"],
        row["k3"],
        _when(row["reached_at"]),
        row["qualifier"],
        row["record_id"],
        row["score"],
        row["duration_ms"],
        row["assists"],
        row["matches"],
        row["wins"],
        row["holes"],
        row["points"],
        row["mu"],
        row["sigma"],
    )


def _stats(row: Row) -> DealStats:
    return DealStats(row["deal_id"], row["preset"], row["plays"], row["wins"], row["score_sum"], row["duration_ms_sum"])


def _scope(scope: BoardScope, min_qualifier: int, sql: list[str], args: list[Any]) -> None:
    if scope.only is not None:
        sql.append("issuer = ?")
        args.append(scope.only)
    elif scope.hidden:
        sql.append(f"issuer NOT IN ({', '.join('?' * len(scope.hidden))})")
        args += scope.hidden
    if min_qualifier > 0:
        sql.append("qualifier >= ?")
        args.append(min_qualifier)


class SqlRecordStore:
    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    # -- writes ---------------------------------------------------------------------------------------------
    async def lock_players(self, player_ids: Sequence[str]) -> dict[str, str]:
        """Each player's issuer. On PostgreSQL the players' rows stay locked until the transaction ends, so one
        player's records are numbered in the order they commit (SQLite has one writer at a time anyway)."""
        if not player_ids:
            return {}
        lock = " ORDER BY id FOR UPDATE" if self.tx.dialect == "postgresql" else ""
        rows = await self.tx.fetchall(
            f"SELECT id, issuer FROM players WHERE id IN ({', '.join('?' * len(player_ids))}){lock}", *player_ids
        )
        return {row["id"]: row["issuer"] for row in rows}

    async def add_records(self, records: Sequence[PlayedRecord]) -> None:
        for r in records:
            await self.tx.execute(
                f"INSERT INTO records ({_RECORD_COLUMNS}) VALUES ({_marks(_RECORD_COLUMNS)})",
                r.player_id, r.issuer, r.kind.value, r.record_id, r.lead, r.preset, r.result.value, r.score,
                r.holes, r.moves, r.hints, r.undos, r.duration_ms, r.started_at, r.finished_at, r.rated, r.par,
                r.place, r.players, r.deal_id,
            )  # fmt: skip

    async def get_board_entries(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], BoardEntry]:
        if not keys:
            return {}
        where = " OR ".join("(board = ? AND player_id = ?)" for _ in keys)
        rows = await self.tx.fetchall(
            f"SELECT {_ENTRY_COLUMNS} FROM board_entries WHERE {where}", *(v for key in keys for v in key)
        )
        return {(row["board"], row["player_id"]): _entry(row) for row in rows}

    async def put_board_entries(self, entries: Sequence[BoardEntry]) -> None:
        for e in entries:
            await self.tx.execute(
                f"INSERT INTO board_entries ({_ENTRY_COLUMNS}) VALUES ({_marks(_ENTRY_COLUMNS)}) "
                f"ON CONFLICT (board, player_id) DO UPDATE SET {_UPDATED}",
                e.board, e.player_id, e.issuer, e.k1, e.k2, e.k3, e.reached_at, e.qualifier, e.record_id, e.score,
                e.duration_ms, e.assists, e.matches, e.wins, e.holes, e.points, e.mu, e.sigma,
            )  # fmt: skip

    async def add_deal_result(self, deal_id: str, preset: str, won: bool, score: int, duration: int) -> None:
        await self.tx.execute(
            "INSERT INTO deal_stats (deal_id, preset, plays, wins, score_sum, duration_ms_sum, win_ppm) "
            "VALUES (?, ?, 1, ?, ?, ?, ?) ON CONFLICT (deal_id) DO UPDATE SET "
            "plays = deal_stats.plays + 1, wins = deal_stats.wins + excluded.wins, "
            "score_sum = deal_stats.score_sum + excluded.score_sum, "
            "duration_ms_sum = deal_stats.duration_ms_sum + excluded.duration_ms_sum, "
            "win_ppm = ((deal_stats.wins + excluded.wins) * 1000000) / (deal_stats.plays + 1)",
            deal_id,
            preset,
            int(won),
            score,
            duration,
            1_000_000 if won else 0,
        )

    # -- reads ----------------------------------------------------------------------------------------------
    async def history(
        self, player_id: str, query: HistoryFilter, before_id: int | None, limit: int
    ) -> list[PlayedRecord]:
        """A player's records, newest first (by ``id``: commit order per player), below ``before_id``."""
        sql = ["player_id = ?"]
        args: list[Any] = [player_id]
        if before_id is not None:
            sql.append("id < ?")
            args.append(before_id)
        if query.family is not None:
            kinds = [k.value for k in query.family.kinds]
            sql.append(f"kind IN ({', '.join('?' * len(kinds))})")
            args += kinds
        if query.preset is not None:
            sql.append("preset = ?")
            args.append(query.preset)
        if query.result is not None:
            sql.append("result = ?")
            args.append(query.result.value)
        if query.finished_after is not None:
            sql.append("finished_at >= ?")
            args.append(query.finished_after)
        if query.finished_before is not None:
            sql.append("finished_at < ?")
            args.append(query.finished_before)
        rows = await self.tx.fetchall(
            f"SELECT id, {_RECORD_COLUMNS} FROM records WHERE {' AND '.join(sql)} ORDER BY id DESC LIMIT ?",
            *args,
            limit,
        )
        return [_record(row) for row in rows]

    async def board_page(
        self,
        board: str,
        scope: BoardScope,
        min_qualifier: int,
        after: tuple[int, int, int, datetime, str] | None,
        limit: int,
    ) -> list[BoardEntry]:
        """Entries of ``board`` in order, after the ``after`` key."""
        sql = ["board = ?"]
        args: list[Any] = [board]
        if after is not None:
            sql.append(f"{_ENTRY_KEY} > (?, ?, ?, ?, ?)")
            args += after
        _scope(scope, min_qualifier, sql, args)
        rows = await self.tx.fetchall(
            f"SELECT {_ENTRY_COLUMNS} FROM board_entries WHERE {' AND '.join(sql)} ORDER BY {_ENTRY_KEY[1:-1]} LIMIT ?",
            *args,
            limit,
        )
        return [_entry(row) for row in rows]

    async def board_ahead(self, entry: BoardEntry, scope: BoardScope, min_qualifier: int) -> int:
        """How many entries of the board (in scope) rank above ``entry``."""
        sql = ["board = ?", f"{_ENTRY_KEY} < (?, ?, ?, ?, ?)"]
        args: list[Any] = [entry.board, *entry.key]
        _scope(scope, min_qualifier, sql, args)
        row = await self.tx.fetchone(f"SELECT COUNT(*) AS n FROM board_entries WHERE {' AND '.join(sql)}", *args)
        return int(row["n"]) if row else 0

    async def deal_stats(self, deal_id: str) -> DealStats | None:
        row = await self.tx.fetchone(f"SELECT {_STATS_COLUMNS} FROM deal_stats WHERE deal_id = ?", deal_id)
        return _stats(row) if row else None

    async def list_deal_stats(
        self, preset: str, hardest: bool, min_plays: int, after: tuple[int, int, str] | None, limit: int
    ) -> list[tuple[DealStats, int]]:
        """Deals of ``preset`` with ``min_plays`` or more, hardest (lowest win rate) or easiest first, then most
        plays, then by id; with each its ``win_ppm`` (the paging key with ``-plays`` and the id)."""
        sql = ["preset = ?", "plays >= ?"]
        args: list[Any] = [preset, min_plays]
        # Keys ascending: (win_ppm or -win_ppm, -plays, deal_id).
        rate = "win_ppm" if hardest else "-win_ppm"
        if after is not None:
            sql.append(f"({rate}, -plays, deal_id) > (?, ?, ?)")
            args += after
        rows = await self.tx.fetchall(
            f"SELECT {_STATS_COLUMNS}, win_ppm FROM deal_stats WHERE {' AND '.join(sql)} "
            f"ORDER BY {rate}, -plays, deal_id LIMIT ?",
            *args,
            limit,
        )
        return [(_stats(row), row["win_ppm"]) for row in rows]

    async def display_names(self, player_ids: Sequence[str]) -> dict[str, str]:
        if not player_ids:
            return {}
        ids = list(dict.fromkeys(player_ids))
        rows = await self.tx.fetchall(
            f"SELECT id, display_name FROM players WHERE id IN ({', '.join('?' * len(ids))})", *ids
        )
        return {row["id"]: row["display_name"] for row in rows}
