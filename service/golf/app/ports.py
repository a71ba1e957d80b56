"""What the use cases need from the outside world. Adapters implement these; unit tests use fakes."""

from __future__ import annotations

from datetime import datetime
from types import TracebackType
from typing import Protocol

from golf.app.records import DealRecord, GameRecord, MoveRecord


class DuplicateMove(Exception):
    """The database refused a move: its sequence number or its idempotency key is taken."""

    def __init__(self, key_taken: bool) -> None:
        super().__init__("idempotency key taken" if key_taken else "sequence number taken")
        self.key_taken = key_taken


class SolitaireRepository(Protocol):
    async def add_deal(self, deal: DealRecord) -> None: ...
    async def get_deal(self, deal_id: str) -> DealRecord | None: ...
    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]: ...
    async def add_game(self, game: GameRecord) -> None: ...
    async def get_game(self, game_id: str) -> GameRecord | None: ...
    async def list_games(self, limit: int, after: tuple[datetime, str] | None) -> list[GameRecord]: ...
    async def get_moves(self, game_id: str) -> list[MoveRecord]: ...
    async def find_move(self, game_id: str, idempotency_key: str) -> MoveRecord | None: ...
    async def append_move(self, move: MoveRecord) -> None:
        """Add a log entry; raises ``DuplicateMove`` when (game, seq) or (game, key) exists."""
        ...

    async def save_game(self, game: GameRecord, expected_version: int) -> bool:
        """Write the game row if it is still at ``expected_version``; False if someone else moved it."""
        ...


class UnitOfWork(Protocol):
    """One transaction. Leaving the block without ``commit`` rolls back."""

    @property
    def repo(self) -> SolitaireRepository: ...

    async def __aenter__(self) -> UnitOfWork: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    async def commit(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    def __call__(self) -> UnitOfWork: ...


class Clock(Protocol):
    def __call__(self) -> datetime: ...
