"""Solitaire deals, games and the append-only move log.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "deals",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("preset_version", sa.Integer, nullable=False),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("seed", sa.String(160), nullable=False),
        sa.Column("algorithm", sa.String(32), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("layout", sa.Text, nullable=False),
        sa.Column("pysol_number", sa.BigInteger, nullable=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("deal_id", sa.String(36), sa.ForeignKey("deals.id"), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("line", sa.Text, nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=True),
    )
    op.create_index("ix_games_deal_id", "games", ["deal_id"])
    op.create_index("ix_games_created_id", "games", ["created_at", "id"])
    op.create_table(
        "moves",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(36), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("game_id", "seq", name="uq_moves_game_seq"),
        sa.UniqueConstraint("game_id", "idempotency_key", name="uq_moves_game_key"),
    )


def downgrade() -> None:
    op.drop_table("moves")
    op.drop_index("ix_games_created_id", "games")
    op.drop_index("ix_games_deal_id", "games")
    op.drop_table("games")
    op.drop_table("deals")
