"""The SQL repository and unit of work, on the driver of the URL's database (``postgres_driver.py`` or
``sqlite_driver.py``; one transaction per unit of work)."""

from __future__ import annotations

from datetime import datetime
from types import TracebackType
from typing import Any

from golf.adapters.db.drivers import Driver, Row, Transaction, UniqueViolation
from golf.adapters.db.group_commit import Grouped
from golf.adapters.db.postgres_driver import PostgresDriver
from golf.adapters.db.record_store import SqlRecordStore
from golf.adapters.db.rows import marks, maybe_when, verdict, when
from golf.adapters.db.sqlite_driver import SqliteDriver
from golf.adapters.db.table_store import SqlTableStore
from golf.adapters.db.urls import is_sqlite
from golf.adapters.db.webhook_store import SqlWebhookStore
from golf.app.identity import PlayerRecord, RefreshTokenRecord
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
    layout_from_text,
    layout_to_text,
)
from golf.engine.solitaire.rules import SolitaireRules

_DEAL_COLUMNS = (
    "id, preset, preset_version, rules, seed, algorithm, commitment, layout, pysol_number, created_at, "
    "winnable, solution, fewest_left, difficulty, difficulty_score, seed_source"
)
_GAME_COLUMNS = (
    "id, deal_id, version, status, score, line, created_at, updated_at, finished_at, hints_used, undos_used, "
    "round_id, hole, owner_id, practice, holds_deal, autoplay_assists, stock_seen"
)
_MOVE_COLUMNS = "game_id, seq, code, idempotency_key, created_at, undone_by"
_ROUND_COLUMNS = "id, preset, rules, holes, par, winnable_only, difficulty, created_at, owner_id"
_PLAYER_COLUMNS = "id, display_name, created_at, issuer, subject"
_TOKEN_COLUMNS = "id, player_id, token_hash, created_at, expires_at, revoked_at"

_GAME_UPDATE = (
    "version = ?, status = ?, score = ?, line = ?, updated_at = ?, finished_at = ?, undos_used = ?, "
    "autoplay_assists = ?, stock_seen = ?"
)


def _columns(columns: str, alias: str) -> str:
    """``columns`` qualified by a table alias, for queries that join."""
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


# SQLite names the columns of the unique constraint or index a row broke, not the constraint: these map them to
# the names PostgreSQL reports, so callers can tell the constraints apart on both databases.
_SQLITE_UNIQUE = {
    "games.id": "games_pkey",
    "games.deal_id": "uq_games_deal_in_play",
    "games.deal_id, games.owner_id": "uq_games_scored",
    "games.round_id, games.hole": "uq_games_round_hole",
    "moves.game_id, moves.seq": "uq_moves_game_seq",
    "moves.game_id, moves.idempotency_key": "uq_moves_game_key",
    "hints.game_id, hints.idempotency_key": "uq_hints_game_key",
    "daily_deals.day, daily_deals.preset": "daily_deals_pkey",
    "players.id": "players_pkey",
    "players.issuer, players.subject": "uq_players_issuer_subject",
    "refresh_tokens.id": "refresh_tokens_pkey",
    "refresh_tokens.token_hash": "uq_refresh_tokens_hash",
}
_SQLITE_PREFIX = "UNIQUE constraint failed: "


def _constraint(err: UniqueViolation) -> str:
    """The name of the constraint ``err`` broke, as PostgreSQL reports it, on either database."""
    text = err.constraint
    if text.startswith(_SQLITE_PREFIX):
        return _SQLITE_UNIQUE.get(text[len(_SQLITE_PREFIX) :], text)
    return text


# One statement, so one round trip, for the hot path on PostgreSQL: the log entry, the undo mark and the game
# row together. If the game is not at the expected version the division by zero aborts the whole statement, so
# the entry is never stored without the game (normally the unique (game, seq) index refuses it first). Concurrent
# moves are stored together by ``_MANY_CHANGES`` (see ``group_commit``): each entry whose game row is still at its
# version, with its game row. Its columns are ``_change_args`` in order, so the game id comes three times.
_ONE_CHANGE = f"""
WITH entry AS (
    INSERT INTO moves (game_id, seq, code, idempotency_key, created_at) VALUES (?, ?, ?, ?, ?) RETURNING seq
), undone AS (
    UPDATE moves SET undone_by = (SELECT seq FROM entry) WHERE game_id = ? AND seq = ?
), game AS (
    UPDATE games SET {_GAME_UPDATE} WHERE id = ? AND version = ? RETURNING hints_used
)
SELECT (SELECT hints_used FROM game) AS hints_used, 1 / (SELECT count(*) FROM game)::int AS ok
"""
_MANY_CHANGES = """
WITH d AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::text[], $7::int[],
        $8::int[], $9::text[], $10::int[], $11::text[], $12::timestamptz[], $13::timestamptz[], $14::int[],
        $15::int[], $16::bool[], $17::text[], $18::int[]) WITH ORDINALITY
        AS d(game_id, seq, code, idempotency_key, created_at, undo_game_id, undo_of, version, status, score, line,
             updated_at, finished_at, undos_used, autoplay_assists, stock_seen, id, expected, entry)
), game AS (
    UPDATE games SET version = d.version, status = d.status, score = d.score, line = d.line,
        updated_at = d.updated_at, finished_at = d.finished_at, undos_used = d.undos_used,
        autoplay_assists = d.autoplay_assists, stock_seen = d.stock_seen
    FROM d WHERE games.id = d.id AND games.version = d.expected
    RETURNING d.entry, games.hints_used
), stored AS (
    INSERT INTO moves (game_id, seq, code, idempotency_key, created_at)
    SELECT d.game_id, d.seq, d.code, d.idempotency_key, d.created_at FROM d JOIN game USING (entry)
), undone AS (
    UPDATE moves SET undone_by = d.seq FROM d JOIN game USING (entry)
    WHERE moves.game_id = d.game_id AND moves.seq = d.undo_of
)
SELECT entry, hints_used FROM game
"""
_PG_RECORD_CHANGE = Grouped(_ONE_CHANGE, _MANY_CHANGES)


def _change_args(entry: MoveRecord, game: GameRecord, expected_version: int, undo_of: int | None) -> tuple[Any, ...]:
    return (
        entry.game_id,
        entry.seq,
        entry.code,
        entry.idempotency_key,
        entry.created_at,
        entry.game_id,
        undo_of,
        *_game_update_args(game, expected_version),
    )


def _game_update_args(game: GameRecord, expected_version: int) -> tuple[Any, ...]:
    """The values of ``_GAME_UPDATE``, then the game id and the version it must still be at."""
    line = ",".join(game.line)
    return (game.version, game.status, game.score, line, game.updated_at, game.finished_at, game.undos_used,
            game.autoplay_assists, game.stock_seen, game.id, expected_version)  # fmt: skip


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
        created_at=when(row["created_at"]),
        pysol_number=row["pysol_number"],
        verdict=verdict(row),
        seed_source=row["seed_source"],
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
        created_at=when(row["created_at"]),
        updated_at=when(row["updated_at"]),
        finished_at=when(row["finished_at"]) if row["finished_at"] is not None else None,
        hints_used=row["hints_used"],
        undos_used=row["undos_used"],
        round_id=row["round_id"],
        hole=row["hole"],
        owner_id=row["owner_id"],
        practice=bool(row["practice"]),
        holds_deal=bool(row["holds_deal"]),
        autoplay_assists=row["autoplay_assists"],
        stock_seen=bool(row["stock_seen"]),
    )


def _move(row: Row) -> MoveRecord:
    return MoveRecord(
        row["game_id"], row["seq"], row["code"], row["idempotency_key"], when(row["created_at"]), row["undone_by"]
    )


def _round(row: Row) -> RoundRecord:
    return RoundRecord(
        id=row["id"],
        preset=row["preset"],
        rules=SolitaireRules.from_canonical(row["rules"]),
        holes=row["holes"],
        par=row["par"],
        winnable_only=bool(row["winnable_only"]),
        difficulty=row["difficulty"],
        created_at=when(row["created_at"]),
        owner_id=row["owner_id"],
    )


def _player(row: Row) -> PlayerRecord:
    return PlayerRecord(row["id"], row["display_name"], when(row["created_at"]), row["issuer"], row["subject"])


def _token(row: Row) -> RefreshTokenRecord:
    revoked = row["revoked_at"]
    return RefreshTokenRecord(
        id=row["id"],
        player_id=row["player_id"],
        token_hash=row["token_hash"],
        created_at=when(row["created_at"]),
        expires_at=when(row["expires_at"]),
        revoked_at=None if revoked is None else when(revoked),
    )


def _keyset(alias: str, after: tuple[datetime, str] | None, sql: list[str], args: list[Any]) -> None:
    """Keyset paging: the rows strictly after the last one seen, in (created_at, id) descending order."""
    if after is not None:
        # The plain bound lets the (owner_id, created_at, id) index start the scan at the keyset.
        when, row_id = after
        sql.append(
            f"{alias}.created_at <= ? AND ({alias}.created_at < ? OR ({alias}.created_at = ? AND {alias}.id < ?))"
        )
        args += [when, when, when, row_id]


def _created(alias: str, after: datetime | None, before: datetime | None, sql: list[str], args: list[Any]) -> None:
    if after is not None:
        sql.append(f"{alias}.created_at >= ?")
        args.append(after)
    if before is not None:
        sql.append(f"{alias}.created_at < ?")
        args.append(before)


def _verdict_values(verdict: Verdict | None) -> tuple[Any, ...]:
    if verdict is None:
        return (None, None, None, None, None)
    return (
        verdict.winnable,
        ",".join(verdict.solution) if verdict.solution else None,
        verdict.fewest_left,
        verdict.difficulty,
        verdict.difficulty_score,
    )


class SqlRepository:
    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    async def add_deal(self, deal: DealRecord) -> None:
        await self.tx.execute(
            f"INSERT INTO deals ({_DEAL_COLUMNS}) VALUES ({marks(_DEAL_COLUMNS)})",
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
            *_verdict_values(deal.verdict),
            deal.seed_source,
        )

    async def save_verdict(self, deal_id: str, verdict: Verdict) -> None:
        await self.tx.execute(
            "UPDATE deals SET winnable = ?, solution = ?, fewest_left = ?, difficulty = ?, difficulty_score = ? "
            "WHERE id = ?",
            *_verdict_values(verdict),
            deal_id,
        )

    async def get_deal(self, deal_id: str) -> DealRecord | None:
        row = await self.tx.fetchone(f"SELECT {_DEAL_COLUMNS} FROM deals WHERE id = ?", deal_id)
        return _deal(row) if row else None

    async def get_deals(self, deal_ids: set[str]) -> dict[str, DealRecord]:
        if not deal_ids:
            return {}
        ids = sorted(deal_ids)
        marks = ", ".join("?" * len(ids))
        rows = await self.tx.fetchall(f"SELECT {_DEAL_COLUMNS} FROM deals WHERE id IN ({marks})", *ids)
        return {row["id"]: _deal(row) for row in rows}

    async def add_game(self, game: GameRecord) -> None:
        try:
            await self.tx.execute(
                f"INSERT INTO games ({_GAME_COLUMNS}) VALUES ({marks(_GAME_COLUMNS)})",
                game.id,
                game.deal_id,
                game.version,
                game.status,
                game.score,
                ",".join(game.line),
                game.created_at,
                game.updated_at,
                game.finished_at,
                game.hints_used,
                game.undos_used,
                game.round_id,
                game.hole,
                game.owner_id,
                game.practice,
                game.holds_deal,
                game.autoplay_assists,
                game.stock_seen,
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err

    async def get_game(self, game_id: str) -> GameRecord | None:
        row = await self.tx.fetchone(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", game_id)
        return _game(row) if row else None

    async def list_games(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: GameFilter
    ) -> list[GameRecord]:
        sql, args = ["g.owner_id = ?"], [owner_id]
        join = ""
        if where.preset is not None:
            join = " JOIN deals d ON d.id = g.deal_id"
            sql.append("d.preset = ?")
            args.append(where.preset)
        if where.status is not None:
            sql.append("g.status = ?")
            args.append(where.status)
        _created("g", where.created_after, where.created_before, sql, args)
        _keyset("g", after, sql, args)
        rows = await self.tx.fetchall(
            f"SELECT {_columns(_GAME_COLUMNS, 'g')} FROM games g{join} WHERE {' AND '.join(sql)} "
            "ORDER BY g.created_at DESC, g.id DESC LIMIT ?",
            *args,
            limit,
        )
        return [_game(r) for r in rows]

    async def deal_use(self, deal_id: str, owner_id: str) -> DealUse:
        # One round trip; each part is an index lookup (uq_games_deal_in_play, ix_games_deal_id,
        # ix_daily_deals_deal).
        row = await self.tx.fetchone(
            "SELECT EXISTS (SELECT 1 FROM games WHERE deal_id = ? AND status = 'in_progress' AND holds_deal) AS held, "
            "(SELECT COUNT(*) FROM games WHERE deal_id = ? AND owner_id = ?) AS owner_games, "
            "EXISTS (SELECT 1 FROM daily_deals WHERE deal_id = ?) AS daily, "
            "(SELECT closed_at FROM deals WHERE id = ?) AS closed_at",
            deal_id,
            deal_id,
            owner_id,
            deal_id,
            deal_id,
        )
        assert row is not None
        closed_at = maybe_when(row["closed_at"])
        return DealUse(
            held=bool(row["held"]), owner_games=int(row["owner_games"]), daily=bool(row["daily"]), closed_at=closed_at
        )

    async def deal_standing(self, deal_id: str) -> DealStanding | None:
        # The deal by its primary key, its ranked games in progress by ix_games_deal_ranked_in_play.
        row = await self.tx.fetchone(
            "SELECT d.closed_at, EXISTS (SELECT 1 FROM games g WHERE g.deal_id = d.id AND g.status = 'in_progress' "
            "AND NOT g.practice) AS ranked_in_play FROM deals d WHERE d.id = ?",
            deal_id,
        )
        if row is None:
            return None
        closed_at = maybe_when(row["closed_at"])
        return DealStanding(closed_at=closed_at, ranked_in_play=bool(row["ranked_in_play"]))

    async def get_moves(self, game_id: str) -> list[MoveRecord]:
        rows = await self.tx.fetchall(f"SELECT {_MOVE_COLUMNS} FROM moves WHERE game_id = ? ORDER BY seq", game_id)
        return [_move(r) for r in rows]

    async def find_move(self, game_id: str, idempotency_key: str) -> MoveRecord | None:
        row = await self.tx.fetchone(
            f"SELECT {_MOVE_COLUMNS} FROM moves WHERE game_id = ? AND idempotency_key = ?", game_id, idempotency_key
        )
        return _move(row) if row else None

    async def record_change(
        self, entry: MoveRecord, game: GameRecord, expected_version: int, undo_of: int | None
    ) -> int | None:
        try:
            if self.tx.dialect == "postgresql":
                row = await self.tx.fetchone_grouped(
                    _PG_RECORD_CHANGE, *_change_args(entry, game, expected_version, undo_of)
                )
                return None if row is None else int(row["hints_used"])
            await self.tx.execute(
                "INSERT INTO moves (game_id, seq, code, idempotency_key, created_at) VALUES (?, ?, ?, ?, ?)",
                entry.game_id,
                entry.seq,
                entry.code,
                entry.idempotency_key,
                entry.created_at,
            )
        except UniqueViolation as err:
            raise DuplicateMove(key_taken=_constraint(err) == "uq_moves_game_key") from err
        if undo_of is not None:
            await self.tx.execute(
                "UPDATE moves SET undone_by = ? WHERE game_id = ? AND seq = ?", entry.seq, entry.game_id, undo_of
            )
        row = await self.tx.fetchone(
            f"UPDATE games SET {_GAME_UPDATE} WHERE id = ? AND version = ? RETURNING hints_used",
            *_game_update_args(game, expected_version),
        )
        return None if row is None else int(row["hints_used"])

    async def add_hint(self, hint: HintRecord) -> None:
        try:
            await self.tx.execute(
                "INSERT INTO hints (game_id, idempotency_key, code, created_at) VALUES (?, ?, ?, ?)",
                hint.game_id,
                hint.idempotency_key,
                hint.code,
                hint.created_at,
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err
        await self.tx.execute("UPDATE games SET hints_used = hints_used + 1 WHERE id = ?", hint.game_id)

    async def find_hint(self, game_id: str, idempotency_key: str) -> HintRecord | None:
        row = await self.tx.fetchone(
            "SELECT game_id, idempotency_key, code, created_at FROM hints WHERE game_id = ? AND idempotency_key = ?",
            game_id,
            idempotency_key,
        )
        if row is None:
            return None
        return HintRecord(row["game_id"], row["idempotency_key"], row["code"], when(row["created_at"]))

    async def add_round(self, round_: RoundRecord) -> None:
        await self.tx.execute(
            f"INSERT INTO rounds ({_ROUND_COLUMNS}) VALUES ({marks(_ROUND_COLUMNS)})",
            round_.id,
            round_.preset,
            round_.rules.canonical(),
            round_.holes,
            round_.par,
            round_.winnable_only,
            round_.difficulty,
            round_.created_at,
            round_.owner_id,
        )

    async def get_round(self, round_id: str) -> RoundRecord | None:
        row = await self.tx.fetchone(f"SELECT {_ROUND_COLUMNS} FROM rounds WHERE id = ?", round_id)
        return _round(row) if row else None

    async def list_rounds(
        self, owner_id: str, limit: int, after: tuple[datetime, str] | None, where: RoundFilter
    ) -> list[RoundRecord]:
        sql, args = ["r.owner_id = ?"], [owner_id]
        if where.preset is not None:
            sql.append("r.preset = ?")
            args.append(where.preset)
        if where.finished is not None:
            # Finished: all its holes were played out (a round's games are its holes, one at a time).
            sql.append(
                "(SELECT COUNT(*) FROM games g WHERE g.round_id = r.id AND g.status <> 'in_progress') "
                + ("= r.holes" if where.finished else "<> r.holes")
            )
        _created("r", where.created_after, where.created_before, sql, args)
        _keyset("r", after, sql, args)
        rows = await self.tx.fetchall(
            f"SELECT {_columns(_ROUND_COLUMNS, 'r')} FROM rounds r WHERE {' AND '.join(sql)} "
            "ORDER BY r.created_at DESC, r.id DESC LIMIT ?",
            *args,
            limit,
        )
        return [_round(r) for r in rows]

    async def round_games(self, round_id: str) -> list[GameRecord]:
        rows = await self.tx.fetchall(f"SELECT {_GAME_COLUMNS} FROM games WHERE round_id = ? ORDER BY hole", round_id)
        return [_game(r) for r in rows]

    async def pool_add(self, preset: str, difficulty: str, deal_id: str) -> None:
        await self.tx.execute(
            "INSERT INTO deal_pool (preset, difficulty, deal_id) VALUES (?, ?, ?)", preset, difficulty, deal_id
        )

    async def pool_take(self, preset: str, difficulty: str | None, player_id: str) -> str | None:
        # SKIP LOCKED lets concurrent takers on PostgreSQL each get a different deal without waiting.
        lock = "" if self.tx.dialect == "sqlite" else " FOR UPDATE OF p SKIP LOCKED"
        where = "p.preset = ?" + (" AND p.difficulty = ?" if difficulty else "")
        args = (preset, difficulty) if difficulty else (preset,)
        row = await self.tx.fetchone(
            f"SELECT p.id, p.deal_id FROM deal_pool p WHERE {where} "
            "AND NOT EXISTS (SELECT 1 FROM games g WHERE g.deal_id = p.deal_id AND g.owner_id = ?) "
            "AND NOT EXISTS (SELECT 1 FROM games g WHERE g.deal_id = p.deal_id AND g.status = 'in_progress' "
            f"AND g.holds_deal) ORDER BY p.uses, p.id LIMIT 1{lock}",
            *args,
            player_id,
        )
        if row is None:
            return None
        await self.tx.execute("UPDATE deal_pool SET uses = uses + 1 WHERE id = ?", row["id"])
        deal_id: str = row["deal_id"]
        return deal_id

    async def pool_claim_fresh(self, preset: str) -> str | None:
        lock = "" if self.tx.dialect == "sqlite" else " FOR UPDATE SKIP LOCKED"
        row = await self.tx.fetchone(
            "DELETE FROM deal_pool WHERE id = (SELECT id FROM deal_pool WHERE preset = ? AND uses = 0 "
            f"ORDER BY id LIMIT 1{lock}) RETURNING deal_id",
            preset,
        )
        return None if row is None else str(row["deal_id"])

    async def pool_counts(self, preset: str, difficulty: str) -> tuple[int, int]:
        row = await self.tx.fetchone(
            "SELECT COUNT(*) AS n, COALESCE(SUM(CASE WHEN uses = 0 THEN 1 ELSE 0 END), 0) AS fresh "
            "FROM deal_pool WHERE preset = ? AND difficulty = ?",
            preset,
            difficulty,
        )
        return (int(row["fresh"]), int(row["n"])) if row else (0, 0)

    async def pool_evict(self, preset: str, difficulty: str, closed_at: datetime) -> None:
        row = await self.tx.fetchone(
            "DELETE FROM deal_pool WHERE id = (SELECT id FROM deal_pool WHERE preset = ? AND difficulty = ? "
            "AND uses > 0 ORDER BY uses DESC, id LIMIT 1) RETURNING deal_id",
            preset,
            difficulty,
        )
        if row is not None:
            await self.tx.execute("UPDATE deals SET closed_at = ? WHERE id = ?", closed_at, row["deal_id"])

    async def daily_get(self, day: str, preset: str) -> str | None:
        row = await self.tx.fetchone("SELECT deal_id FROM daily_deals WHERE day = ? AND preset = ?", day, preset)
        return str(row["deal_id"]) if row else None

    async def daily_add(self, day: str, preset: str, deal_id: str, closes_at: datetime) -> None:
        try:
            await self.tx.execute(
                "INSERT INTO daily_deals (day, preset, deal_id) VALUES (?, ?, ?)", day, preset, deal_id
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err
        await self.tx.execute("UPDATE deals SET closed_at = ? WHERE id = ?", closes_at, deal_id)

    # -- players -------------------------------------------------------------------------------------------
    async def add_player(self, player: PlayerRecord) -> None:
        try:
            await self.tx.execute(
                f"INSERT INTO players ({_PLAYER_COLUMNS}) VALUES ({marks(_PLAYER_COLUMNS)})",
                player.id,
                player.display_name,
                player.created_at,
                player.issuer,
                player.subject,
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err

    async def get_player(self, player_id: str) -> PlayerRecord | None:
        row = await self.tx.fetchone(f"SELECT {_PLAYER_COLUMNS} FROM players WHERE id = ?", player_id)
        return _player(row) if row else None

    async def rename_player(self, player_id: str, display_name: str) -> PlayerRecord | None:
        row = await self.tx.fetchone(
            f"UPDATE players SET display_name = ? WHERE id = ? RETURNING {_PLAYER_COLUMNS}", display_name, player_id
        )
        return _player(row) if row else None

    async def find_player(self, issuer: str, subject: str) -> PlayerRecord | None:
        row = await self.tx.fetchone(
            f"SELECT {_PLAYER_COLUMNS} FROM players WHERE issuer = ? AND subject = ?", issuer, subject
        )
        return _player(row) if row else None

    async def add_refresh_token(self, token: RefreshTokenRecord) -> None:
        try:
            await self.tx.execute(
                f"INSERT INTO refresh_tokens ({_TOKEN_COLUMNS}) VALUES ({marks(_TOKEN_COLUMNS)})",
                token.id,
                token.player_id,
                token.token_hash,
                token.created_at,
                token.expires_at,
                token.revoked_at,
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err

    async def find_refresh_token(self, token_hash: str) -> RefreshTokenRecord | None:
        row = await self.tx.fetchone(f"SELECT {_TOKEN_COLUMNS} FROM refresh_tokens WHERE token_hash = ?", token_hash)
        return _token(row) if row else None

    async def revoke_refresh_token(self, token_hash: str, when: datetime) -> bool:
        # Every row with the hash is touched (so the count says whether it exists); a revoked one keeps its time.
        changed = await self.tx.execute(
            "UPDATE refresh_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE token_hash = ?", when, token_hash
        )
        return changed > 0


class SqlUnitOfWork:
    """One transaction. Leaving the block without ``commit`` rolls it back."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self._done = False

    async def __aenter__(self) -> SqlUnitOfWork:
        self._tx, self._token = await self._driver.begin()
        self._repo = SqlRepository(self._tx)
        self._tables = SqlTableStore(self._tx)
        self._webhooks = SqlWebhookStore(self._tx)
        self._records = SqlRecordStore(self._tx)
        return self

    @property
    def repo(self) -> SqlRepository:
        return self._repo

    @property
    def tables(self) -> SqlTableStore:
        """The live card Golf tables and their logs, in this unit of work's transaction."""
        return self._tables

    @property
    def webhooks(self) -> SqlWebhookStore:
        """Webhooks and their outbox, in this unit of work's transaction."""
        return self._webhooks

    @property
    def records(self) -> SqlRecordStore:
        """Histories, leaderboards and deal statistics, in this unit of work's transaction."""
        return self._records

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


def open_driver(
    url: str, pool_size: int = 10, sqlite_synchronous: str = "FULL", group_commit_delay: float = 0.0
) -> Driver:
    """The driver for a plain database URL (``group_commit_delay``: seconds, see ``GroupCommit``)."""
    if is_sqlite(url):
        return SqliteDriver(url, sqlite_synchronous)
    return PostgresDriver(url, pool_size, group_commit_delay)


class Database:
    """A database by plain URL, and a factory of units of work on it."""

    def __init__(
        self, url: str, pool_size: int = 10, sqlite_synchronous: str = "FULL", group_commit_delay: float = 0.0
    ) -> None:
        self.url = url
        self.driver = open_driver(url, pool_size, sqlite_synchronous, group_commit_delay)

    def __call__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.driver)

    async def ping(self) -> None:
        await self.driver.ping()

    async def dispose(self) -> None:
        await self.driver.close()
