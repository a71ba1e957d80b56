"""The records of what was played (``golf.app.recording`` writes them, ``golf.app.record_queries`` reads them):
history rows, leaderboard entries and deal statistics, in one unit of work's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from golf.adapters.db.drivers import Row, Transaction
from golf.adapters.db.rows import marks, verdict, when
from golf.app.boards import BoardEntry, BoardRows
from golf.app.history import BoardScope, DealStats, HistoryFilter, PlayedRecord, RecordKind, Result
from golf.app.records import Unranked, Verdict

_RECORD_COLUMNS = (
    "player_id, issuer, kind, record_id, lead, preset, result, score, holes, moves, hints, undos, duration_ms, "
    "started_at, finished_at, rated, par, place, players, deal_id, unranked"
)
_ENTRY_COLUMNS = (
    "board, player_id, issuer, k1, k2, k3, reached_at, qualifier, record_id, score, duration_ms, assists, "
    "matches, wins, holes, points, mu, sigma"
)


def _columns_of(alias: str) -> str:
    """The entry columns of the ``board_entries`` row ``alias``."""
    return ", ".join(f"{alias}.{c}" for c in _ENTRY_COLUMNS.split(", "))


def _key_of(alias: str) -> str:
    """The order of the board (a row value) of the ``board_entries`` row ``alias``."""
    return f"({alias}.k1, {alias}.k2, {alias}.k3, {alias}.reached_at, {alias}.player_id)"


_SEEN_BY = (
    "(r.kind <> 'match' OR EXISTS (SELECT 1 FROM card_golf_tables t WHERE t.id = r.record_id "
    "AND (t.listed OR t.owner_id = ?)) OR EXISTS (SELECT 1 FROM records s WHERE s.kind = r.kind "
    "AND s.record_id = r.record_id AND s.player_id = ?))"
)
"""The record ``r`` is one the viewer (the two ``?``) may see: not a match, a listed table's, one of a table the
viewer created, or one the viewer has a row of (held a seat). The access rule of ``TableService.get``."""
_STATS_COLUMNS = "deal_id, preset, plays, wins, score_sum, duration_ms_sum"
_UPDATED = ", ".join(f"{c} = excluded.{c}" for c in _ENTRY_COLUMNS.split(", ")[2:])


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
        when(row["started_at"]),
        when(row["finished_at"]),
        bool(row["rated"]),
        row["par"],
        row["place"],
        row["players"],
        row["deal_id"],
        row["id"],
        Unranked(row["unranked"]) if row["unranked"] is not None else None,
    )


def _entry(row: Row) -> BoardEntry:
    return BoardEntry(
        row["board"],
        row["player_id"],
        row["issuer"],
        row["k1"],
        row["k2"],
        row["k3"],
        when(row["reached_at"]),
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


def _scope(alias: str, scope: BoardScope, min_qualifier: int, sql: list[str], args: list[Any]) -> None:
    """The conditions of entries (of table ``alias``) in ``scope`` with ``min_qualifier`` or more."""
    if scope.only is not None:
        sql.append(f"{alias}.issuer = ?")
        args.append(scope.only)
    elif scope.hidden:
        sql.append(f"{alias}.issuer NOT IN ({', '.join('?' * len(scope.hidden))})")
        args += scope.hidden
    if min_qualifier > 0:
        sql.append(f"{alias}.qualifier >= ?")
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
                f"INSERT INTO records ({_RECORD_COLUMNS}) VALUES ({marks(_RECORD_COLUMNS)})",
                r.player_id, r.issuer, r.kind.value, r.record_id, r.lead, r.preset, r.result.value, r.score,
                r.holes, r.moves, r.hints, r.undos, r.duration_ms, r.started_at, r.finished_at, r.rated, r.par,
                r.place, r.players, r.deal_id, r.unranked.value if r.unranked is not None else None,
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
                f"INSERT INTO board_entries ({_ENTRY_COLUMNS}) VALUES ({marks(_ENTRY_COLUMNS)}) "
                f"ON CONFLICT (board, player_id) DO UPDATE SET {_UPDATED}",
                e.board, e.player_id, e.issuer, e.k1, e.k2, e.k3, e.reached_at, e.qualifier, e.record_id, e.score,
                e.duration_ms, e.assists, e.matches, e.wins, e.holes, e.points, e.mu, e.sigma,
            )  # fmt: skip

    async def add_deal_result(self, deal_id: str, preset: str, won: bool, score: int, duration: int) -> None:
        wins = "(deal_stats.wins + excluded.wins) * 1000000 / (deal_stats.plays + 1)"
        await self.tx.execute(
            "INSERT INTO deal_stats (deal_id, preset, plays, wins, score_sum, duration_ms_sum, win_ppm, loss_ppm, "
            "neg_plays) VALUES (?, ?, 1, ?, ?, ?, ?, ?, -1) ON CONFLICT (deal_id) DO UPDATE SET "
            "plays = deal_stats.plays + 1, wins = deal_stats.wins + excluded.wins, "
            "score_sum = deal_stats.score_sum + excluded.score_sum, "
            "duration_ms_sum = deal_stats.duration_ms_sum + excluded.duration_ms_sum, "
            f"win_ppm = {wins}, loss_ppm = 1000000 - {wins}, neg_plays = -(deal_stats.plays + 1)",
            deal_id,
            preset,
            int(won),
            score,
            duration,
            1_000_000 if won else 0,
            0 if won else 1_000_000,
        )

    # -- reads: each one statement outside any transaction (``fetchall_atomic``), the fewest round trips ----------
    async def history(
        self, player_id: str, query: HistoryFilter, before_id: int | None, limit: int, viewer: str | None = None
    ) -> list[PlayedRecord]:
        """A player's records, newest first (by ``id``: commit order per player), below ``before_id``. For a
        ``viewer`` (another player), a private table's match only when the viewer created the table or has a row
        of the match (one is written for every person seated): in the statement, so a page is always full."""
        sql = ["r.player_id = ?"]
        args: list[Any] = [player_id]
        if before_id is not None:
            sql.append("r.id < ?")
            args.append(before_id)
        if query.family is not None:
            kinds = [k.value for k in query.family.kinds]
            sql.append(f"r.kind IN ({', '.join('?' * len(kinds))})")
            args += kinds
        if query.preset is not None:
            sql.append("r.preset = ?")
            args.append(query.preset)
        if query.result is not None:
            sql.append("r.result = ?")
            args.append(query.result.value)
        if query.finished_after is not None:
            sql.append("r.finished_at >= ?")
            args.append(query.finished_after)
        if query.finished_before is not None:
            sql.append("r.finished_at < ?")
            args.append(query.finished_before)
        if viewer is not None:
            sql.append(_SEEN_BY)
            args += [viewer, viewer]
        columns = ", ".join(f"r.{c}" for c in _RECORD_COLUMNS.split(", "))
        rows = await self.tx.fetchall_atomic(
            f"SELECT r.id, {columns} FROM records r WHERE {' AND '.join(sql)} ORDER BY r.id DESC LIMIT ?",
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
    ) -> BoardRows:
        """Entries of ``board`` in order after the ``after`` key, with their display names and how many entries
        (in scope) rank above the first: one statement."""
        sql = ["e.board = ?"]
        args: list[Any] = [board]
        ahead = "0"
        ahead_args: list[Any] = []
        if after is not None:
            sql.append(f"{_key_of('e')} > (?, ?, ?, ?, ?)")
            args += after
            # Entries at or above the last one seen are exactly those above the page's first (none lie between).
            counted = ["b.board = ?", f"{_key_of('b')} <= (?, ?, ?, ?, ?)"]
            ahead_args = [board, *after]
            _scope("b", scope, min_qualifier, counted, ahead_args)
            ahead = f"(SELECT COUNT(*) FROM board_entries b WHERE {' AND '.join(counted)})"
        _scope("e", scope, min_qualifier, sql, args)
        rows = await self.tx.fetchall_atomic(
            f"SELECT {_columns_of('e')}, p.display_name, {ahead} AS ahead FROM board_entries e "
            f"LEFT JOIN players p ON p.id = e.player_id WHERE {' AND '.join(sql)} ORDER BY {_key_of('e')[1:-1]} "
            "LIMIT ?",
            *ahead_args,
            *args,
            limit,
        )
        return BoardRows(
            [_entry(row) for row in rows],
            {row["player_id"]: row["display_name"] or "" for row in rows},
            int(rows[0]["ahead"]) if rows else 0,
        )

    async def board_standing(
        self, board: str, player_id: str, scope: BoardScope, min_qualifier: int
    ) -> tuple[BoardEntry, str, int] | None:
        """A player's entry on ``board`` when it is in scope, with their display name and how many entries (in
        scope) rank above it: one statement."""
        counted = ["b.board = e.board", f"{_key_of('b')} < {_key_of('e')}"]
        args: list[Any] = []
        _scope("b", scope, min_qualifier, counted, args)
        sql = ["e.board = ?", "e.player_id = ?"]
        outer: list[Any] = [board, player_id]
        _scope("e", scope, min_qualifier, sql, outer)
        row = await self.tx.fetchone_atomic(
            f"SELECT {_columns_of('e')}, p.display_name, "
            f"(SELECT COUNT(*) FROM board_entries b WHERE {' AND '.join(counted)}) AS ahead "
            f"FROM board_entries e LEFT JOIN players p ON p.id = e.player_id WHERE {' AND '.join(sql)}",
            *args,
            *outer,
        )
        return None if row is None else (_entry(row), row["display_name"] or "", int(row["ahead"]))

    async def player_issuer(self, player_id: str) -> str | None:
        row = await self.tx.fetchone_atomic("SELECT issuer FROM players WHERE id = ?", player_id)
        return None if row is None else str(row["issuer"])

    async def deal_exists(self, deal_id: str) -> bool:
        return await self.tx.fetchone_atomic("SELECT 1 AS found FROM deals WHERE id = ?", deal_id) is not None

    async def daily_deal(self, day: str, preset: str) -> str | None:
        row = await self.tx.fetchone_atomic("SELECT deal_id FROM daily_deals WHERE day = ? AND preset = ?", day, preset)
        return None if row is None else str(row["deal_id"])

    async def deal_stats(self, deal_id: str) -> DealStats | None:
        row = await self.tx.fetchone_atomic(f"SELECT {_STATS_COLUMNS} FROM deal_stats WHERE deal_id = ?", deal_id)
        return _stats(row) if row else None

    async def list_deal_stats(
        self, preset: str, hardest: bool, min_plays: int, after: tuple[int, int, str] | None, limit: int
    ) -> list[tuple[DealStats, int, Verdict | None]]:
        """Deals of ``preset`` with ``min_plays`` or more, hardest (lowest win rate) or easiest first, then most
        plays, then by id; each with its rate key (``win_ppm``, or ``loss_ppm`` for the easiest: with ``-plays``
        and the id, the paging key) and the solver's verdict. One ascending scan of the list's index."""
        rate = "win_ppm" if hardest else "loss_ppm"
        sql = ["s.preset = ?", "s.plays >= ?"]
        args: list[Any] = [preset, min_plays]
        if after is not None:
            sql.append(f"(s.{rate}, s.neg_plays, s.deal_id) > (?, ?, ?)")
            args += after
        stats = ", ".join(f"s.{c}" for c in _STATS_COLUMNS.split(", "))
        rows = await self.tx.fetchall_atomic(
            f"SELECT {stats}, s.{rate} AS rate, d.winnable, d.fewest_left, d.difficulty, d.difficulty_score "
            f"FROM deal_stats s JOIN deals d ON d.id = s.deal_id WHERE {' AND '.join(sql)} "
            f"ORDER BY s.{rate}, s.neg_plays, s.deal_id LIMIT ?",
            *args,
            limit,
        )
        return [(_stats(row), row["rate"], verdict(row, with_line=False)) for row in rows]
