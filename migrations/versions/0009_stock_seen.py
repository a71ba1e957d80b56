"""Undo in scored play: a game whose undo took back a stock draw counts for no board.

``games.stock_seen`` is set in the undo's own write when the entry it takes back turned a stock card (the player
then knows what the stock holds). ``records.unranked`` says why a game or round row is not ``rated``
(``practice``, ``stock_seen``); rows written before say nothing, and the unrated games and rounds among them were
practice, the only reason then.

Revision ID: 0009
Revises: 0008
Create Date: 2027-01-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Existing games saw no stock card by undo: the server default (kept, as for ``practice``) fills them.
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("stock_seen", sa.Boolean, nullable=False, server_default=sa.false()))
    with op.batch_alter_table("records") as batch:
        batch.add_column(sa.Column("unranked", sa.String(16), nullable=True))
    op.execute("UPDATE records SET unranked = 'practice' WHERE kind IN ('game', 'round') AND NOT rated")


def downgrade() -> None:
    with op.batch_alter_table("records") as batch:
        batch.drop_column("unranked")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("stock_seen")
