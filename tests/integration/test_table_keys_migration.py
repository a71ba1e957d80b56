"""Migration 0011 on SQLite and PostgreSQL: the idempotency keys a table's log held before it are given the player
who sent each command, so retries of those commands still find them, and each player's keys are their own after."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa
from alembic import command

from golf.adapters.db.migrate import alembic_config, upgrade
from golf.adapters.db.urls import sync_url

T0 = datetime(2027, 1, 1, 12, 0, tzinfo=UTC)
OWNER, ANN, BOB = (str(uuid.UUID(int=n)) for n in (1, 2, 3))
TABLE = str(uuid.UUID(int=99))

# (entry, key) in log order: what the commands of a table wrote before 0011 (bot turns and timeouts have no key).
LOG: list[tuple[dict[str, object], str | None]] = [
    ({"type": "join", "seat": 0, "player_id": ANN}, "ann-joins"),
    ({"type": "join", "seat": 1, "player_id": BOB}, "bob-joins"),
    ({"type": "bot", "seat": 2, "bot": "greedy"}, "bot"),
    ({"type": "leave", "seat": 2}, "bot-out"),  # the creator took the bot out
    ({"type": "leave", "seat": 1}, "bob-leaves"),
    ({"type": "join", "seat": 1, "player_id": BOB}, "bob-again"),
    ({"type": "bot", "seat": 2, "bot": "greedy"}, "bot-2"),
    ({"type": "start"}, "go"),
    ({"type": "move", "seat": 1, "move": "r0"}, "bob-move"),
    ({"type": "move", "seat": 2, "move": "r0"}, None),
    ({"type": "timeout", "seat": 0, "move": "r0"}, None),
    ({"type": "move", "seat": 0, "move": "r1"}, "ann-move"),
    ({"type": "resign", "seat": 1}, "bob-resigns"),
]
SENDERS = [ANN, BOB, OWNER, OWNER, BOB, BOB, OWNER, OWNER, BOB, None, None, ANN, BOB]


def _fill(conn: sa.Connection) -> None:
    conn.execute(
        sa.text(
            "INSERT INTO card_golf_tables (id, options, seed, preset, join_code, listed, owner_id, created_at,"
            " version, status) VALUES (:id, '{}', 'seed', 'six-card', NULL, true, :owner, :at, :v, 'playing')"
        ),
        {"id": TABLE, "owner": OWNER, "at": T0, "v": len(LOG)},
    )
    for seq, (entry, key) in enumerate(LOG, start=1):
        conn.execute(
            sa.text(
                "INSERT INTO card_golf_table_entries (table_id, seq, idempotency_key, batch, entry, seat, created_at)"
                " VALUES (:t, :s, :k, 1, :e, :seat, :at)"
            ),
            {"t": TABLE, "s": seq, "k": key, "e": json.dumps({"v": 1, **entry}), "seat": entry.get("seat"), "at": T0},
        )


def test_stored_keys_are_given_their_players_and_are_each_players_own_after(database_url: str) -> None:
    upgrade(database_url, "0010")
    engine = sa.create_engine(sync_url(database_url))
    try:
        with engine.begin() as conn:
            _fill(conn)
        upgrade(database_url)
        with engine.begin() as conn:
            rows = conn.execute(
                sa.text("SELECT player_id FROM card_golf_table_entries WHERE table_id = :t ORDER BY seq"), {"t": TABLE}
            ).all()
            assert [r.player_id for r in rows] == SENDERS
            # Another player may now use a key someone used; the same player may not use it twice.
            insert = sa.text(
                "INSERT INTO card_golf_table_entries (table_id, seq, idempotency_key, player_id, batch, entry,"
                " seat, created_at) VALUES (:t, :s, 'bob-move', :p, 1, '{}', NULL, :at)"
            )
            conn.execute(insert, {"t": TABLE, "s": 14, "p": ANN, "at": T0})
        with engine.begin() as conn, pytest.raises(sa.exc.IntegrityError):
            conn.execute(insert, {"t": TABLE, "s": 15, "p": BOB, "at": T0})
        # Back to one key per table: the key two players used stays on its first use only.
        command.downgrade(alembic_config(database_url), "0010")
        with engine.begin() as conn:
            keys = conn.execute(
                sa.text("SELECT idempotency_key FROM card_golf_table_entries WHERE table_id = :t ORDER BY seq"),
                {"t": TABLE},
            ).all()
        assert [k.idempotency_key for k in keys] == [key for _, key in LOG] + [None]
    finally:
        engine.dispose()
