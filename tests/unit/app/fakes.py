"""In-memory stand-ins for the storage ports: a repository with the same unique constraints, and a clock."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import TracebackType

from golf.app.ports import DuplicateMove
from golf.app.records import DealRecord, GameRecord, MoveRecord


@dataclass
class Tables:
    deals: dict[str, DealRecord] = field(default_factory=dict)
    games: dict[str, GameRecord] = field(default_factory=dict)
    moves: list[MoveRecord] = field(default_factory=list)


class FakeRepository:
    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_deal(self, deal: DealRecord) -> None:
        self.t.deals[deal.id] = deal

    async def get_deal(self, deal_id: str) -> DealRecord | None:
        return self.t.deals.get(deal_id)

    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]:
        return {i: self.t.deals[i] for i in deal_ids if i in self.t.deals}

    async def add_game(self, game: GameRecord) -> None:
        self.t.games[game.id] = copy.deepcopy(game)

    async def get_game(self, game_id: str) -> GameRecord | None:
        game = self.t.games.get(game_id)
        return copy.deepcopy(game) if game else None

    async def list_games(self, limit: int, after: tuple[datetime, str] | None) -> list[GameRecord]:
        games = sorted(self.t.games.values(), key=lambda g: (g.created_at, g.id), reverse=True)
        if after is not None:
            games = [g for g in games if (g.created_at, g.id) < after]
        return [copy.deepcopy(g) for g in games[:limit]]

    async def get_moves(self, game_id: str) -> list[MoveRecord]:
        return sorted((m for m in self.t.moves if m.game_id == game_id), key=lambda m: m.seq)

    async def find_move(self, game_id: str, idempotency_key: str) -> MoveRecord | None:
        return next((m for m in self.t.moves if (m.game_id, m.idempotency_key) == (game_id, idempotency_key)), None)

    async def append_move(self, move: MoveRecord) -> None:
        for m in self.t.moves:
            if m.game_id == move.game_id and m.idempotency_key == move.idempotency_key:
                raise DuplicateMove(key_taken=True)
            if m.game_id == move.game_id and m.seq == move.seq:
                raise DuplicateMove(key_taken=False)
        self.t.moves.append(move)

    async def save_game(self, game: GameRecord, expected_version: int) -> bool:
        current = self.t.games.get(game.id)
        if current is None or current.version != expected_version:
            return False
        self.t.games[game.id] = copy.deepcopy(game)
        return True


class FakeUnitOfWork:
    """Works on a copy of the tables; commit publishes the copy, anything else throws it away."""

    def __init__(self, store: FakeStore) -> None:
        self.store = store

    async def __aenter__(self) -> FakeUnitOfWork:
        self.tables = copy.deepcopy(self.store.tables)
        self._repo = FakeRepository(self.tables)
        return self

    @property
    def repo(self) -> FakeRepository:
        return self._repo

    async def commit(self) -> None:
        self.store.tables = self.tables
        self.store.commits += 1

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return None


class FakeStore:
    def __init__(self) -> None:
        self.tables = Tables()
        self.commits = 0

    def __call__(self) -> FakeUnitOfWork:
        return FakeUnitOfWork(self)


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)
