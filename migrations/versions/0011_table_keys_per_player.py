"""A card Golf table's idempotency keys are each player's own: another player's same key is another command.

``card_golf_table_entries.player_id`` names, beside a command's ``idempotency_key``, the player who sent it; the
unique index of the keys becomes (table, player, key). Keys stored before are given the player who sent them, as
the log tells: a join is its player's; a bot seated, the match started or a bot taken out of its seat is the
creator's (only they may); a move, a resignation or a person leaving is the player at the seat (the commands take
the caller's own seat only). So a retry of a command stored before this migration still finds its answer.

Revision ID: 0011
Revises: 0010
Create Date: 2027-01-12
"""

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY_WHERE = "idempotency_key IS NOT NULL"  # tables.CARD_GOLF_ENTRIES_KEY_WHERE, copied
INDEX = "uq_card_golf_table_entries_key"


def _partial() -> dict[str, Any]:
    return {"sqlite_where": sa.text(KEY_WHERE), "postgresql_where": sa.text(KEY_WHERE)}


def _sender(entry: dict[str, Any], seats: dict[int, str | None], owner: str) -> str:
    """Who sent the command whose first entry is ``entry``; ``seats`` holds each seat's person (``None``: a bot)."""
    kind, seat = entry.get("type"), entry.get("seat")
    if kind == "join":
        return str(entry["player_id"])
    if kind in ("move", "resign", "leave") and isinstance(seat, int):
        person = seats.get(seat)
        if person is not None:
            return person
    return owner  # bots, the start, a bot taken out: the creator's commands


def _follow(entry: dict[str, Any], seats: dict[int, str | None]) -> None:
    """Keep ``seats`` as the log leaves them (who sits where; a resigned seat keeps its player)."""
    kind, seat = entry.get("type"), entry.get("seat")
    if not isinstance(seat, int):
        return
    if kind == "join":
        seats[seat] = str(entry["player_id"])
    elif kind == "bot":
        seats[seat] = None
    elif kind == "leave":
        seats.pop(seat, None)


def upgrade() -> None:
    with op.batch_alter_table("card_golf_table_entries") as batch:
        batch.add_column(sa.Column("player_id", sa.String(36), nullable=True))
    bind = op.get_bind()
    entries = sa.table(
        "card_golf_table_entries",
        sa.column("table_id", sa.String),
        sa.column("seq", sa.Integer),
        sa.column("player_id", sa.String),
    )
    keyed = sa.text(
        "SELECT e.table_id, e.seq, e.idempotency_key, e.entry, t.owner_id FROM card_golf_table_entries e"
        " JOIN card_golf_tables t ON t.id = e.table_id WHERE e.table_id IN"
        " (SELECT table_id FROM card_golf_table_entries WHERE idempotency_key IS NOT NULL)"
        " ORDER BY e.table_id, e.seq"
    )
    table_id: str | None = None
    seats: dict[int, str | None] = {}
    for row in bind.execute(keyed).all():
        if row.table_id != table_id:
            table_id, seats = row.table_id, {}
        entry = json.loads(row.entry)
        if row.idempotency_key is not None:
            sender = _sender(entry, seats, row.owner_id)
            where = (entries.c.table_id == row.table_id) & (entries.c.seq == row.seq)
            bind.execute(entries.update().where(where).values(player_id=sender))
        _follow(entry, seats)
    op.drop_index(INDEX, "card_golf_table_entries")
    op.create_index(
        INDEX, "card_golf_table_entries", ["table_id", "player_id", "idempotency_key"], unique=True, **_partial()
    )


def downgrade() -> None:
    # Back to one key per table: a key two players used is kept on its first use only.
    op.execute(
        "UPDATE card_golf_table_entries SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL AND EXISTS"
        " (SELECT 1 FROM card_golf_table_entries AS earlier WHERE earlier.table_id = card_golf_table_entries.table_id"
        " AND earlier.idempotency_key = card_golf_table_entries.idempotency_key"
        " AND earlier.seq < card_golf_table_entries.seq)"
    )
    op.drop_index(INDEX, "card_golf_table_entries")
    op.create_index(INDEX, "card_golf_table_entries", ["table_id", "idempotency_key"], unique=True, **_partial())
    with op.batch_alter_table("card_golf_table_entries") as batch:
        batch.drop_column("player_id")
