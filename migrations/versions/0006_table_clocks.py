"""Work due at live tables by time: turn clocks, paced bots, quick play.

``card_golf_tables`` gains when its next work falls due (``due_at``; NULL: nothing until someone acts), the lease of
the process running it (``lease_owner``, ``lease_until``: a process that dies leaves a lease that runs out) and
whether quick play opened the table (``quick_play``). ``card_golf_quick_plays`` keeps which table a player's quick
play request (by its idempotency key) seated them at. Tables stored before have no clock: nothing is due there.

Revision ID: 0006
Revises: 0005
Create Date: 2027-01-05
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)

# The same predicate as in tables.py.
DUE_WHERE = "due_at IS NOT NULL"


def _partial(where: str) -> dict[str, Any]:
    return {"sqlite_where": sa.text(where), "postgresql_where": sa.text(where)}


def upgrade() -> None:
    with op.batch_alter_table("card_golf_tables") as batch:
        batch.add_column(sa.Column("due_at", TS, nullable=True))
        batch.add_column(sa.Column("lease_owner", sa.String(64), nullable=True))
        batch.add_column(sa.Column("lease_until", TS, nullable=True))
        batch.add_column(sa.Column("quick_play", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_index("ix_card_golf_tables_due", "card_golf_tables", ["due_at"], **_partial(DUE_WHERE))
    op.create_table(
        "card_golf_quick_plays",
        sa.Column("player_id", sa.String(36), primary_key=True),
        sa.Column("idempotency_key", sa.String(128), primary_key=True),
        sa.Column("table_id", sa.String(36), sa.ForeignKey("card_golf_tables.id"), nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("card_golf_quick_plays")
    op.drop_index("ix_card_golf_tables_due", "card_golf_tables")
    with op.batch_alter_table("card_golf_tables") as batch:
        for name in ("quick_play", "lease_until", "lease_owner", "due_at"):
            batch.drop_column(name)
