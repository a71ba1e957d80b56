"""In-memory stand-ins for the storage ports: one repository per context with the same unique constraints, and a
clock."""

from __future__ import annotations

import copy
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from types import TracebackType

from golf.app.boards import BoardEntry
from golf.app.errors import NotFound
from golf.app.history import DealStats, PlayedRecord
from golf.app.identity import LEGACY_OWNER, PlayerRecord, RefreshTokenRecord
from golf.app.ports import AlreadyStored, DuplicateMove
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
from golf.app.tables.errors import TableChanged
from golf.app.tables.records import LoggedEntry, TableDue, TableRecord
from golf.app.tables.status import TableStatus

IN_PROGRESS = "in_progress"


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
    closed: dict[str, datetime] = field(default_factory=dict)
    """deals.closed_at"""
    players: dict[str, PlayerRecord] = field(default_factory=dict)
    refresh_tokens: dict[str, RefreshTokenRecord] = field(default_factory=dict)
    """By token hash."""
    card_tables: dict[str, TableRecord] = field(default_factory=dict)
    table_logs: dict[str, list[LoggedEntry]] = field(default_factory=dict)
    table_due: dict[str, TableDue] = field(default_factory=dict)
    """By table id: the due time and lease (``card_golf_tables.due_at``, ``lease_owner``, ``lease_until``)."""
    quick_plays: dict[tuple[str, str], str] = field(default_factory=dict)
    """(player id, idempotency key) -> table id."""
    records: list[PlayedRecord] = field(default_factory=list)
    board_entries: dict[tuple[str, str], BoardEntry] = field(default_factory=dict)
    deal_stats: dict[str, DealStats] = field(default_factory=dict)


def _holds_play(game: GameRecord) -> bool:
    """Whether ``game`` is in uq_games_deal_in_play (a held deal has at most one game in progress)."""
    return game.status == IN_PROGRESS and game.holds_deal


def _scored(game: GameRecord) -> bool:
    """Whether ``game`` is in uq_games_scored (a player has one scored game per deal)."""
    return not game.practice and game.owner_id != LEGACY_OWNER


def _in_range(when: datetime, after: datetime | None, before: datetime | None) -> bool:
    return (after is None or when >= after) and (before is None or when < before)


class FakeDeals:
    """Deals, the pool and the daily deals (``DealRepository``)."""

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

    async def deal_use(self, deal_id: str, owner_id: str) -> DealUse:
        games = [g for g in self.t.games.values() if g.deal_id == deal_id]
        return DealUse(
            held=any(_holds_play(g) for g in games),
            owner_games=sum(1 for g in games if g.owner_id == owner_id),
            daily=deal_id in self.t.daily.values(),
            closed_at=self.t.closed.get(deal_id),
        )

    async def deal_standing(self, deal_id: str) -> DealStanding | None:
        if deal_id not in self.t.deals:
            return None
        ranked = any(
            g.deal_id == deal_id and g.status == "in_progress" and not g.practice for g in self.t.games.values()
        )
        return DealStanding(closed_at=self.t.closed.get(deal_id), ranked_in_play=ranked)

    async def pool_add(self, preset: str, difficulty: str, deal_id: str) -> None:
        self.t.pool.append(PoolRow(len(self.t.pool) + 1, preset, difficulty, deal_id))

    async def pool_take(self, preset: str, difficulty: str | None, player_id: str) -> str | None:
        barred = {g.deal_id for g in self.t.games.values() if g.owner_id == player_id or _holds_play(g)}
        rows = [
            r
            for r in self.t.pool
            if r.preset == preset and difficulty in (None, r.difficulty) and r.deal_id not in barred
        ]
        if not rows:
            return None
        row = min(rows, key=lambda r: (r.uses, r.id))
        row.uses += 1
        return row.deal_id

    async def pool_claim_fresh(self, preset: str) -> str | None:
        rows = [r for r in self.t.pool if r.preset == preset and r.uses == 0]
        if not rows:
            return None
        row = min(rows, key=lambda r: r.id)
        self.t.pool.remove(row)
        return row.deal_id

    async def pool_counts(self, preset: str, difficulty: str) -> tuple[int, int]:
        rows = [r for r in self.t.pool if (r.preset, r.difficulty) == (preset, difficulty)]
        return sum(1 for r in rows if r.uses == 0), len(rows)

    async def pool_evict(self, preset: str, difficulty: str, closed_at: datetime) -> None:
        rows = [r for r in self.t.pool if (r.preset, r.difficulty) == (preset, difficulty) and r.uses > 0]
        if rows:
            row = max(rows, key=lambda r: (r.uses, -r.id))
            self.t.pool.remove(row)
            self.t.closed[row.deal_id] = closed_at

    async def daily_get(self, day: str, preset: str) -> str | None:
        return self.t.daily.get((day, preset))

    async def daily_add(self, day: str, preset: str, deal_id: str, closes_at: datetime) -> None:
        if (day, preset) in self.t.daily:
            raise AlreadyStored("daily_deals_pkey")
        self.t.daily[(day, preset)] = deal_id
        self.t.closed[deal_id] = closes_at


class FakeGames:
    """Games, their move logs and hints (``GameRepository``)."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_game(self, game: GameRecord) -> None:
        games = self.t.games.values()
        if game.id in self.t.games:
            raise AlreadyStored("games_pkey")
        if game.round_id is not None and any((g.round_id, g.hole) == (game.round_id, game.hole) for g in games):
            raise AlreadyStored("uq_games_round_hole")
        if _holds_play(game) and any(g.deal_id == game.deal_id and _holds_play(g) for g in games):
            raise AlreadyStored("uq_games_deal_in_play")
        if _scored(game) and any(
            (g.deal_id, g.owner_id) == (game.deal_id, game.owner_id) and _scored(g) for g in games
        ):
            raise AlreadyStored("uq_games_scored")
        self.t.games[game.id] = copy.deepcopy(game)

    async def get_game(self, game_id: str) -> GameRecord | None:
        game = self.t.games.get(game_id)
        return copy.deepcopy(game) if game else None

    async def list_games(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: GameFilter
    ) -> list[GameRecord]:
        games = [
            g
            for g in self.t.games.values()
            if g.owner_id == owner_id
            and (where.preset is None or self._preset(g.deal_id) == where.preset)
            and (where.status is None or g.status == where.status)
            and _in_range(g.created_at, where.created_after, where.created_before)
            and (after is None or (g.created_at, g.id) < after)
        ]
        games.sort(key=lambda g: (g.created_at, g.id), reverse=True)
        return [copy.deepcopy(g) for g in games[:limit]]

    def _preset(self, deal_id: str) -> str | None:
        deal = self.t.deals.get(deal_id)
        return deal.preset if deal else None

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
        # As the SQL update: the columns a change may write, nothing else (owner, deal, round, flags stay).
        self.t.games[game.id] = replace(
            copy.deepcopy(current),
            version=game.version,
            status=game.status,
            score=game.score,
            line=list(game.line),
            updated_at=game.updated_at,
            finished_at=game.finished_at,
            undos_used=game.undos_used,
            autoplay_assists=game.autoplay_assists,
            stock_seen=game.stock_seen,
        )
        return current.hints_used

    async def add_hint(self, hint: HintRecord) -> None:
        if await self.find_hint(hint.game_id, hint.idempotency_key):
            raise AlreadyStored("uq_hints_game_key")
        self.t.hints.append(hint)
        self.t.games[hint.game_id].hints_used += 1

    async def find_hint(self, game_id: str, idempotency_key: str) -> HintRecord | None:
        return next((h for h in self.t.hints if (h.game_id, h.idempotency_key) == (game_id, idempotency_key)), None)


class FakeRounds:
    """Rounds (``RoundRepository``)."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_round(self, round_: RoundRecord) -> None:
        self.t.rounds[round_.id] = round_

    async def get_round(self, round_id: str) -> RoundRecord | None:
        return self.t.rounds.get(round_id)

    async def list_rounds(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: RoundFilter
    ) -> list[RoundRecord]:
        def finished(r: RoundRecord) -> bool:
            done = sum(1 for g in self.t.games.values() if g.round_id == r.id and g.status != IN_PROGRESS)
            return done == r.holes

        rounds = [
            r
            for r in self.t.rounds.values()
            if r.owner_id == owner_id
            and (where.preset is None or r.preset == where.preset)
            and (where.finished is None or finished(r) == where.finished)
            and _in_range(r.created_at, where.created_after, where.created_before)
            and (after is None or (r.created_at, r.id) < after)
        ]
        rounds.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return rounds[:limit]

    async def round_games(self, round_id: str) -> list[GameRecord]:
        games = [g for g in self.t.games.values() if g.round_id == round_id]
        return [copy.deepcopy(g) for g in sorted(games, key=lambda g: g.hole or 0)]


class FakePlayers:
    """Players (``PlayerRepository``)."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_player(self, player: PlayerRecord) -> None:
        if player.id in self.t.players:
            raise AlreadyStored("players_pkey")
        # As in SQL, a NULL subject is never equal to another: guests never collide.
        if player.subject is not None and await self.find_player(player.issuer, player.subject):
            raise AlreadyStored("uq_players_issuer_subject")
        self.t.players[player.id] = player

    async def get_player(self, player_id: str) -> PlayerRecord | None:
        return self.t.players.get(player_id)

    async def find_player(self, issuer: str, subject: str) -> PlayerRecord | None:
        return next((p for p in self.t.players.values() if (p.issuer, p.subject) == (issuer, subject)), None)

    async def rename_player(self, player_id: str, display_name: str) -> PlayerRecord | None:
        if player_id not in self.t.players:
            return None
        self.t.players[player_id] = replace(self.t.players[player_id], display_name=display_name)
        return self.t.players[player_id]


class FakeRefreshTokens:
    """Refresh tokens (``RefreshTokenRepository``)."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def add_refresh_token(self, token: RefreshTokenRecord) -> None:
        if token.token_hash in self.t.refresh_tokens:
            raise AlreadyStored("uq_refresh_tokens_hash")
        if token.player_id not in self.t.players:
            raise AssertionError(f"refresh token of an unknown player {token.player_id!r} (a foreign key refuses it)")
        self.t.refresh_tokens[token.token_hash] = token

    async def find_refresh_token(self, token_hash: str) -> RefreshTokenRecord | None:
        return self.t.refresh_tokens.get(token_hash)

    async def revoke_refresh_token(self, token_hash: str, when: datetime) -> bool:
        token = self.t.refresh_tokens.get(token_hash)
        if token is None:
            return False
        if token.revoked_at is None:
            self.t.refresh_tokens[token_hash] = replace(token, revoked_at=when)
        return True


class FakeTableStore:
    """``SqlTableStore`` in memory, with the same refusals: an append at a version the table is no longer at, or
    with a key already in its log, is ``TableChanged``; a taken id or join code (of a table not over) is
    ``AlreadyStored`` naming the constraint as PostgreSQL does."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables
        self.appends = 0
        """Appends that stored something, in this unit of work."""

    async def add_table(self, record: TableRecord) -> None:
        if record.id in self.t.card_tables:
            raise AlreadyStored("card_golf_tables_pkey")
        code = record.options.join_code
        if code is not None and any(
            r.options.join_code == code and r.status is not TableStatus.OVER for r in self.t.card_tables.values()
        ):
            raise AlreadyStored("uq_card_golf_tables_join_code")
        self.t.card_tables[record.id] = record
        self.t.table_logs[record.id] = []

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
        if not entries:
            raise ValueError("a command appends at least one entry")
        if idempotency_key is not None and player_id is None:
            raise ValueError("an idempotency key is a player's")
        record = self.t.card_tables.get(table_id)
        if record is None:
            raise NotFound(f"table {table_id} not found")
        log = self.t.table_logs[table_id]
        key_taken = idempotency_key is not None and any(
            (e.player_id, e.idempotency_key) == (player_id, idempotency_key) for e in log
        )
        if record.version != expected_version:
            raise TableChanged(f"table {table_id} is at version {record.version}", key_taken=key_taken)
        if key_taken:
            raise TableChanged(f"table {table_id} already has the key", key_taken=True)
        for n, entry in enumerate(entries):
            first = n == 0
            log.append(
                LoggedEntry(
                    expected_version + n + 1,
                    entry,
                    created_at,
                    idempotency_key if first else None,
                    len(entries) if first else 0,
                    player_id if first and idempotency_key is not None else None,
                )
            )
        new_version = expected_version + len(entries)
        self.t.card_tables[table_id] = replace(record, version=new_version, status=status)
        self.t.table_due[table_id] = TableDue(due_at)
        self.appends += 1
        return new_version

    async def get_table(self, table_id: str) -> TableRecord | None:
        return self.t.card_tables.get(table_id)

    async def get_entries(self, table_id: str, after_seq: int = 0, through_seq: int | None = None) -> list[LoggedEntry]:
        return [
            e
            for e in self.t.table_logs.get(table_id, [])
            if e.seq > after_seq and (through_seq is None or e.seq <= through_seq)
        ]

    async def load_table(self, table_id: str) -> tuple[TableRecord, list[LoggedEntry]] | None:
        record = self.t.card_tables.get(table_id)
        if record is None:
            return None
        return record, await self.get_entries(table_id, through_seq=record.version)

    async def find_command(self, table_id: str, player_id: str, idempotency_key: str) -> list[LoggedEntry] | None:
        log = self.t.table_logs.get(table_id, [])
        first = next((e for e in log if (e.player_id, e.idempotency_key) == (player_id, idempotency_key)), None)
        if first is None:
            return None
        return [e for e in log if first.seq <= e.seq < first.seq + first.batch]

    async def list_open_tables(self, limit: int, preset: str | None = None) -> list[TableRecord]:
        rows = [
            r
            for r in self.t.card_tables.values()
            if r.status is TableStatus.SEATING and r.listed and (preset is None or r.options.preset == preset)
        ]
        rows.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return rows[:limit]

    async def find_by_join_code(self, join_code: str) -> TableRecord | None:
        code = join_code.strip().upper()
        return next(
            (
                r
                for r in self.t.card_tables.values()
                if r.options.join_code == code and r.status is not TableStatus.OVER
            ),
            None,
        )

    async def list_quick_play_tables(self, preset: str, limit: int) -> list[TableRecord]:
        rows = [
            r
            for r in self.t.card_tables.values()
            if r.status is TableStatus.SEATING
            and r.listed
            and r.options.autofill_seconds is not None
            and r.options.preset == preset
        ]
        rows.sort(key=lambda r: (r.created_at, r.id))
        return rows[:limit]

    async def entry_times(self, table_id: str, seqs: Collection[int]) -> dict[int, datetime]:
        return {e.seq: e.created_at for e in self.t.table_logs.get(table_id, []) if e.seq in seqs}

    async def get_due(self, table_id: str) -> TableDue | None:
        if table_id not in self.t.card_tables:
            return None
        return self.t.table_due.get(table_id, TableDue(None))

    async def claim_due(self, now: datetime, limit: int, owner: str, lease_seconds: float) -> list[str]:
        due = sorted(
            (d.due_at, table_id)
            for table_id, d in self.t.table_due.items()
            if d.due_at is not None and d.due_at <= now and (d.lease_until is None or d.lease_until < now)
        )
        ids = [table_id for _, table_id in due[: max(limit, 0)]]
        for table_id in ids:
            self.t.table_due[table_id] = replace(
                self.t.table_due[table_id], lease_owner=owner, lease_until=now + timedelta(seconds=lease_seconds)
            )
        return ids

    async def next_due(self, now: datetime) -> datetime | None:
        free = [
            d.due_at
            for d in self.t.table_due.values()
            if d.due_at is not None and (d.lease_until is None or d.lease_until < now)
        ]
        return min(free, default=None)

    async def release_due(self, table_id: str, version: int, due_at: datetime | None) -> bool:
        record = self.t.card_tables.get(table_id)
        if record is None or record.version != version:
            return False
        self.t.table_due[table_id] = TableDue(due_at)
        return True

    async def add_quick_play(self, player_id: str, idempotency_key: str, table_id: str, created_at: datetime) -> None:
        if (player_id, idempotency_key) in self.t.quick_plays:
            raise AlreadyStored("card_golf_quick_plays_pkey")
        self.t.quick_plays[(player_id, idempotency_key)] = table_id

    async def find_quick_play(self, player_id: str, idempotency_key: str) -> str | None:
        return self.t.quick_plays.get((player_id, idempotency_key))


class FakeRecordStore:
    """The records tables in memory (what ``golf.app.recording`` writes; the queries are tested on real databases)."""

    def __init__(self, tables: Tables) -> None:
        self.t = tables

    async def lock_players(self, player_ids: Sequence[str]) -> dict[str, str]:
        return {p: self.t.players[p].issuer for p in player_ids if p in self.t.players}

    async def add_records(self, records: Sequence[PlayedRecord]) -> None:
        for r in records:
            if any((o.kind, o.record_id, o.player_id) == (r.kind, r.record_id, r.player_id) for o in self.t.records):
                raise AlreadyStored("uq_records_record_player")
            self.t.records.append(replace(r, id=len(self.t.records) + 1))

    async def get_board_entries(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], BoardEntry]:
        return {k: self.t.board_entries[k] for k in keys if k in self.t.board_entries}

    async def put_board_entries(self, entries: Sequence[BoardEntry]) -> None:
        for e in entries:
            self.t.board_entries[(e.board, e.player_id)] = e

    async def add_deal_result(self, deal_id: str, preset: str, won: bool, score: int, duration: int) -> None:
        old = self.t.deal_stats.get(deal_id, DealStats(deal_id, preset, 0, 0, 0, 0))
        self.t.deal_stats[deal_id] = DealStats(
            deal_id, preset, old.plays + 1, old.wins + won, old.score_sum + score, old.duration_ms_sum + duration
        )


class FakeUnitOfWork:
    """Works on a copy of the tables; commit publishes the copy, anything else throws it away."""

    def __init__(self, store: FakeStore) -> None:
        self.store = store

    async def __aenter__(self) -> FakeUnitOfWork:
        self.data = copy.deepcopy(self.store.tables)
        self._deals = FakeDeals(self.data)
        self._games = FakeGames(self.data)
        self._rounds = FakeRounds(self.data)
        self._players = FakePlayers(self.data)
        self._refresh_tokens = FakeRefreshTokens(self.data)
        self._tables = FakeTableStore(self.data)
        self._records = FakeRecordStore(self.data)
        return self

    @property
    def deals(self) -> FakeDeals:
        return self._deals

    @property
    def games(self) -> FakeGames:
        return self._games

    @property
    def rounds(self) -> FakeRounds:
        return self._rounds

    @property
    def players(self) -> FakePlayers:
        return self._players

    @property
    def refresh_tokens(self) -> FakeRefreshTokens:
        return self._refresh_tokens

    @property
    def tables(self) -> FakeTableStore:
        return self._tables

    @property
    def records(self) -> FakeRecordStore:
        return self._records

    async def commit(self) -> None:
        self.store.tables = self.data
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
