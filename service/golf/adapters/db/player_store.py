"""Players and their refresh tokens in SQL (``golf.app.ports.PlayerRepository``, ``RefreshTokenRepository``)."""

from __future__ import annotations

from datetime import datetime

from golf.adapters.db.drivers import Row, Transaction, UniqueViolation
from golf.adapters.db.rows import marks, unique_constraint, when
from golf.app.identity import PlayerRecord, RefreshTokenRecord
from golf.app.ports import AlreadyStored

_PLAYER_COLUMNS = "id, display_name, created_at, issuer, subject"
_TOKEN_COLUMNS = "id, player_id, token_hash, created_at, expires_at, revoked_at"

# SQLite names the columns of the unique constraint or index a row broke, not the constraint: these map them to
# the names PostgreSQL reports, so callers can tell the constraints apart on both databases.
_SQLITE_UNIQUE = {
    "players.id": "players_pkey",
    "players.issuer, players.subject": "uq_players_issuer_subject",
    "refresh_tokens.id": "refresh_tokens_pkey",
    "refresh_tokens.token_hash": "uq_refresh_tokens_hash",
}


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


class SqlPlayerStore:
    """Players, in one transaction."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

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
            raise AlreadyStored(unique_constraint(err, _SQLITE_UNIQUE)) from err

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


class SqlRefreshTokenStore:
    """Refresh tokens, in one transaction."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

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
            raise AlreadyStored(unique_constraint(err, _SQLITE_UNIQUE)) from err

    async def find_refresh_token(self, token_hash: str) -> RefreshTokenRecord | None:
        row = await self.tx.fetchone(f"SELECT {_TOKEN_COLUMNS} FROM refresh_tokens WHERE token_hash = ?", token_hash)
        return _token(row) if row else None

    async def revoke_refresh_token(self, token_hash: str, when: datetime) -> bool:
        # Every row with the hash is touched (so the count says whether it exists); a revoked one keeps its time.
        changed = await self.tx.execute(
            "UPDATE refresh_tokens SET revoked_at = COALESCE(revoked_at, ?) WHERE token_hash = ?", when, token_hash
        )
        return changed > 0
