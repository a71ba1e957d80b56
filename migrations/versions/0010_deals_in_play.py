"""Deals say when they stop being dealt as fresh games, so a finished game's stock can be shown to others once its
deal is out of play (``golf.app.reveals``).

``deals.closed_at`` is when a deal stops being dealt fresh: the end of a daily deal's UTC day, the time a pool deal
left the pool; NULL for a deal anyone may still start by its id. ``ix_games_deal_ranked_in_play`` finds a deal's
ranked games in progress (the games that keep its stock hidden) with one index probe. Daily deals stored before
this migration close at the end of their day; pool deals that left the pool before it cannot be told apart from
deals made for one game, so they stay in play (hidden), which is the safe side.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04
"""

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RANKED_IN_PLAY_WHERE = "status = 'in_progress' AND NOT practice"  # tables.GAMES_RANKED_IN_PLAY_WHERE, copied


def upgrade() -> None:
    with op.batch_alter_table("deals") as batch:
        batch.add_column(sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index(
        "ix_games_deal_ranked_in_play",
        "games",
        ["deal_id"],
        sqlite_where=sa.text(RANKED_IN_PLAY_WHERE),
        postgresql_where=sa.text(RANKED_IN_PLAY_WHERE),
    )
    bind = op.get_bind()
    deals = sa.table("deals", sa.column("id", sa.String), sa.column("closed_at", sa.DateTime(timezone=True)))
    for deal_id, day in bind.execute(sa.text("SELECT deal_id, day FROM daily_deals")).all():
        start = datetime.fromisoformat(day).replace(tzinfo=UTC)
        bind.execute(deals.update().where(deals.c.id == deal_id).values(closed_at=start + timedelta(days=1)))


def downgrade() -> None:
    op.drop_index("ix_games_deal_ranked_in_play", "games")
    with op.batch_alter_table("deals") as batch:
        batch.drop_column("closed_at")
