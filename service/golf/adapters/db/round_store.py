"""Solitaire rounds in SQL (``golf.app.ports.RoundRepository``): rounds of holes, each hole a game."""

from __future__ import annotations

from datetime import datetime

from golf.adapters.db.drivers import Row, Transaction
from golf.adapters.db.game_store import GAME_COLUMNS, game_from_row
from golf.adapters.db.rows import created_between, keyset_after, marks, qualified, when
from golf.app.records import GameRecord, RoundFilter, RoundRecord
from golf.engine.solitaire.rules import SolitaireRules

_ROUND_COLUMNS = "id, preset, rules, holes, par, winnable_only, difficulty, created_at, owner_id"


def _round(row: Row) -> RoundRecord:
    return RoundRecord(
        id=row["id"],
        preset=row["preset"],
        rules=SolitaireRules.from_canonical(row["rules"]),
        holes=row["holes"],
        par=row["par"],
        winnable_only=bool(row["winnable_only"]),
        difficulty=row["difficulty"],
        created_at=when(row["created_at"]),
        owner_id=row["owner_id"],
    )


class SqlRoundStore:
    """Solitaire rounds, in one transaction."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    async def add_round(self, round_: RoundRecord) -> None:
        await self.tx.execute(
            f"INSERT INTO rounds ({_ROUND_COLUMNS}) VALUES ({marks(_ROUND_COLUMNS)})",
            round_.id,
            round_.preset,
            round_.rules.canonical(),
            round_.holes,
            round_.par,
            round_.winnable_only,
            round_.difficulty,
            round_.created_at,
            round_.owner_id,
        )

    async def get_round(self, round_id: str) -> RoundRecord | None:
        row = await self.tx.fetchone(f"SELECT {_ROUND_COLUMNS} FROM rounds WHERE id = ?", round_id)
        return _round(row) if row else None

    async def list_rounds(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: RoundFilter
    ) -> list[RoundRecord]:
        sql, args = ["r.owner_id = ?"], [owner_id]
        if where.preset is not None:
            sql.append("r.preset = ?")
            args.append(where.preset)
        if where.finished is not None:
            # Finished: all its holes were played out (a round's games are its holes, one at a time).
            sql.append(
                "(SELECT COUNT(*) FROM games g WHERE g.round_id = r.id AND g.status <> 'in_progress') "
                + ("= r.holes" if where.finished else "<> r.holes")
            )
        created_between("r", where.created_after, where.created_before, sql, args)
        keyset_after("r", after, sql, args)
        rows = await self.tx.fetchall(
            f"SELECT {qualified(_ROUND_COLUMNS, 'r')} FROM rounds r WHERE {' AND '.join(sql)} "
            "ORDER BY r.created_at DESC, r.id DESC LIMIT ?",
            *args,
            limit,
        )
        return [_round(r) for r in rows]

    async def round_games(self, round_id: str) -> list[GameRecord]:
        rows = await self.tx.fetchall(f"SELECT {GAME_COLUMNS} FROM games WHERE round_id = ? ORDER BY hole", round_id)
        return [game_from_row(r) for r in rows]
