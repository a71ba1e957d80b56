"""What the use cases need from the outside world. Adapters implement these; unit tests use fakes."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from types import TracebackType
from typing import Protocol

from golf.app.boards import BoardEntry, BoardRows
from golf.app.history import BoardScope, DealStats, HistoryFilter, PlayedRecord
from golf.app.identity import AccessToken, PlayerRecord, RefreshTokenRecord
from golf.app.records import (
    DealRecord,
    DealStanding,
    DealUse,
    GameFilter,
    GameRecord,
    HintRecord,
    MoveRecord,
    RoundFilter,
    RoundRecord,
    Verdict,
)
from golf.app.tables.entries import Entry
from golf.app.tables.records import LoggedEntry, TableDue, TableRecord
from golf.app.tables.status import TableStatus
from golf.app.webhook_records import Coverage, DeliveryRecord, Subscription, WebhookRecord
from golf.engine.solitaire.autoplay import AutoRun
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.solver import SolveResult
from golf.engine.solitaire.state import State


class DuplicateMove(Exception):
    """The database refused a log entry: its sequence number or its idempotency key is taken."""

    def __init__(self, key_taken: bool) -> None:
        super().__init__("idempotency key taken" if key_taken else "sequence number taken")
        self.key_taken = key_taken


class AlreadyStored(Exception):
    """A unique constraint refused a row (a hint key, a round's hole, a day's deal) that another request stored.

    ``constraint`` names it as the database reported it (contains the constraint or index name, e.g.
    ``uq_games_deal_in_play``, on both databases)."""

    def __init__(self, constraint: str = "") -> None:
        super().__init__(constraint)
        self.constraint = constraint


class DealRepository(Protocol):
    """Solitaire deals, the pool of pre-solved deals and the daily deals
    (``golf.adapters.db.deal_store.SqlDealStore``)."""

    async def add_deal(self, deal: DealRecord) -> None: ...
    async def get_deal(self, deal_id: str) -> DealRecord | None: ...
    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]: ...
    async def save_verdict(self, deal_id: str, verdict: Verdict) -> None: ...
    async def deal_use(self, deal_id: str, owner_id: str) -> DealUse:
        """How a deal is being played: whether a game holding it is in progress, the owner's games on it, and
        whether it is a daily deal, and when it closes."""
        ...

    async def deal_standing(self, deal_id: str) -> DealStanding | None:
        """When the deal closes and whether a ranked game on it is in progress (``golf.app.reveals``); None for
        an unknown deal."""
        ...

    async def pool_add(self, preset: str, difficulty: str, deal_id: str) -> None: ...
    async def pool_take(self, preset: str, difficulty: str | None, player_id: str) -> str | None:
        """The least dealt pooled deal of a preset (and difficulty, if given), oldest first; counts the use.

        Never a deal ``player_id`` has a game on, nor one a game in progress holds (``holds_deal``)."""
        ...

    async def pool_claim_fresh(self, preset: str) -> str | None:
        """Take a never-dealt deal of a preset out of the pool for good (for a daily deal); None if none."""
        ...

    async def pool_counts(self, preset: str, difficulty: str) -> tuple[int, int]:
        """Pooled deals of a preset and difficulty: (never dealt, all)."""
        ...

    async def pool_evict(self, preset: str, difficulty: str, closed_at: datetime) -> None:
        """Drop the most dealt deal of a preset and difficulty from the pool (never a fresh one), closing it at
        ``closed_at``: it is never dealt fresh again."""
        ...

    async def daily_get(self, day: str, preset: str) -> str | None: ...
    async def daily_add(self, day: str, preset: str, deal_id: str, closes_at: datetime) -> None:
        """Make ``deal_id`` the day's deal of the preset, closing at ``closes_at`` (the day's end). Raises
        ``AlreadyStored`` when the day already has a deal for the preset."""
        ...


class GameRepository(Protocol):
    """Solitaire games, their move logs and their hints (``golf.adapters.db.game_store.SqlGameStore``)."""

    async def add_game(self, game: GameRecord) -> None:
        """Raises ``AlreadyStored`` when the game's (round, hole) is taken."""
        ...

    async def get_game(self, game_id: str) -> GameRecord | None: ...
    async def list_games(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: GameFilter
    ) -> list[GameRecord]:
        """The owner's games matching ``where``, newest first (created_at, id descending), strictly after the
        keyset ``after`` when given."""
        ...

    async def get_moves(self, game_id: str) -> list[MoveRecord]: ...
    async def find_move(self, game_id: str, idempotency_key: str) -> MoveRecord | None: ...
    async def record_change(
        self, entry: MoveRecord, game: GameRecord, expected_version: int, undo_of: int | None
    ) -> int | None:
        """Append ``entry`` to the log, mark entry ``undo_of`` undone by it, and write ``game`` if the stored
        game is still at ``expected_version``; all or nothing. Returns the game's hints count, or None when
        someone else moved the game first. Raises ``DuplicateMove`` when (game, seq) or (game, key) exists."""
        ...

    async def add_hint(self, hint: HintRecord) -> None:
        """Store a hint and count it on its game; raises ``AlreadyStored`` when the key is taken."""
        ...

    async def find_hint(self, game_id: str, idempotency_key: str) -> HintRecord | None: ...


class RoundRepository(Protocol):
    """Solitaire rounds of holes, each hole a game (``golf.adapters.db.round_store.SqlRoundStore``)."""

    async def add_round(self, round_: RoundRecord) -> None: ...
    async def get_round(self, round_id: str) -> RoundRecord | None: ...
    async def list_rounds(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: RoundFilter
    ) -> list[RoundRecord]:
        """The owner's rounds matching ``where``, newest first, strictly after the keyset ``after``."""
        ...

    async def round_games(self, round_id: str) -> list[GameRecord]:
        """The round's games in hole order."""
        ...


class PlayerRepository(Protocol):
    """Players (``golf.adapters.db.player_store.SqlPlayerStore``)."""

    async def add_player(self, player: PlayerRecord) -> None:
        """Raises ``AlreadyStored`` when (issuer, subject) is taken."""
        ...

    async def get_player(self, player_id: str) -> PlayerRecord | None: ...
    async def find_player(self, issuer: str, subject: str) -> PlayerRecord | None: ...
    async def rename_player(self, player_id: str, display_name: str) -> PlayerRecord | None:
        """The player with its new name (None: no such player)."""
        ...


class RefreshTokenRepository(Protocol):
    """Refresh tokens (``golf.adapters.db.player_store.SqlRefreshTokenStore``)."""

    async def add_refresh_token(self, token: RefreshTokenRecord) -> None: ...
    async def find_refresh_token(self, token_hash: str) -> RefreshTokenRecord | None: ...
    async def revoke_refresh_token(self, token_hash: str, when: datetime) -> bool:
        """Mark the token revoked (if not already); whether a token had that hash."""
        ...


class TableRepository(Protocol):
    """Live card Golf tables and their append-only logs (``golf.adapters.db.table_store.SqlTableStore``)."""

    async def add_table(self, record: TableRecord) -> None:
        """Raises ``AlreadyStored`` when the id, or the join code of a table not over, is taken."""
        ...

    async def append(
        self,
        table_id: str,
        expected_version: int,
        entries: Sequence[Entry],
        status: TableStatus,
        created_at: datetime,
        idempotency_key: str | None = None,
        due_at: datetime | None = None,
        player_id: str | None = None,
    ) -> int:
        """One command's entries, at ``expected_version``; the new version. Raises ``TableChanged`` (a
        ``Conflict``) when another writer appended first or ``player_id``'s key is taken (keys are each player's
        own), ``NotFound`` for no such table. ``due_at``: when work falls due at the table after them (``None``:
        none); any lease on the table ends."""
        ...

    async def get_table(self, table_id: str) -> TableRecord | None: ...
    async def get_entries(
        self, table_id: str, after_seq: int = 0, through_seq: int | None = None
    ) -> list[LoggedEntry]: ...
    async def load_table(self, table_id: str) -> tuple[TableRecord, list[LoggedEntry]] | None:
        """The record and its whole log, read up to the record's version so that a write committed between the two
        reads is not half seen (``None``: no such table). The use case replays it
        (``golf.app.tables.writer.replay_log``)."""
        ...

    async def find_command(self, table_id: str, player_id: str, idempotency_key: str) -> list[LoggedEntry] | None:
        """The entries of the command ``player_id`` sent with ``idempotency_key`` (``None``: no such command)."""
        ...

    async def list_open_tables(self, limit: int, preset: str | None = None) -> list[TableRecord]: ...
    async def find_by_join_code(self, join_code: str) -> TableRecord | None: ...
    async def list_quick_play_tables(self, preset: str, limit: int) -> list[TableRecord]:
        """Tables quick play opened that still seat players, of ``preset``, oldest first."""
        ...

    async def entry_times(self, table_id: str, seqs: Collection[int]) -> dict[int, datetime]:
        """When the entries ``seqs`` of the table's log were written."""
        ...

    async def get_due(self, table_id: str) -> TableDue | None: ...
    async def claim_due(self, now: datetime, limit: int, owner: str, lease_seconds: float) -> list[str]:
        """Lease to ``owner`` up to ``limit`` tables due by ``now`` that no live lease holds; their ids."""
        ...

    async def next_due(self, now: datetime) -> datetime | None:
        """The earliest due time of a table no live lease holds (``None``: nothing is due ever, for now)."""
        ...

    async def release_due(self, table_id: str, version: int, due_at: datetime | None) -> bool:
        """Set the next due time of the table at ``version`` and end its lease (nothing if it moved on)."""
        ...

    async def add_quick_play(self, player_id: str, idempotency_key: str, table_id: str, created_at: datetime) -> None:
        """Raises ``AlreadyStored`` when the player already used the key."""
        ...

    async def find_quick_play(self, player_id: str, idempotency_key: str) -> str | None: ...


class WebhookRepository(Protocol):
    """Webhooks and their outbox of deliveries (``golf.adapters.db.webhook_store.SqlWebhookStore``)."""

    async def add_webhook(self, hook: WebhookRecord) -> None:
        """Raises ``AlreadyStored`` when the id is taken."""
        ...

    async def get_webhook(self, webhook_id: str) -> WebhookRecord | None:
        """The webhook, deleted or not."""
        ...

    async def list_webhooks(
        self, limit: int, after: tuple[datetime, str] | None, issuer: str | None = None, player_id: str | None = None
    ) -> list[WebhookRecord]:
        """Live webhooks newest first (created_at, id descending), strictly after the keyset ``after``: every one of
        ``issuer``, or the ``PLAYER`` webhooks of ``player_id``."""
        ...

    async def count_webhooks(self, coverage: Coverage, owner: str) -> int:
        """Live webhooks of ``coverage`` whose owner (the player, or the issuer) is ``owner``, counted so that no
        other transaction counting the same owner runs between this count and this transaction's end (a create
        checks the limit with it)."""
        ...

    async def delete_webhook(self, webhook_id: str, when: datetime) -> bool:
        """Mark the webhook deleted and cancel its pending deliveries; whether a live webhook had that id."""
        ...

    async def subscriptions(self, player_ids: Sequence[str]) -> list[Subscription]:
        """Every live webhook covering each of ``player_ids`` (its own, or its issuer's), one row per pair."""
        ...

    async def add_deliveries(self, deliveries: Sequence[DeliveryRecord]) -> None:
        """Write deliveries to the outbox (pending, due at their ``next_attempt_at``)."""
        ...


class RecordRepository(Protocol):
    """Records of what was played (``golf.adapters.db.record_store``): written by ``golf.app.recording``."""

    async def lock_players(self, player_ids: Sequence[str]) -> dict[str, str]:
        """Each player's issuer, their rows locked until the transaction ends (records in commit order)."""
        ...

    async def add_records(self, records: Sequence[PlayedRecord]) -> None: ...
    async def get_board_entries(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], BoardEntry]: ...
    async def put_board_entries(self, entries: Sequence[BoardEntry]) -> None: ...
    async def add_deal_result(self, deal_id: str, preset: str, won: bool, score: int, duration: int) -> None: ...
    async def history(
        self, player_id: str, query: HistoryFilter, before_id: int | None, limit: int, viewer: str | None = None
    ) -> list[PlayedRecord]:
        """The player's records, newest first, below ``before_id``; for a ``viewer`` other than the player, without
        the matches of private tables that the viewer neither sat at nor created."""
        ...

    async def board_page(
        self,
        board: str,
        scope: BoardScope,
        min_qualifier: int,
        after: tuple[int, int, int, datetime, str] | None,
        limit: int,
    ) -> BoardRows: ...
    async def board_standing(
        self, board: str, player_id: str, scope: BoardScope, min_qualifier: int
    ) -> tuple[BoardEntry, str, int] | None:
        """The player's entry in scope, their display name, and how many entries in scope rank above it."""
        ...

    async def player_issuer(self, player_id: str) -> str | None: ...
    async def deal_exists(self, deal_id: str) -> bool: ...
    async def daily_deal(self, day: str, preset: str) -> str | None: ...
    async def deal_stats(self, deal_id: str) -> DealStats | None: ...
    async def list_deal_stats(
        self, preset: str, hardest: bool, min_plays: int, after: tuple[int, int, str] | None, limit: int
    ) -> list[tuple[DealStats, int, Verdict | None]]: ...


class UnitOfWork(Protocol):
    """One transaction. Leaving the block without ``commit`` rolls back."""

    @property
    def deals(self) -> DealRepository:
        """Solitaire deals, their pool and the daily deals, in this transaction."""
        ...

    @property
    def games(self) -> GameRepository:
        """Solitaire games, their move logs and hints, in this transaction."""
        ...

    @property
    def rounds(self) -> RoundRepository:
        """Solitaire rounds, in this transaction."""
        ...

    @property
    def players(self) -> PlayerRepository:
        """Players, in this transaction."""
        ...

    @property
    def refresh_tokens(self) -> RefreshTokenRepository:
        """Refresh tokens, in this transaction."""
        ...

    @property
    def webhooks(self) -> WebhookRepository:
        """Webhooks and their outbox, in this transaction."""
        ...

    @property
    def tables(self) -> TableRepository:
        """The live card Golf tables and their logs, in this transaction."""
        ...

    @property
    def records(self) -> RecordRepository:
        """Histories, leaderboards and deal statistics, in this transaction."""
        ...

    async def __aenter__(self) -> UnitOfWork: ...
    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
    async def commit(self) -> None: ...


class UnitOfWorkFactory(Protocol):
    def __call__(self) -> UnitOfWork: ...


class Clock(Protocol):
    def __call__(self) -> datetime: ...


class Solver(Protocol):
    """The exact solver, run where it does not hold up other requests (a process pool in the service).

    ``owner`` is the player a search is for: players take turns at the solver, so one player's many searches
    do not hold up another's. None for work done for nobody in particular (a finished deal's verdict)."""

    async def solve(self, state: State, budget: int | None, owner: str | None = None) -> SolveResult: ...
    async def autoplay_run(self, state: State, budget: int | None, owner: str | None = None) -> AutoRun: ...
    async def verdict(self, state: State, budget: int | None, owner: str | None = None) -> Verdict:
        """The verdict on ``state`` as a deal's start."""
        ...

    async def find_winnable(
        self,
        rules: SolitaireRules,
        difficulty: Difficulty | None,
        budget: int | None,
        attempts: int,
        owner: str | None = None,
    ) -> tuple[str, Verdict] | None:
        """A fresh seed whose deal is winnable (of ``difficulty`` if given), with its verdict; None if
        ``attempts`` seeds gave none."""
        ...


class RateLimiter(Protocol):
    """Moving-window rate limits by name (``player``, ``address``, ``solver``, ``create``, ``sign_in``,
    ``sign_up_network``, ``sign_up_service``, ``join_code_player``, ``join_code_address``)."""

    async def hit(self, limit: str, key: str) -> None:
        """Count one call by ``key`` against ``limit``; raises ``RateLimited`` (with the seconds until a call
        would be let in) when the window is full. An unknown limit name is a programming error (KeyError)."""
        ...


class TokenIssuer(Protocol):
    """Signs this service's own access tokens."""

    def issue(self, player_id: str) -> AccessToken: ...
