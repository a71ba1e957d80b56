"""The deal pool keeps its deals and counts how often each was dealt, so a burst never waits for the solver.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("deal_pool") as batch:
        batch.add_column(sa.Column("uses", sa.Integer, nullable=False, server_default="0"))
    op.drop_index("ix_deal_pool_take", "deal_pool")
    op.create_index("ix_deal_pool_take", "deal_pool", ["preset", "difficulty", "uses", "id"])


def downgrade() -> None:
    op.drop_index("ix_deal_pool_take", "deal_pool")
    op.create_index("ix_deal_pool_take", "deal_pool", ["preset", "difficulty", "id"])
    with op.batch_alter_table("deal_pool") as batch:
        batch.drop_column("uses")
