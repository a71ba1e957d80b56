"""The SQL unit of work and repository: SQLAlchemy Core statements over the SQLModel tables, async drivers."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from sqlalchemy import Table, and_, event, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

from golf.adapters.db.tables import metadata
from golf.adapters.db.urls import async_url, is_sqlite
from golf.app.ports import DuplicateMove
from golf.app.records import DealRecord, GameRecord, MoveRecord, layout_from_text, layout_to_text
from golf.engine.solitaire.rules import SolitaireRules

DEALS: Table = metadata.tables["deals"]
GAMES: Table = metadata.tables["games"]
MOVES: Table = metadata.tables["moves"]


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything we store is UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _deal(row: Any) -> DealRecord:
    return DealRecord(
        id=row.id,
        preset=row.preset,
        preset_version=row.preset_version,
        rules=SolitaireRules.from_canonical(row.rules),
        seed=row.seed,
        algorithm=row.algorithm,
        commitment=row.commitment,
        layout=layout_from_text(row.layout),
        created_at=_utc(row.created_at),
        pysol_number=row.pysol_number,
    )


def _game(row: Any) -> GameRecord:
    return GameRecord(
        id=row.id,
        deal_id=row.deal_id,
        version=row.version,
        status=row.status,
        score=row.score,
        line=row.line.split(",") if row.line else [],
        created_at=_utc(row.created_at),
        updated_at=_utc(row.updated_at),
        finished_at=_utc(row.finished_at) if row.finished_at else None,
    )


def _move(row: Any) -> MoveRecord:
    return MoveRecord(row.game_id, row.seq, row.code, row.idempotency_key, _utc(row.created_at))


class SqlRepository:
    def __init__(self, conn: AsyncConnection) -> None:
        self.conn = conn

    async def add_deal(self, deal: DealRecord) -> None:
        await self.conn.execute(
            insert(DEALS).values(
                id=deal.id,
                preset=deal.preset,
                preset_version=deal.preset_version,
                rules=deal.rules.canonical(),
                seed=deal.seed,
                algorithm=deal.algorithm,
                commitment=deal.commitment,
                layout=layout_to_text(deal.layout),
                pysol_number=deal.pysol_number,
                created_at=deal.created_at,
            )
        )

    async def get_deal(self, deal_id: str) -> DealRecord | None:
        row = (await self.conn.execute(select(DEALS).where(DEALS.c.id == deal_id))).first()
        return _deal(row) if row else None

    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]:
        if not deal_ids:
            return {}
        rows = await self.conn.execute(select(DEALS).where(DEALS.c.id.in_(deal_ids)))
        return {row.id: _deal(row) for row in rows}

    async def add_game(self, game: GameRecord) -> None:
        await self.conn.execute(insert(GAMES).values(**self._game_values(game), id=game.id, deal_id=game.deal_id))

    @staticmethod
    def _game_values(game: GameRecord) -> dict[str, Any]:
        return {
            "version": game.version,
            "status": game.status,
            "score": game.score,
            "line": ",".join(game.line),
            "created_at": game.created_at,
            "updated_at": game.updated_at,
            "finished_at": game.finished_at,
        }

    async def get_game(self, game_id: str) -> GameRecord | None:
        row = (await self.conn.execute(select(GAMES).where(GAMES.c.id == game_id))).first()
        return _game(row) if row else None

    async def list_games(self, limit: int, after: tuple[datetime, str] | None) -> list[GameRecord]:
        query = select(GAMES).order_by(GAMES.c.created_at.desc(), GAMES.c.id.desc()).limit(limit)
        if after is not None:
            when, game_id = after
            # Keyset paging: rows strictly after the last one seen, in (created_at, id) descending order.
            query = query.where(or_(GAMES.c.created_at < when, and_(GAMES.c.created_at == when, GAMES.c.id < game_id)))
        return [_game(row) for row in await self.conn.execute(query)]

    async def get_moves(self, game_id: str) -> list[MoveRecord]:
        rows = await self.conn.execute(select(MOVES).where(MOVES.c.game_id == game_id).order_by(MOVES.c.seq))
        return [_move(row) for row in rows]

    async def find_move(self, game_id: str, idempotency_key: str) -> MoveRecord | None:
        row = (
            await self.conn.execute(
                select(MOVES).where(MOVES.c.game_id == game_id, MOVES.c.idempotency_key == idempotency_key)
            )
        ).first()
        return _move(row) if row else None

    async def append_move(self, move: MoveRecord) -> None:
        try:
            await self.conn.execute(
                insert(MOVES).values(
                    game_id=move.game_id,
                    seq=move.seq,
                    code=move.code,
                    idempotency_key=move.idempotency_key,
                    created_at=move.created_at,
                )
            )
        except IntegrityError as err:
            text = str(err.orig)
            key_taken = "uq_moves_game_key" in text or "moves.idempotency_key" in text
            raise DuplicateMove(key_taken=key_taken) from err

    async def save_game(self, game: GameRecord, expected_version: int) -> bool:
        result = await self.conn.execute(
            update(GAMES)
            .where(GAMES.c.id == game.id, GAMES.c.version == expected_version)
            .values(**self._game_values(game))
        )
        return bool(result.rowcount == 1)


class SqlUnitOfWork:
    """One transaction on one pooled connection. SQLite transactions run one at a time (single writer)."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._stack = contextlib.AsyncExitStack()
        self._committed = False

    async def __aenter__(self) -> SqlUnitOfWork:
        if self._db.write_lock is not None:
            await self._stack.enter_async_context(self._db.write_lock)
        conn = await self._stack.enter_async_context(self._db.engine.connect())
        self._tx = await conn.begin()
        self.repo = SqlRepository(conn)
        return self

    async def commit(self) -> None:
        await self._tx.commit()
        self._committed = True

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if not self._committed and self._tx.is_active:
                await self._tx.rollback()
        finally:
            await self._stack.aclose()


class Database:
    """The async engine for a plain URL, and a factory of units of work."""

    def __init__(self, url: str, pool_size: int = 10) -> None:
        self.url = url
        if is_sqlite(url):
            # One writer at a time is SQLite's model: serialise transactions here instead of meeting SQLITE_BUSY.
            self.engine: AsyncEngine = create_async_engine(async_url(url), pool_size=1, max_overflow=0)
            self.write_lock: asyncio.Lock | None = asyncio.Lock()
            event.listen(self.engine.sync_engine, "connect", _sqlite_pragmas)
        else:
            self.engine = create_async_engine(async_url(url), pool_size=pool_size, max_overflow=pool_size)
            self.write_lock = None

    def __call__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self)

    async def ping(self) -> None:
        async with self.engine.connect() as conn:
            await conn.exec_driver_sql("SELECT 1")

    async def dispose(self) -> None:
        await self.engine.dispose()


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
