"""The SQL repository and unit of work, on the drivers of ``drivers.py`` (one transaction per unit of work)."""

from __future__ import annotations

from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from golf.adapters.db.drivers import Driver, Row, Transaction, UniqueViolation, open_driver
from golf.app.ports import DuplicateMove
from golf.app.records import DealRecord, GameRecord, MoveRecord, layout_from_text, layout_to_text
from golf.engine.solitaire.rules import SolitaireRules

_DEAL_COLUMNS = "id, preset, preset_version, rules, seed, algorithm, commitment, layout, pysol_number, created_at"
_GAME_COLUMNS = "id, deal_id, version, status, score, line, created_at, updated_at, finished_at"
_MOVE_COLUMNS = "game_id, seq, code, idempotency_key, created_at"


def _when(value: Any) -> datetime:
    # asyncpg gives aware datetimes; SQLite gives the naive UTC text we stored.
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _deal(row: Row) -> DealRecord:
    return DealRecord(
        id=row["id"],
        preset=row["preset"],
        preset_version=row["preset_version"],
        rules=SolitaireRules.from_canonical(row["rules"]),
        seed=row["seed"],
        algorithm=row["algorithm"],
        commitment=row["commitment"],
        layout=layout_from_text(row["layout"]),
        created_at=_when(row["created_at"]),
        pysol_number=row["pysol_number"],
    )


def _game(row: Row) -> GameRecord:
    line = row["line"]
    return GameRecord(
        id=row["id"],
        deal_id=row["deal_id"],
        version=row["version"],
        status=row["status"],
        score=row["score"],
        line=line.split(",") if line else [],
        created_at=_when(row["created_at"]),
        updated_at=_when(row["updated_at"]),
        finished_at=_when(row["finished_at"]) if row["finished_at"] is not None else None,
    )


def _move(row: Row) -> MoveRecord:
    return MoveRecord(row["game_id"], row["seq"], row["code"], row["idempotency_key"], _when(row["created_at"]))


class SqlRepository:
    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    async def add_deal(self, deal: DealRecord) -> None:
        await self.tx.execute(
            f"INSERT INTO deals ({_DEAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            deal.id,
            deal.preset,
            deal.preset_version,
            deal.rules.canonical(),
            deal.seed,
            deal.algorithm,
            deal.commitment,
            layout_to_text(deal.layout),
            deal.pysol_number,
            deal.created_at,
        )

    async def get_deal(self, deal_id: str) -> DealRecord | None:
        row = await self.tx.fetchone(f"SELECT {_DEAL_COLUMNS} FROM deals WHERE id = ?", deal_id)
        return _deal(row) if row else None

    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]:
        out = {}
        for deal_id in deal_ids:
            deal = await self.get_deal(deal_id)
            if deal is not None:
                out[deal_id] = deal
        return out

    async def add_game(self, game: GameRecord) -> None:
        await self.tx.execute(
            f"INSERT INTO games ({_GAME_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            game.id,
            game.deal_id,
            game.version,
            game.status,
            game.score,
            ",".join(game.line),
            game.created_at,
            game.updated_at,
            game.finished_at,
        )

    async def get_game(self, game_id: str) -> GameRecord | None:
        row = await self.tx.fetchone(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", game_id)
        return _game(row) if row else None

    async def list_games(self, limit: int, after: tuple[datetime, str] | None) -> list[GameRecord]:
        order = "ORDER BY created_at DESC, id DESC LIMIT ?"
        if after is None:
            rows = await self.tx.fetchall(f"SELECT {_GAME_COLUMNS} FROM games {order}", limit)
        else:
            # Keyset paging: the rows strictly after the last one seen, in (created_at, id) descending order.
            when, game_id = after
            rows = await self.tx.fetchall(
                f"SELECT {_GAME_COLUMNS} FROM games WHERE created_at < ? OR (created_at = ? AND id < ?) {order}",
                when,
                when,
                game_id,
                limit,
            )
        return [_game(r) for r in rows]

    async def get_moves(self, game_id: str) -> list[MoveRecord]:
        rows = await self.tx.fetchall(f"SELECT {_MOVE_COLUMNS} FROM moves WHERE game_id = ? ORDER BY seq", game_id)
        return [_move(r) for r in rows]

    async def find_move(self, game_id: str, idempotency_key: str) -> MoveRecord | None:
        row = await self.tx.fetchone(
            f"SELECT {_MOVE_COLUMNS} FROM moves WHERE game_id = ? AND idempotency_key = ?", game_id, idempotency_key
        )
        return _move(row) if row else None

    async def append_move(self, move: MoveRecord) -> None:
        try:
            await self.tx.execute(
                f"INSERT INTO moves ({_MOVE_COLUMNS}) VALUES (?, ?, ?, ?, ?)",
                move.game_id,
                move.seq,
                move.code,
                move.idempotency_key,
                move.created_at,
            )
        except UniqueViolation as err:
            key_taken = "uq_moves_game_key" in err.constraint or "moves.idempotency_key" in err.constraint
            raise DuplicateMove(key_taken=key_taken) from err

    async def save_game(self, game: GameRecord, expected_version: int) -> bool:
        changed = await self.tx.execute(
            "UPDATE games SET version = ?, status = ?, score = ?, line = ?, updated_at = ?, finished_at = ? "
            "WHERE id = ? AND version = ?",
            game.version,
            game.status,
            game.score,
            ",".join(game.line),
            game.updated_at,
            game.finished_at,
            game.id,
            expected_version,
        )
        return changed == 1


class SqlUnitOfWork:
    """One transaction. Leaving the block without ``commit`` rolls it back."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self._done = False

    async def __aenter__(self) -> SqlUnitOfWork:
        self._tx, self._token = await self._driver.begin()
        self._repo = SqlRepository(self._tx)
        return self

    @property
    def repo(self) -> SqlRepository:
        return self._repo

    async def commit(self) -> None:
        await self._tx.commit()
        self._done = True

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if not self._done:
                await self._tx.rollback()
        finally:
            await self._driver.release(self._token)


class Database:
    """A database by plain URL, and a factory of units of work on it."""

    def __init__(self, url: str, pool_size: int = 10, sqlite_synchronous: str = "FULL") -> None:
        self.url = url
        self.driver = open_driver(url, pool_size, sqlite_synchronous)

    def __call__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.driver)

    async def ping(self) -> None:
        await self.driver.ping()

    async def dispose(self) -> None:
        await self.driver.close()
