"""Players, refresh tokens, and owners of games and rounds.

Games and rounds stored before players existed belong to ``legacy`` (``golf.app.identity.LEGACY_OWNER``). A game
may hold its deal (no other game starts on it while it is in progress) and a player has one scored game per
deal: two partial unique indexes. Deals record who chose their seed. Daily deals leave the pool: a daily deal is
never dealt as an ordinary game.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
LEGACY_OWNER = "legacy"  # golf.app.identity.LEGACY_OWNER, copied: a migration must not change with the code

# The same predicates as in tables.py (they work on both dialects: SQLite stores booleans as 0/1).
DEAL_IN_PLAY_WHERE = "status = 'in_progress' AND holds_deal"
SCORED_WHERE = "NOT practice AND owner_id <> 'legacy'"


def _partial(where: str) -> dict[str, Any]:
    return {"sqlite_where": sa.text(where), "postgresql_where": sa.text(where)}


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("display_name", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("subject", sa.String(255), nullable=True),
        sa.UniqueConstraint("issuer", "subject", name="uq_players_issuer_subject"),
    )
    op.create_table(
        "refresh_tokens",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("player_id", sa.String(36), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
        sa.UniqueConstraint("token_hash", name="uq_refresh_tokens_hash"),
    )
    op.create_index("ix_refresh_tokens_player_id", "refresh_tokens", ["player_id"])

    # Existing rows get their values from a server default, which is then dropped (a new row must say who owns
    # it, and where its seed came from). Two batches: SQLite adds the columns in place, then copies the table.
    with op.batch_alter_table("deals") as batch:
        batch.add_column(sa.Column("seed_source", sa.String(16), nullable=False, server_default="server"))
    op.execute("UPDATE deals SET seed_source = 'pysol' WHERE algorithm = 'pysolfc'")
    with op.batch_alter_table("deals") as batch:
        batch.alter_column("seed_source", server_default=None, existing_type=sa.String(16), existing_nullable=False)

    with op.batch_alter_table("rounds") as batch:
        batch.add_column(sa.Column("owner_id", sa.String(36), nullable=False, server_default=LEGACY_OWNER))
    with op.batch_alter_table("rounds") as batch:
        batch.alter_column("owner_id", server_default=None, existing_type=sa.String(36), existing_nullable=False)
    op.create_index("ix_rounds_owner_created", "rounds", ["owner_id", "created_at", "id"])

    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("owner_id", sa.String(36), nullable=False, server_default=LEGACY_OWNER))
        batch.add_column(sa.Column("practice", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("holds_deal", sa.Boolean, nullable=False, server_default=sa.false()))
        batch.add_column(sa.Column("autoplay_assists", sa.Integer, nullable=False, server_default="0"))
    with op.batch_alter_table("games") as batch:
        batch.alter_column("owner_id", server_default=None, existing_type=sa.String(36), existing_nullable=False)
    op.create_index("ix_games_owner_created", "games", ["owner_id", "created_at", "id"])
    op.create_index("uq_games_deal_in_play", "games", ["deal_id"], unique=True, **_partial(DEAL_IN_PLAY_WHERE))
    op.create_index("uq_games_scored", "games", ["deal_id", "owner_id"], unique=True, **_partial(SCORED_WHERE))

    op.create_index("ix_daily_deals_deal", "daily_deals", ["deal_id"])
    op.execute("DELETE FROM deal_pool WHERE deal_id IN (SELECT deal_id FROM daily_deals)")


def downgrade() -> None:
    # The daily deals taken out of the pool stay out: they are daily deals still.
    op.drop_index("ix_daily_deals_deal", "daily_deals")
    op.drop_index("uq_games_scored", "games")
    op.drop_index("uq_games_deal_in_play", "games")
    op.drop_index("ix_games_owner_created", "games")
    with op.batch_alter_table("games") as batch:
        for name in ("autoplay_assists", "holds_deal", "practice", "owner_id"):
            batch.drop_column(name)
    op.drop_index("ix_rounds_owner_created", "rounds")
    with op.batch_alter_table("rounds") as batch:
        batch.drop_column("owner_id")
    with op.batch_alter_table("deals") as batch:
        batch.drop_column("seed_source")
    op.drop_index("ix_refresh_tokens_player_id", "refresh_tokens")
    op.drop_table("refresh_tokens")
    op.drop_table("players")
