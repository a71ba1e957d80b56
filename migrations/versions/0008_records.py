"""Records of what was played: players' histories, leaderboards, deal statistics and ratings.

``records`` holds one row per player per finished solitaire game, round or card Golf match, written in the
transaction of the move that finished it (``golf.app.recording``); ``lead`` marks one row per game or match (what an
export lists once). ``board_entries`` is each player's place on each leaderboard, kept up to date by the same
writes, ordered by ``(k1, k2, k3, reached_at, player_id)`` (the rating board also holds each player's Weng-Lin
rating). ``deal_stats`` sums players' results per deal, with the keys its two lists are ordered by (hardest:
``win_ppm``, easiest: ``loss_ppm``, then ``neg_plays``: most plays first).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-23
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
LEAD_WHERE = "lead"  # tables.RECORDS_LEAD_WHERE, copied: a migration must not change with the code


def _partial(where: str) -> dict[str, Any]:
    return {"sqlite_where": sa.text(where), "postgresql_where": sa.text(where)}


def upgrade() -> None:
    op.create_table(
        "records",
        sa.Column("id", ID, primary_key=True, autoincrement=True),
        sa.Column("player_id", sa.String(36), nullable=False),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(8), nullable=False),
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("lead", sa.Boolean, nullable=False),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("result", sa.String(8), nullable=False),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("par", sa.Integer, nullable=True),
        sa.Column("place", sa.Integer, nullable=True),
        sa.Column("players", sa.Integer, nullable=True),
        sa.Column("holes", sa.Integer, nullable=False),
        sa.Column("moves", sa.Integer, nullable=False),
        sa.Column("hints", sa.Integer, nullable=False),
        sa.Column("undos", sa.Integer, nullable=False),
        sa.Column("duration_ms", sa.BigInteger, nullable=False),
        sa.Column("started_at", TS, nullable=False),
        sa.Column("finished_at", TS, nullable=False),
        sa.Column("deal_id", sa.String(36), nullable=True),
        sa.Column("rated", sa.Boolean, nullable=False),
        sa.UniqueConstraint("kind", "record_id", "player_id", name="uq_records_record_player"),
    )
    op.create_index("ix_records_player", "records", ["player_id", "id"])
    op.create_index("ix_records_player_kind", "records", ["player_id", "kind", "id"])
    op.create_index("ix_records_export", "records", ["finished_at", "id"], **_partial(LEAD_WHERE))
    op.create_table(
        "board_entries",
        sa.Column("board", sa.String(160), primary_key=True),
        sa.Column("player_id", sa.String(36), primary_key=True),
        sa.Column("issuer", sa.String(255), nullable=False),
        sa.Column("k1", sa.BigInteger, nullable=False),
        sa.Column("k2", sa.BigInteger, nullable=False),
        sa.Column("k3", sa.BigInteger, nullable=False),
        sa.Column("reached_at", TS, nullable=False),
        sa.Column("qualifier", sa.Integer, nullable=False),
        sa.Column("record_id", sa.String(36), nullable=True),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("duration_ms", sa.BigInteger, nullable=False),
        sa.Column("assists", sa.Integer, nullable=False),
        sa.Column("matches", sa.Integer, nullable=False),
        sa.Column("wins", sa.Integer, nullable=False),
        sa.Column("holes", sa.Integer, nullable=False),
        sa.Column("points", sa.Integer, nullable=False),
        sa.Column("mu", sa.Float, nullable=False),
        sa.Column("sigma", sa.Float, nullable=False),
    )
    op.create_index("ix_board_entries_rank", "board_entries", ["board", "k1", "k2", "k3", "reached_at", "player_id"])
    op.create_table(
        "deal_stats",
        sa.Column("deal_id", sa.String(36), primary_key=True),
        sa.Column("preset", sa.String(64), nullable=False),
        sa.Column("plays", sa.BigInteger, nullable=False),
        sa.Column("wins", sa.BigInteger, nullable=False),
        sa.Column("score_sum", sa.BigInteger, nullable=False),
        sa.Column("duration_ms_sum", sa.BigInteger, nullable=False),
        sa.Column("win_ppm", sa.Integer, nullable=False),
        sa.Column("loss_ppm", sa.Integer, nullable=False),
        sa.Column("neg_plays", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_deal_stats_hardest", "deal_stats", ["preset", "win_ppm", "neg_plays", "deal_id"])
    op.create_index("ix_deal_stats_easiest", "deal_stats", ["preset", "loss_ppm", "neg_plays", "deal_id"])


def downgrade() -> None:
    op.drop_index("ix_deal_stats_easiest", "deal_stats")
    op.drop_index("ix_deal_stats_hardest", "deal_stats")
    op.drop_table("deal_stats")
    op.drop_index("ix_board_entries_rank", "board_entries")
    op.drop_table("board_entries")
    op.drop_index("ix_records_export", "records")
    op.drop_index("ix_records_player_kind", "records")
    op.drop_index("ix_records_player", "records")
    op.drop_table("records")
