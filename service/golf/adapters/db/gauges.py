"""The counts behind the metrics' database gauges (``golf_games_in_progress``, ``golf_tables_active``): cheap
queries, run on a scrape at most every ``metrics_refresh_seconds`` (see ``golf.adapters.metrics``)."""

from __future__ import annotations

from golf.adapters.db.repository import Database


async def games_in_progress(database: Database) -> int:
    """Solitaire games not over, of every replica."""
    async with database() as uow:
        row = await uow.tx.fetchone("SELECT COUNT(*) AS n FROM games WHERE status = 'in_progress'")
    return int(row["n"]) if row else 0


async def tables_active(database: Database) -> int:
    """Live card Golf tables seating players or playing, of every replica."""
    async with database() as uow:
        row = await uow.tx.fetchone("SELECT COUNT(*) AS n FROM card_golf_tables WHERE status IN ('seating', 'playing')")
    return int(row["n"]) if row else 0
