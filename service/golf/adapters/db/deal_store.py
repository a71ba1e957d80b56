"""Solitaire deals in SQL (``golf.app.ports.DealRepository``): the deals, the pool of pre-solved deals, daily
deals."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from golf.adapters.db.drivers import Row, Transaction, UniqueViolation
from golf.adapters.db.rows import marks, maybe_when, unique_constraint, verdict, when
from golf.app.ports import AlreadyStored
from golf.app.records import DealRecord, DealStanding, DealUse, Verdict, layout_from_text, layout_to_text
from golf.engine.solitaire.rules import SolitaireRules

_DEAL_COLUMNS = (
    "id, preset, preset_version, rules, seed, algorithm, commitment, layout, pysol_number, created_at, "
    "winnable, solution, fewest_left, difficulty, difficulty_score, seed_source"
)

# SQLite names the columns of the unique constraint or index a row broke: these map them to PostgreSQL's names.
_SQLITE_UNIQUE = {"daily_deals.day, daily_deals.preset": "daily_deals_pkey"}


def _deal(row: Row) -> DealRecord:
    return DealRecord(
        id=row["id"],
        preset=row["preset"],
        preset_version=row["preset_version"],
        rules=SolitaireRules.from_canonical(row["rules"]),
        seed=row["seed"],
        algorithm=row["algorithm"],
        commitment=row["commitment"],
        layout=layout_from_text(row["layout"]),
        created_at=when(row["created_at"]),
        pysol_number=row["pysol_number"],
        verdict=verdict(row),
        seed_source=row["seed_source"],
    )


def _verdict_values(verdict: Verdict | None) -> tuple[Any, ...]:
    if verdict is None:
        return (None, None, None, None, None)
    return (
        verdict.winnable,
        ",".join(verdict.solution) if verdict.solution else None,
        verdict.fewest_left,
        verdict.difficulty,
        verdict.difficulty_score,
    )


class SqlDealStore:
    """Solitaire deals, their pool and the daily deals, in one transaction."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    async def add_deal(self, deal: DealRecord) -> None:
        await self.tx.execute(
            f"INSERT INTO deals ({_DEAL_COLUMNS}) VALUES ({marks(_DEAL_COLUMNS)})",
            deal.id,
            deal.preset,
            deal.preset_version,
            deal.rules.canonical(),
            deal.seed,
            deal.algorithm,
            deal.commitment,
            layout_to_text(deal.layout),
            deal.pysol_number,
            deal.created_at,
            *_verdict_values(deal.verdict),
            deal.seed_source,
        )

    async def save_verdict(self, deal_id: str, verdict: Verdict) -> None:
        await self.tx.execute(
            "UPDATE deals SET winnable = ?, solution = ?, fewest_left = ?, difficulty = ?, difficulty_score = ? "
            "WHERE id = ?",
            *_verdict_values(verdict),
            deal_id,
        )

    async def get_deal(self, deal_id: str) -> DealRecord | None:
        row = await self.tx.fetchone(f"SELECT {_DEAL_COLUMNS} FROM deals WHERE id = ?", deal_id)
        return _deal(row) if row else None

    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]:
        if not deal_ids:
            return {}
        ids = sorted(deal_ids)
        marks = ", ".join("?" * len(ids))
        rows = await self.tx.fetchall(f"SELECT {_DEAL_COLUMNS} FROM deals WHERE id IN ({marks})", *ids)
        return {row["id"]: _deal(row) for row in rows}

    async def deal_use(self, deal_id: str, owner_id: str) -> DealUse:
        # One round trip; each part is an index lookup (uq_games_deal_in_play, ix_games_deal_id,
        # ix_daily_deals_deal).
        row = await self.tx.fetchone(
            "SELECT EXISTS (SELECT 1 FROM games WHERE deal_id = ? AND status = 'in_progress' AND holds_deal) AS held, "
            "(SELECT COUNT(*) FROM games WHERE deal_id = ? AND owner_id = ?) AS owner_games, "
            "EXISTS (SELECT 1 FROM daily_deals WHERE deal_id = ?) AS daily, "
            "(SELECT closed_at FROM deals WHERE id = ?) AS closed_at",
            deal_id,
            deal_id,
            owner_id,
            deal_id,
            deal_id,
        )
        assert row is not None
        closed_at = maybe_when(row["closed_at"])
        return DealUse(
            held=bool(row["held"]), owner_games=int(row["owner_games"]), daily=bool(row["daily"]), closed_at=closed_at
        )

    async def deal_standing(self, deal_id: str) -> DealStanding | None:
        # The deal by its primary key, its ranked games in progress by ix_games_deal_ranked_in_play.
        row = await self.tx.fetchone(
            "SELECT d.closed_at, EXISTS (SELECT 1 FROM games g WHERE g.deal_id = d.id AND g.status = 'in_progress' "
            "AND NOT g.practice) AS ranked_in_play FROM deals d WHERE d.id = ?",
            deal_id,
        )
        if row is None:
            return None
        closed_at = maybe_when(row["closed_at"])
        return DealStanding(closed_at=closed_at, ranked_in_play=bool(row["ranked_in_play"]))

    async def pool_add(self, preset: str, difficulty: str, deal_id: str) -> None:
        await self.tx.execute(
            "INSERT INTO deal_pool (preset, difficulty, deal_id) VALUES (?, ?, ?)", preset, difficulty, deal_id
        )

    async def pool_take(self, preset: str, difficulty: str | None, player_id: str) -> str | None:
        # SKIP LOCKED lets concurrent takers on PostgreSQL each get a different deal without waiting.
        lock = "" if self.tx.dialect == "sqlite" else " FOR UPDATE OF p SKIP LOCKED"
        where = "p.preset = ?" + (" AND p.difficulty = ?" if difficulty else "")
        args = (preset, difficulty) if difficulty else (preset,)
        row = await self.tx.fetchone(
            f"SELECT p.id, p.deal_id FROM deal_pool p WHERE {where} "
            "AND NOT EXISTS (SELECT 1 FROM games g WHERE g.deal_id = p.deal_id AND g.owner_id = ?) "
            "AND NOT EXISTS (SELECT 1 FROM games g WHERE g.deal_id = p.deal_id AND g.status = 'in_progress' "
            f"AND g.holds_deal) ORDER BY p.uses, p.id LIMIT 1{lock}",
            *args,
            player_id,
        )
        if row is None:
            return None
        await self.tx.execute("UPDATE deal_pool SET uses = uses + 1 WHERE id = ?", row["id"])
        deal_id: str = row["deal_id"]
        return deal_id

    async def pool_claim_fresh(self, preset: str) -> str | None:
        lock = "" if self.tx.dialect == "sqlite" else " FOR UPDATE SKIP LOCKED"
        row = await self.tx.fetchone(
            "DELETE FROM deal_pool WHERE id = (SELECT id FROM deal_pool WHERE preset = ? AND uses = 0 "
            f"ORDER BY id LIMIT 1{lock}) RETURNING deal_id",
            preset,
        )
        return None if row is None else str(row["deal_id"])

    async def pool_counts(self, preset: str, difficulty: str) -> tuple[int, int]:
        row = await self.tx.fetchone(
            "SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN uses = 0 THEN 1 ELSE 0 END), 0) AS fresh "
            "FROM deal_pool WHERE preset = ? AND difficulty = ?",
            preset,
            difficulty,
        )
        return (int(row["fresh"]), int(row["n"])) if row else (0, 0)

    async def pool_evict(self, preset: str, difficulty: str, closed_at: datetime) -> None:
        row = await self.tx.fetchone(
            "DELETE FROM deal_pool WHERE id = (SELECT id FROM deal_pool WHERE preset = ? AND difficulty = ? "
            "AND uses > 0 ORDER BY uses DESC, id LIMIT 1) RETURNING deal_id",
            preset,
            difficulty,
        )
        if row is not None:
            await self.tx.execute("UPDATE deals SET closed_at = ? WHERE id = ?", closed_at, row["deal_id"])

    async def daily_get(self, day: str, preset: str) -> str | None:
        row = await self.tx.fetchone("SELECT deal_id FROM daily_deals WHERE day = ? AND preset = ?", day, preset)
        return str(row["deal_id"]) if row else None

    async def daily_add(self, day: str, preset: str, deal_id: str, closes_at: datetime) -> None:
        try:
            await self.tx.execute(
                "INSERT INTO daily_deals (day, preset, deal_id) VALUES (?, ?, ?)", day, preset, deal_id
            )
        except UniqueViolation as err:
            raise AlreadyStored(unique_constraint(err, _SQLITE_UNIQUE)) from err
        await self.tx.execute("UPDATE deals SET closed_at = ? WHERE id = ?", closes_at, deal_id)
