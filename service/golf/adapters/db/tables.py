"""The tables. Changing them needs an Alembic migration in ``migrations/versions``."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, DateTime, Index, Integer, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


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
    created_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


class GameRow(SQLModel, table=True):
    __tablename__ = "games"
    __table_args__ = (Index("ix_games_created_id", "created_at", "id"),)

    id: str = Field(primary_key=True, max_length=36)
    deal_id: str = Field(foreign_key="deals.id", index=True, max_length=36)
    version: int
    status: str = Field(max_length=16)
    score: int
    line: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    updated_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))
    finished_at: datetime | None = Field(default=None, sa_column=Column(DateTime(timezone=True), nullable=True))


class MoveRow(SQLModel, table=True):
    """The append-only move log. The unique constraints, not Python checks, stop a move being stored twice."""

    __tablename__ = "moves"
    __table_args__ = (
        UniqueConstraint("game_id", "seq", name="uq_moves_game_seq"),
        UniqueConstraint("game_id", "idempotency_key", name="uq_moves_game_key"),
    )

    # SQLite autoincrements only an INTEGER primary key, PostgreSQL gets a BIGINT identity.
    id: int | None = Field(
        default=None,
        sa_column=Column(BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True),
    )
    game_id: str = Field(foreign_key="games.id", max_length=36)
    seq: int
    code: str = Field(max_length=16)
    idempotency_key: str = Field(max_length=128)
    created_at: datetime = Field(sa_column=Column(DateTime(timezone=True), nullable=False))


metadata = SQLModel.metadata
