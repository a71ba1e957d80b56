"""The tables. Changing them needs an Alembic migration in ``migrations/versions`` (a test compares the two)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Column, DateTime, Float, Index, Integer, Text, UniqueConstraint, false, text
from sqlmodel import Field, SQLModel


def _when(nullable: bool = False) -> Column[datetime]:
    return Column(DateTime(timezone=True), nullable=nullable)


# Partial unique indexes of ``games``, written so both dialects read them alike (SQLite stores booleans as 0/1,
# so a bare ``holds_deal`` and ``NOT practice`` are true and false there too). Migration 0004 uses the same text.
GAMES_DEAL_IN_PLAY_WHERE = "status = 'in_progress' AND holds_deal"
"""A deal held by a game has at most one game in progress."""
GAMES_SCORED_WHERE = "NOT practice AND owner_id <> 'legacy'"
"""A player has one scored (not practice) game per deal; games stored before players existed are exempt."""
GAMES_RANKED_IN_PLAY_WHERE = "status = 'in_progress' AND NOT practice"
"""The ranked games in progress: while a deal has one, its stock is shown to nobody else (migration 0010)."""


def _partial(where: str) -> dict[str, Any]:
    return {"sqlite_where": text(where), "postgresql_where": text(where)}


class PlayerRow(SQLModel, table=True):
    """A player: a guest (issuer ``golf``, no subject) or a portal's player (its issuer and ``sub`` claim)."""

    __tablename__ = "players"
    __table_args__ = (UniqueConstraint("issuer", "subject", name="uq_players_issuer_subject"),)

    id: str = Field(primary_key=True, max_length=36)
    display_name: str = Field(max_length=64)
    created_at: datetime = Field(sa_column=_when())
    issuer: str = Field(max_length=255)
    subject: str | None = Field(default=None, max_length=255, nullable=True)


class RefreshTokenRow(SQLModel, table=True):
    """A refresh token, by the SHA-256 (hex) of its text only."""

    __tablename__ = "refresh_tokens"
    __table_args__ = (UniqueConstraint("token_hash", name="uq_refresh_tokens_hash"),)

    id: str = Field(primary_key=True, max_length=36)
    player_id: str = Field(foreign_key="players.id", index=True, max_length=36)
    token_hash: str = Field(max_length=64)
    created_at: datetime = Field(sa_column=_when())
    expires_at: datetime = Field(sa_column=_when())
    revoked_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))


class DealRow(SQLModel, table=True):
    __tablename__ = "deals"

    id: str = Field(primary_key=True, max_length=36)
    preset: str = Field(max_length=64)
    preset_version: int
    rules: str = Field(sa_column=Column(Text, nullable=False))
    seed: str = Field(max_length=160)
    algorithm: str = Field(max_length=32)
    commitment: str = Field(max_length=64)
    layout: str = Field(sa_column=Column(Text, nullable=False))
    pysol_number: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    created_at: datetime = Field(sa_column=_when())
    # The solver's verdict, once known: winnable or not, a winning line (move codes), the fewest cards left.
    winnable: bool | None = Field(default=None, nullable=True)
    solution: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    fewest_left: int | None = Field(default=None, nullable=True)
    difficulty: str | None = Field(default=None, max_length=16, nullable=True)
    difficulty_score: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))
    # Who chose the seed: server (secret until dealt), client or pysol (public by nature).
    seed_source: str = Field(max_length=16)
    # When it stops being dealt as a fresh game (its day's end, its leaving the pool); NULL: never (migration 0010).
    closed_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))


class RoundRow(SQLModel, table=True):
    __tablename__ = "rounds"
    __table_args__ = (Index("ix_rounds_owner_created", "owner_id", "created_at", "id"),)

    id: str = Field(primary_key=True, max_length=36)
    preset: str = Field(max_length=64)
    rules: str = Field(sa_column=Column(Text, nullable=False))
    holes: int
    par: int
    winnable_only: bool
    difficulty: str | None = Field(default=None, max_length=16, nullable=True)
    created_at: datetime = Field(sa_column=_when())
    owner_id: str = Field(max_length=36)


class GameRow(SQLModel, table=True):
    __tablename__ = "games"
    __table_args__ = (
        Index("ix_games_created_id", "created_at", "id"),
        UniqueConstraint("round_id", "hole", name="uq_games_round_hole"),
        Index("ix_games_owner_created", "owner_id", "created_at", "id"),
        Index("uq_games_deal_in_play", "deal_id", unique=True, **_partial(GAMES_DEAL_IN_PLAY_WHERE)),
        Index("uq_games_scored", "deal_id", "owner_id", unique=True, **_partial(GAMES_SCORED_WHERE)),
        Index("ix_games_deal_ranked_in_play", "deal_id", **_partial(GAMES_RANKED_IN_PLAY_WHERE)),
    )

    id: str = Field(primary_key=True, max_length=36)
    deal_id: str = Field(foreign_key="deals.id", index=True, max_length=36)
    version: int
    status: str = Field(max_length=16)
    score: int
    line: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(sa_column=_when())
    updated_at: datetime = Field(sa_column=_when())
    finished_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))
    hints_used: int = Field(default=0)
    undos_used: int = Field(default=0)
    round_id: str | None = Field(default=None, foreign_key="rounds.id", max_length=36, nullable=True)
    hole: int | None = Field(default=None, nullable=True)
    owner_id: str = Field(max_length=36)
    practice: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    holds_deal: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    autoplay_assists: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    stock_seen: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    """An undo took back a stock draw: the game counts for no board (``GameRecord.stock_seen``)."""


class MoveRow(SQLModel, table=True):
    """The append-only action log. The unique constraints, not Python checks, stop an entry being stored twice.

    ``code`` is a move (``3:AH``, ``T:5C``), an undo (``U``) or an AutoPlay run (``A:3:AH+5:2C``).
    """

    __tablename__ = "moves"
    __table_args__ = (
        UniqueConstraint("game_id", "seq", name="uq_moves_game_seq"),
        UniqueConstraint("game_id", "idempotency_key", name="uq_moves_game_key"),
    )

    # SQLite autoincrements only an INTEGER primary key, PostgreSQL gets a BIGINT.
    id: int | None = Field(
        default=None,
        sa_column=Column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    )
    game_id: str = Field(foreign_key="games.id", max_length=36)
    seq: int
    code: str = Field(sa_column=Column(Text, nullable=False))
    idempotency_key: str = Field(max_length=128)
    created_at: datetime = Field(sa_column=_when())
    undone_by: int | None = Field(default=None, nullable=True)


class HintRow(SQLModel, table=True):
    __tablename__ = "hints"
    __table_args__ = (UniqueConstraint("game_id", "idempotency_key", name="uq_hints_game_key"),)

    id: int | None = Field(
        default=None,
        sa_column=Column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    )
    game_id: str = Field(foreign_key="games.id", max_length=36)
    idempotency_key: str = Field(max_length=128)
    code: str = Field(max_length=16)
    created_at: datetime = Field(sa_column=_when())


class DealPoolRow(SQLModel, table=True):
    """Solved, winnable deals ready to be dealt, per preset and difficulty. The least dealt goes first; a deal
    is dealt again only when no fresh one is left, and the most dealt make way for new ones."""

    __tablename__ = "deal_pool"
    __table_args__ = (Index("ix_deal_pool_take", "preset", "difficulty", "uses", "id"),)

    id: int | None = Field(
        default=None,
        sa_column=Column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    )
    preset: str = Field(max_length=64)
    difficulty: str = Field(max_length=16)
    deal_id: str = Field(foreign_key="deals.id", unique=True, max_length=36)
    uses: int = Field(default=0, sa_column_kwargs={"server_default": "0"})


class DailyDealRow(SQLModel, table=True):
    """One deal per UTC day and preset, the same for every player."""

    __tablename__ = "daily_deals"
    __table_args__ = (Index("ix_daily_deals_deal", "deal_id"),)

    day: str = Field(primary_key=True, max_length=10)
    preset: str = Field(primary_key=True, max_length=64)
    deal_id: str = Field(foreign_key="deals.id", max_length=36)


# Partial indexes of the card Golf tables (migration 0005 uses the same text).
CARD_GOLF_TABLES_CODE_WHERE = "join_code IS NOT NULL AND status <> 'over'"
"""A join code opens one table at a time: a code may be used again once its table's match is over."""
CARD_GOLF_TABLES_OPEN_WHERE = "status = 'seating' AND listed"
"""The listed tables still seating players: what the list of open tables scans."""
CARD_GOLF_ENTRIES_KEY_WHERE = "idempotency_key IS NOT NULL"
CARD_GOLF_TABLES_DUE_WHERE = "due_at IS NOT NULL"
"""The tables with work due at a time (migration 0006): what the table clock scans, oldest due first."""


class CardGolfTableRow(SQLModel, table=True):
    """A live card Golf table: its options (``golf.app.tables.records`` format), match seed and where its log
    stands. ``version`` counts the entries of its log; ``status``, ``preset``, ``listed`` and ``join_code`` repeat
    what the options and the log say, for queries."""

    __tablename__ = "card_golf_tables"
    __table_args__ = (
        Index("uq_card_golf_tables_join_code", "join_code", unique=True, **_partial(CARD_GOLF_TABLES_CODE_WHERE)),
        Index("ix_card_golf_tables_open", "preset", "created_at", "id", **_partial(CARD_GOLF_TABLES_OPEN_WHERE)),
        Index("ix_card_golf_tables_due", "due_at", **_partial(CARD_GOLF_TABLES_DUE_WHERE)),
    )

    id: str = Field(primary_key=True, max_length=36)
    options: str = Field(sa_column=Column(Text, nullable=False))
    seed: str = Field(max_length=160)
    preset: str = Field(max_length=64)
    join_code: str | None = Field(default=None, max_length=16, nullable=True)
    listed: bool
    owner_id: str = Field(max_length=36)
    created_at: datetime = Field(sa_column=_when())
    version: int
    status: str = Field(max_length=16)
    # Migration 0006: when work falls due by time (a turn clock, a paced bot, quick play's autofill; NULL: none),
    # which process holds it (``lease_owner``) and until when, and whether quick play opened the table.
    due_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))
    lease_owner: str | None = Field(default=None, max_length=64, nullable=True)
    lease_until: datetime | None = Field(default=None, sa_column=_when(nullable=True))
    quick_play: bool = Field(default=False, sa_column_kwargs={"server_default": false()})


class CardGolfTableEntryRow(SQLModel, table=True):
    """The append-only log of a table, one row per entry. The primary key (table, seq) settles races between
    writers; the partial unique index stops a player's idempotency key being stored twice at a table (each
    player's keys are their own, migration 0011: another player's same key is another command)."""

    __tablename__ = "card_golf_table_entries"
    __table_args__ = (
        Index(
            "uq_card_golf_table_entries_key",
            "table_id",
            "player_id",
            "idempotency_key",
            unique=True,
            **_partial(CARD_GOLF_ENTRIES_KEY_WHERE),
        ),
    )

    table_id: str = Field(foreign_key="card_golf_tables.id", primary_key=True, max_length=36)
    seq: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    idempotency_key: str | None = Field(default=None, max_length=128, nullable=True)
    player_id: str | None = Field(default=None, max_length=36, nullable=True)
    """Beside ``idempotency_key`` (migration 0011): the player who sent the command, whose key it is."""
    batch: int
    """On a command's first entry, the entries the command wrote; 0 on its other entries."""
    entry: str = Field(sa_column=Column(Text, nullable=False))
    seat: int | None = Field(default=None, nullable=True)
    created_at: datetime = Field(sa_column=_when())


class CardGolfQuickPlayRow(SQLModel, table=True):
    """A quick play request (migration 0006): the table a player's idempotency key seated them at, so a retry
    answers with the same table (the key may have joined any table, or opened one)."""

    __tablename__ = "card_golf_quick_plays"

    player_id: str = Field(primary_key=True, max_length=36)
    idempotency_key: str = Field(primary_key=True, max_length=128)
    table_id: str = Field(foreign_key="card_golf_tables.id", max_length=36)
    created_at: datetime = Field(sa_column=_when())


class WebhookRow(SQLModel, table=True):
    """A webhook (``golf.app.webhooks``): where to POST which events, for one player (``coverage`` ``player``) or
    every player of an issuer (``issuer``). ``secret`` signs the deliveries; ``events`` is a comma-separated list.
    A deleted webhook keeps its row (``deleted_at``), so its deliveries and its idempotency key stay resolvable."""

    __tablename__ = "webhooks"
    __table_args__ = (
        Index("ix_webhooks_player", "player_id", "created_at", "id"),
        Index("ix_webhooks_issuer", "issuer", "created_at", "id"),
    )

    id: str = Field(primary_key=True, max_length=36)
    url: str = Field(sa_column=Column(Text, nullable=False))
    secret: str = Field(max_length=128)
    events: str = Field(max_length=64)
    coverage: str = Field(max_length=16)
    issuer: str = Field(max_length=255)
    player_id: str | None = Field(default=None, max_length=36, nullable=True)
    created_by: str = Field(max_length=36)
    created_at: datetime = Field(sa_column=_when())
    deleted_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))


class WebhookDeliveryRow(SQLModel, table=True):
    """The webhook outbox: one event for one webhook, written in the transaction of the move that made it, and
    claimed by a sender when ``next_attempt_at`` comes (a claim moves it past the attempt: the lease). The unique
    index stops an event being queued twice for a webhook."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint(
            "webhook_id", "table_id", "table_version", "event", "seat", name="uq_webhook_deliveries_event"
        ),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_finished", "finished_at"),
    )

    id: str = Field(primary_key=True, max_length=36)
    webhook_id: str = Field(foreign_key="webhooks.id", max_length=36)
    event: str = Field(max_length=16)
    table_id: str = Field(max_length=36)
    seat: int
    player_id: str = Field(max_length=36)
    table_version: int
    event_time: datetime = Field(sa_column=_when())
    status: str = Field(max_length=16)
    attempts: int = Field(default=0)
    next_attempt_at: datetime = Field(sa_column=_when())
    claim_token: str | None = Field(default=None, max_length=36, nullable=True)
    last_error: str | None = Field(default=None, max_length=255, nullable=True)
    finished_at: datetime | None = Field(default=None, sa_column=_when(nullable=True))


RECORDS_LEAD_WHERE = "lead"
"""One row per game or match (migration 0008): what an export lists once."""


class RecordRow(SQLModel, table=True):
    """One player's finished solitaire game (``kind`` ``game``), round (``round``) or card Golf match (``match``),
    written with the move that finished it (``golf.app.recording``). The player's rows in ``id`` order are in the
    order they were committed (the writer holds the player's row lock): history pages never skip one."""

    __tablename__ = "records"
    __table_args__ = (
        UniqueConstraint("kind", "record_id", "player_id", name="uq_records_record_player"),
        Index("ix_records_player", "player_id", "id"),
        Index("ix_records_player_kind", "player_id", "kind", "id"),
        Index("ix_records_export", "finished_at", "id", **_partial(RECORDS_LEAD_WHERE)),
    )

    id: int | None = Field(
        default=None,
        sa_column=Column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    )
    player_id: str = Field(max_length=36)
    issuer: str = Field(max_length=255)
    kind: str = Field(max_length=8)
    record_id: str = Field(max_length=36)
    lead: bool
    preset: str = Field(max_length=64)
    result: str = Field(max_length=8)
    score: int
    par: int | None = Field(default=None, nullable=True)
    place: int | None = Field(default=None, nullable=True)
    players: int | None = Field(default=None, nullable=True)
    holes: int
    moves: int
    hints: int
    undos: int
    duration_ms: int = Field(sa_column=Column(BigInteger, nullable=False))
    started_at: datetime = Field(sa_column=_when())
    finished_at: datetime = Field(sa_column=_when())
    deal_id: str | None = Field(default=None, max_length=36, nullable=True)
    rated: bool
    unranked: str | None = Field(default=None, max_length=16, nullable=True)
    """Why a game or round that is not ``rated`` counts for no board (``golf.app.records.Unranked``)."""


class BoardEntryRow(SQLModel, table=True):
    """A player's place on a leaderboard (``golf.app.boards``): the board's order is ``(k1, k2, k3, reached_at,
    player_id)`` ascending; the other columns are what the entry shows. ``qualifier`` is what a minimum filters
    on (holes played, on the points-per-hole board)."""

    __tablename__ = "board_entries"
    __table_args__ = (Index("ix_board_entries_rank", "board", "k1", "k2", "k3", "reached_at", "player_id"),)

    board: str = Field(primary_key=True, max_length=160)
    player_id: str = Field(primary_key=True, max_length=36)
    issuer: str = Field(max_length=255)
    k1: int = Field(sa_column=Column(BigInteger, nullable=False))
    k2: int = Field(sa_column=Column(BigInteger, nullable=False))
    k3: int = Field(sa_column=Column(BigInteger, nullable=False))
    reached_at: datetime = Field(sa_column=_when())
    qualifier: int
    record_id: str | None = Field(default=None, max_length=36, nullable=True)
    score: int
    duration_ms: int = Field(sa_column=Column(BigInteger, nullable=False))
    assists: int
    matches: int
    wins: int
    holes: int
    points: int
    mu: float = Field(sa_column=Column(Float, nullable=False))
    sigma: float = Field(sa_column=Column(Float, nullable=False))


class DealStatsRow(SQLModel, table=True):
    """Players' finished games on a solitaire deal, summed, and the keys of the hardest and easiest lists (wins
    and losses per million plays, then minus the plays: each list is one ascending index scan)."""

    __tablename__ = "deal_stats"
    __table_args__ = (
        Index("ix_deal_stats_hardest", "preset", "win_ppm", "neg_plays", "deal_id"),
        Index("ix_deal_stats_easiest", "preset", "loss_ppm", "neg_plays", "deal_id"),
    )

    deal_id: str = Field(primary_key=True, max_length=36)
    preset: str = Field(max_length=64)
    plays: int = Field(sa_column=Column(BigInteger, nullable=False))
    wins: int = Field(sa_column=Column(BigInteger, nullable=False))
    score_sum: int = Field(sa_column=Column(BigInteger, nullable=False))
    duration_ms_sum: int = Field(sa_column=Column(BigInteger, nullable=False))
    win_ppm: int
    loss_ppm: int
    neg_plays: int = Field(sa_column=Column(BigInteger, nullable=False))


metadata = SQLModel.metadata
