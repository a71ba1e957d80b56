"""Webhooks and their outbox of deliveries.

``webhooks`` holds each registered webhook (where to POST which events, for one player or every player of an
issuer, and the secret that signs its deliveries); a deleted one keeps its row with ``deleted_at``.
``webhook_deliveries`` is the outbox: one event for one webhook, written in the transaction of the move that made
it, claimed by a sender when ``next_attempt_at`` comes (the claim moves it on: the lease), retried with backoff,
and finally delivered, failed or cancelled (``finished_at``).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-22
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("secret", sa.String(128), nullable=False),
        sa.Column("events", sa.String(64), nullable=False),
        sa.Column("coverage", sa.String(16), nullable=False),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("player_id", sa.String(36), nullable=True),
        sa.Column("created_by", sa.String(36), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("deleted_at", TS, nullable=True),
    )
    op.create_index("ix_webhooks_player", "webhooks", ["player_id", "created_at", "id"])
    op.create_index("ix_webhooks_issuer", "webhooks", ["issuer", "created_at", "id"])
    op.create_table(
        "webhook_deliveries",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("webhook_id", sa.String(36), sa.ForeignKey("webhooks.id"), nullable=False),
        sa.Column("event", sa.String(16), nullable=False),
        sa.Column("table_id", sa.String(36), nullable=False),
        sa.Column("seat", sa.Integer, nullable=False),
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("table_version", sa.Integer, nullable=False),
        sa.Column("event_time", TS, nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("next_attempt_at", TS, nullable=False),
        sa.Column("claim_token", sa.String(36), nullable=True),
        sa.Column("last_error", sa.String(255), nullable=True),
        sa.Column("finished_at", TS, nullable=True),
        sa.UniqueConstraint(
            "webhook_id", "table_id", "table_version", "event", "seat", name="uq_webhook_deliveries_event"
        ),
    )
    op.create_index("ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_attempt_at"])
    op.create_index("ix_webhook_deliveries_finished", "webhook_deliveries", ["finished_at"])


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_finished", "webhook_deliveries")
    op.drop_index("ix_webhook_deliveries_due", "webhook_deliveries")
    op.drop_table("webhook_deliveries")
    op.drop_index("ix_webhooks_issuer", "webhooks")
    op.drop_index("ix_webhooks_player", "webhooks")
    op.drop_table("webhooks")
