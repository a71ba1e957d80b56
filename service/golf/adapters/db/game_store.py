"""Solitaire games in SQL (``golf.app.ports.GameRepository``): the games, their move logs and their hints."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from golf.adapters.db.drivers import Row, Transaction, UniqueViolation
from golf.adapters.db.group_commit import Grouped
from golf.adapters.db.rows import created_between, keyset_after, marks, qualified, unique_constraint, when
from golf.app.ports import AlreadyStored, DuplicateMove
from golf.app.records import GameFilter, GameRecord, HintRecord, MoveRecord

GAME_COLUMNS = (
    "id, deal_id, version, status, score, line, created_at, updated_at, finished_at, hints_used, undos_used, "
    "round_id, hole, owner_id, practice, holds_deal, autoplay_assists, stock_seen"
)
_MOVE_COLUMNS = "game_id, seq, code, idempotency_key, created_at, undone_by"

_GAME_UPDATE = (
    "version = ?, status = ?, score = ?, line = ?, updated_at = ?, finished_at = ?, undos_used = ?, "
    "autoplay_assists = ?, stock_seen = ?"
)

# SQLite names the columns of the unique constraint or index a row broke, not the constraint: these map them to
# the names PostgreSQL reports, so callers can tell the constraints apart on both databases.
_SQLITE_UNIQUE = {
    "games.id": "games_pkey",
    "games.deal_id": "uq_games_deal_in_play",
    "games.deal_id, games.owner_id": "uq_games_scored",
    "games.round_id, games.hole": "uq_games_round_hole",
    "moves.game_id, moves.seq": "uq_moves_game_seq",
    "moves.game_id, moves.idempotency_key": "uq_moves_game_key",
    "hints.game_id, hints.idempotency_key": "uq_hints_game_key",
}

# One statement, so one round trip, for the hot path on PostgreSQL: the log entry, the undo mark and the game
# row together. If the game is not at the expected version the division by zero aborts the whole statement, so
# the entry is never stored without the game (normally the unique (game, seq) index refuses it first). Concurrent
# moves are stored together by ``_MANY_CHANGES`` (see ``group_commit``): each entry whose game row is still at its
# version, with its game row. Its columns are ``_change_args`` in order, so the game id comes three times.
_ONE_CHANGE = f"""
WITH entry AS (
    INSERT INTO moves (game_id, seq, code, idempotency_key, created_at) VALUES (?, ?, ?, ?, ?) RETURNING seq
), undone AS (
    UPDATE moves SET undone_by = (SELECT seq FROM entry) WHERE game_id = ? AND seq = ?
), game AS (
    UPDATE games SET {_GAME_UPDATE} WHERE id = ? AND version = ? RETURNING hints_used
)
SELECT (SELECT hints_used FROM game) AS hints_used, 1 / (SELECT count(*) FROM game)::int AS ok
"""
_MANY_CHANGES = """
WITH d AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::int[],
        $8::int[], $9::text[], $10::int[], $11::text[], $12::timestamptz[], $13::timestamptz[], $14::int[],
        $15::int[], $16::bool[], $17::text[], $18::int[]) WITH ORDINALITY
        AS d(game_id, seq, code, idempotency_key, created_at, undo_game_id, undo_of, version, status, score, line,
             updated_at, finished_at, undos_used, autoplay_assists, stock_seen, id, expected, entry)
), game AS (
    UPDATE games SET version = d.version, status = d.status, score = d.score, line = d.line,
        updated_at = d.updated_at, finished_at = d.finished_at, undos_used = d.undos_used,
        autoplay_assists = d.autoplay_assists, stock_seen = d.stock_seen
    FROM d WHERE games.id = d.id AND games.version = d.expected
    RETURNING d.entry, games.hints_used
), stored AS (
    INSERT INTO moves (game_id, seq, code, idempotency_key, created_at)
    SELECT d.game_id, d.seq, d.code, d.idempotency_key, d.created_at FROM d JOIN game USING (entry)
), undone AS (
    UPDATE moves SET undone_by = d.seq FROM d JOIN game USING (entry)
    WHERE moves.game_id = d.game_id AND moves.seq = d.undo_of
)
SELECT entry, hints_used FROM game
"""
_PG_RECORD_CHANGE = Grouped(_ONE_CHANGE, _MANY_CHANGES)


def _change_args(entry: MoveRecord, game: GameRecord, expected_version: int, undo_of: int | None) -> tuple[Any, ...]:
    return (
        entry.game_id,
        entry.seq,
        entry.code,
        entry.idempotency_key,
        entry.created_at,
        entry.game_id,
        undo_of,
        *_game_update_args(game, expected_version),
    )


def _game_update_args(game: GameRecord, expected_version: int) -> tuple[Any, ...]:
    """The values of ``_GAME_UPDATE``, then the game id and the version it must still be at."""
    line = ",".join(game.line)
    return (game.version, game.status, game.score, line, game.updated_at, game.finished_at, game.undos_used,
            game.autoplay_assists, game.stock_seen, game.id, expected_version)  # fmt: skip


def game_from_row(row: Row) -> GameRecord:
    """The game of a ``games`` row read with ``GAME_COLUMNS``."""
    line = row["line"]
    return GameRecord(
        id=row["id"],
        deal_id=row["deal_id"],
        version=row["version"],
        status=row["status"],
        score=row["score"],
        line=line.split(",") if line else [],
        created_at=when(row["created_at"]),
        updated_at=when(row["updated_at"]),
        finished_at=when(row["finished_at"]) if row["finished_at"] is not None else None,
        hints_used=row["hints_used"],
        undos_used=row["undos_used"],
        round_id=row["round_id"],
        hole=row["hole"],
        owner_id=row["owner_id"],
        practice=bool(row["practice"]),
        holds_deal=bool(row["holds_deal"]),
        autoplay_assists=row["autoplay_assists"],
        stock_seen=bool(row["stock_seen"]),
    )


def _move(row: Row) -> MoveRecord:
    return MoveRecord(
        row["game_id"], row["seq"], row["code"], row["idempotency_key"], when(row["created_at"]), row["undone_by"]
    )


class SqlGameStore:
    """Solitaire games, their move logs and hints, in one transaction."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    async def add_game(self, game: GameRecord) -> None:
        try:
            await self.tx.execute(
                f"INSERT INTO games ({GAME_COLUMNS}) VALUES ({marks(GAME_COLUMNS)})",
                game.id,
                game.deal_id,
                game.version,
                game.status,
                game.score,
                ",".join(game.line),
                game.created_at,
                game.updated_at,
                game.finished_at,
                game.hints_used,
                game.undos_used,
                game.round_id,
                game.hole,
                game.owner_id,
                game.practice,
                game.holds_deal,
                game.autoplay_assists,
                game.stock_seen,
            )
        except UniqueViolation as err:
            raise AlreadyStored(unique_constraint(err, _SQLITE_UNIQUE)) from err

    async def get_game(self, game_id: str) -> GameRecord | None:
        row = await self.tx.fetchone(f"SELECT {GAME_COLUMNS} FROM games WHERE id = ?", game_id)
        return game_from_row(row) if row else None

    async def list_games(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: GameFilter
    ) -> list[GameRecord]:
        sql, args = ["g.owner_id = ?"], [owner_id]
        join = ""
        if where.preset is not None:
            join = " JOIN deals d ON d.id = g.deal_id"
            sql.append("d.preset = ?")
            args.append(where.preset)
        if where.status is not None:
            sql.append("g.status = ?")
            args.append(where.status)
        created_between("g", where.created_after, where.created_before, sql, args)
        keyset_after("g", after, sql, args)
        rows = await self.tx.fetchall(
            f"SELECT {qualified(GAME_COLUMNS, 'g')} FROM games g{join} WHERE {' AND '.join(sql)} "
            "ORDER BY g.created_at DESC, g.id DESC LIMIT ?",
            *args,
            limit,
        )
        return [game_from_row(r) for r in rows]

    async def get_moves(self, game_id: str) -> list[MoveRecord]:
        rows = await self.tx.fetchall(f"SELECT {_MOVE_COLUMNS} FROM moves WHERE game_id = ? ORDER BY seq", game_id)
        return [_move(r) for r in rows]

    async def find_move(self, game_id: str, idempotency_key: str) -> MoveRecord | None:
        row = await self.tx.fetchone(
            f"SELECT {_MOVE_COLUMNS} FROM moves WHERE game_id = ? AND idempotency_key = ?", game_id, idempotency_key
        )
        return _move(row) if row else None

    async def record_change(
        self, entry: MoveRecord, game: GameRecord, expected_version: int, undo_of: int | None
    ) -> int | None:
        try:
            if self.tx.dialect == "postgresql":
                row = await self.tx.fetchone_grouped(
                    _PG_RECORD_CHANGE, *_change_args(entry, game, expected_version, undo_of)
                )
                return None if row is None else int(row["hints_used"])
            await self.tx.execute(
                "INSERT INTO moves (game_id, seq, code, idempotency_key, created_at) VALUES (?, ?, ?, ?, ?)",
                entry.game_id,
                entry.seq,
                entry.code,
                entry.idempotency_key,
                entry.created_at,
            )
        except UniqueViolation as err:
            raise DuplicateMove(key_taken=unique_constraint(err, _SQLITE_UNIQUE) == "uq_moves_game_key") from err
        if undo_of is not None:
            await self.tx.execute(
                "UPDATE moves SET undone_by = ? WHERE game_id = ? AND seq = ?", entry.seq, entry.game_id, undo_of
            )
        row = await self.tx.fetchone(
            f"UPDATE games SET {_GAME_UPDATE} WHERE id = ? AND version = ? RETURNING hints_used",
            *_game_update_args(game, expected_version),
        )
        return None if row is None else int(row["hints_used"])

    async def add_hint(self, hint: HintRecord) -> None:
        try:
            await self.tx.execute(
                "INSERT INTO hints (game_id, idempotency_key, code, created_at) VALUES (?, ?, ?, ?)",
                hint.game_id,
                hint.idempotency_key,
                hint.code,
                hint.created_at,
            )
        except UniqueViolation as err:
            raise AlreadyStored(unique_constraint(err, _SQLITE_UNIQUE)) from err
        await self.tx.execute("UPDATE games SET hints_used = hints_used + 1 WHERE id = ?", hint.game_id)

    async def find_hint(self, game_id: str, idempotency_key: str) -> HintRecord | None:
        row = await self.tx.fetchone(
            "SELECT game_id, idempotency_key, code, created_at FROM hints WHERE game_id = ? AND idempotency_key = ?",
            game_id,
            idempotency_key,
        )
        if row is None:
            return None
        return HintRecord(row["game_id"], row["idempotency_key"], row["code"], when(row["created_at"]))
