"""Solver verdicts on deals, hints, undo marks, rounds, the winnable-deal pool and daily deals.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("deals") as batch:
        batch.add_column(sa.Column("winnable", sa.Boolean, nullable=True))
        batch.add_column(sa.Column("solution", sa.Text, nullable=True))
        batch.add_column(sa.Column("fewest_left", sa.Integer, nullable=True))
        batch.add_column(sa.Column("difficulty", sa.String(16), nullable=True))
        batch.add_column(sa.Column("difficulty_score", sa.BigInteger, nullable=True))
    op.create_table(
        "rounds",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("holes", sa.Integer, nullable=False),
        sa.Column("par", sa.Integer, nullable=False),
        sa.Column("winnable_only", sa.Boolean, nullable=False),
        sa.Column("difficulty", sa.String(16), nullable=True),
        sa.Column("created_at", TS, nullable=False),
    )
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("hints_used", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("undos_used", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("round_id", sa.String(36), nullable=True))
        batch.add_column(sa.Column("hole", sa.Integer, nullable=True))
        batch.create_foreign_key("fk_games_round_id_rounds", "rounds", ["round_id"], ["id"])
        batch.create_unique_constraint("uq_games_round_hole", ["round_id", "hole"])
    with op.batch_alter_table("moves") as batch:
        batch.alter_column("code", type_=sa.Text, existing_type=sa.String(16), existing_nullable=False)
        batch.add_column(sa.Column("undone_by", sa.Integer, nullable=True))
    op.create_table(
        "hints",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("game_id", sa.String(36), sa.ForeignKey("games.id"), nullable=False),
        sa.Column("idempotency_key", sa.String(128), nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.UniqueConstraint("game_id", "idempotency_key", name="uq_hints_game_key"),
    )
    op.create_table(
        "deal_pool",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("difficulty", sa.String(16), nullable=False),
        sa.Column("deal_id", sa.String(36), sa.ForeignKey("deals.id"), nullable=False, unique=True),
    )
    op.create_index("ix_deal_pool_take", "deal_pool", ["preset", "difficulty", "id"])
    op.create_table(
        "daily_deals",
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("preset", sa.String(64), primary_key=True),
        sa.Column("deal_id", sa.String(36), sa.ForeignKey("deals.id"), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("daily_deals")
    op.drop_index("ix_deal_pool_take", "deal_pool")
    op.drop_table("deal_pool")
    op.drop_table("hints")
    with op.batch_alter_table("moves") as batch:
        batch.drop_column("undone_by")
        batch.alter_column("code", type_=sa.String(16), existing_type=sa.Text, existing_nullable=False)
    with op.batch_alter_table("games") as batch:
        batch.drop_constraint("uq_games_round_hole", type_="unique")
        batch.drop_constraint("fk_games_round_id_rounds", type_="foreignkey")
        batch.drop_column("hole")
        batch.drop_column("round_id")
        batch.drop_column("undos_used")
        batch.drop_column("hints_used")
    op.drop_table("rounds")
    with op.batch_alter_table("deals") as batch:
        for name in ("difficulty_score", "difficulty", "fewest_left", "solution", "winnable"):
            batch.drop_column(name)
