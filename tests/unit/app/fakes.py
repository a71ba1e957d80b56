"""In-memory stand-ins for the storage ports: a repository with the same unique constraints, and a clock."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from types import TracebackType

from golf.app.ports import AlreadyStored, DuplicateMove
from golf.app.records import DealRecord, GameRecord, HintRecord, MoveRecord, RoundRecord, Verdict


@dataclass
class PoolRow:
    id: int
    preset: str
    difficulty: str
    deal_id: str
    uses: int = 0


@dataclass
class Tables:
    deals: dict[str, DealRecord] = field(default_factory=dict)
    games: dict[str, GameRecord] = field(default_factory=dict)
    moves: list[MoveRecord] = field(default_factory=list)
    hints: list[HintRecord] = field(default_factory=list)
    rounds: dict[str, RoundRecord] = field(default_factory=dict)
    pool: list[PoolRow] = field(default_factory=list)
    daily: dict[tuple[str, str], str] = field(default_factory=dict)


class FakeRepository:
    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_deal(self, deal: DealRecord) -> None:
        self.t.deals[deal.id] = deal

    async def get_deal(self, deal_id: str) -> DealRecord | None:
        return self.t.deals.get(deal_id)

    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]:
        return {i: self.t.deals[i] for i in deal_ids if i in self.t.deals}

    async def save_verdict(self, deal_id: str, verdict: Verdict) -> None:
        self.t.deals[deal_id] = replace(self.t.deals[deal_id], verdict=verdict)

    async def add_game(self, game: GameRecord) -> None:
        if game.round_id is not None and any(
            (g.round_id, g.hole) == (game.round_id, game.hole) for g in self.t.games.values()
        ):
            raise AlreadyStored("uq_games_round_hole")
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

    async def record_change(
        self, entry: MoveRecord, game: GameRecord, expected_version: int, undo_of: int | None
    ) -> int | None:
        for m in self.t.moves:
            if m.game_id == entry.game_id and m.idempotency_key == entry.idempotency_key:
                raise DuplicateMove(key_taken=True)
            if m.game_id == entry.game_id and m.seq == entry.seq:
                raise DuplicateMove(key_taken=False)
        current = self.t.games.get(game.id)
        if current is None or current.version != expected_version:
            return None
        self.t.moves.append(entry)
        if undo_of is not None:
            self.t.moves = [
                replace(m, undone_by=entry.seq) if (m.game_id, m.seq) == (entry.game_id, undo_of) else m
                for m in self.t.moves
            ]
        self.t.games[game.id] = replace(copy.deepcopy(game), hints_used=current.hints_used)
        return current.hints_used

    async def add_hint(self, hint: HintRecord) -> None:
        if await self.find_hint(hint.game_id, hint.idempotency_key):
            raise AlreadyStored("uq_hints_game_key")
        self.t.hints.append(hint)
        self.t.games[hint.game_id].hints_used += 1

    async def find_hint(self, game_id: str, idempotency_key: str) -> HintRecord | None:
        return next((h for h in self.t.hints if (h.game_id, h.idempotency_key) == (game_id, idempotency_key)), None)

    async def add_round(self, round_: RoundRecord) -> None:
        self.t.rounds[round_.id] = round_

    async def get_round(self, round_id: str) -> RoundRecord | None:
        return self.t.rounds.get(round_id)

    async def round_games(self, round_id: str) -> list[GameRecord]:
        games = [g for g in self.t.games.values() if g.round_id == round_id]
        return [copy.deepcopy(g) for g in sorted(games, key=lambda g: g.hole or 0)]

    async def pool_add(self, preset: str, difficulty: str, deal_id: str) -> None:
        self.t.pool.append(PoolRow(len(self.t.pool) + 1, preset, difficulty, deal_id))

    async def pool_take(self, preset: str, difficulty: str | None) -> str | None:
        rows = [r for r in self.t.pool if r.preset == preset and difficulty in (None, r.difficulty)]
        if not rows:
            return None
        row = min(rows, key=lambda r: (r.uses, r.id))
        row.uses += 1
        return row.deal_id

    async def pool_counts(self, preset: str, difficulty: str) -> tuple[int, int]:
        rows = [r for r in self.t.pool if (r.preset, r.difficulty) == (preset, difficulty)]
        return sum(1 for r in rows if r.uses == 0), len(rows)

    async def pool_evict(self, preset: str, difficulty: str) -> None:
        rows = [r for r in self.t.pool if (r.preset, r.difficulty) == (preset, difficulty) and r.uses > 0]
        if rows:
            self.t.pool.remove(max(rows, key=lambda r: (r.uses, -r.id)))

    async def daily_get(self, day: str, preset: str) -> str | None:
        return self.t.daily.get((day, preset))

    async def daily_add(self, day: str, preset: str, deal_id: str) -> None:
        if (day, preset) in self.t.daily:
            raise AlreadyStored("daily_deals_pkey")
        self.t.daily[(day, preset)] = deal_id


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
