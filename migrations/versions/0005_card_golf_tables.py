"""Live card Golf tables and their append-only logs.

A table row holds the table's options and match seed (the ``golf.app.tables.records`` format) and where its log
stands (``version``: entries so far; ``status``). Each entry of the log is a row keyed by (table, seq); a
command's idempotency key sits on its first entry, unique per table.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-20
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)

# The same predicates as in tables.py (both dialects read them alike: SQLite stores booleans as 0/1).
CODE_WHERE = "join_code IS NOT NULL AND status <> 'over'"
OPEN_WHERE = "status = 'seating' AND listed"
KEY_WHERE = "idempotency_key IS NOT NULL"


def _partial(where: str) -> dict[str, Any]:
    return {"sqlite_where": sa.text(where), "postgresql_where": sa.text(where)}


def upgrade() -> None:
    op.create_table(
        "card_golf_tables",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("options", sa.Text, nullable=False),
        sa.Column("seed", sa.String(160), nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("join_code", sa.String(16), nullable=True),
        sa.Column("listed", sa.Boolean, nullable=False),
        sa.Column("owner_id", sa.String(36), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
    )
    op.create_index(
        "uq_card_golf_tables_join_code", "card_golf_tables", ["join_code"], unique=True, **_partial(CODE_WHERE)
    )
    op.create_index(
        "ix_card_golf_tables_open", "card_golf_tables", ["preset", "created_at", "id"], **_partial(OPEN_WHERE)
    )
    op.create_table(
        "card_golf_table_entries",
        sa.Column("table_id", sa.String(36), sa.ForeignKey("card_golf_tables.id"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("idempotency_key", sa.String(128), nullable=True),
        sa.Column("batch", sa.Integer, nullable=False),
        sa.Column("entry", sa.Text, nullable=False),
        sa.Column("seat", sa.Integer, nullable=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index(
        "uq_card_golf_table_entries_key",
        "card_golf_table_entries",
        ["table_id", "idempotency_key"],
        unique=True,
        **_partial(KEY_WHERE),
    )


def downgrade() -> None:
    op.drop_index("uq_card_golf_table_entries_key", "card_golf_table_entries")
    op.drop_table("card_golf_table_entries")
    op.drop_index("ix_card_golf_tables_open", "card_golf_tables")
    op.drop_index("uq_card_golf_tables_join_code", "card_golf_tables")
    op.drop_table("card_golf_tables")
