"""Who is calling: the ``Caller`` the edge makes from a bearer token, and the player records behind it.

The engine never hears of players; the use cases decide ownership from ``Caller.player_id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

LEGACY_OWNER = "legacy"
"""The owner of games and rounds stored before players existed. No token can carry it (player ids are UUIDs),
so nobody can act for it; its games stay readable by anyone signed in."""

OWN_ISSUER = "golf"
"""``PlayerRecord.issuer`` of guests, who signed in with this service's own tokens."""


@dataclass(frozen=True, slots=True)
class Caller:
    """A verified identity: the player, the token's issuer and its scopes."""

    player_id: str
    issuer: str = OWN_ISSUER
    scopes: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """A player. Guests have ``issuer`` ``OWN_ISSUER`` and no subject; a portal's players have the portal's
    issuer and the ``sub`` claim of its tokens (unique per issuer)."""

    id: str
    display_name: str
    created_at: datetime
    issuer: str = OWN_ISSUER
    subject: str | None = None


@dataclass(frozen=True, slots=True)
class RefreshTokenRecord:
    """A refresh token, stored by the SHA-256 (hex) of its text only, so a stolen database holds no tokens."""

    id: str
    player_id: str
    token_hash: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class AccessToken:
    """A signed access token and when it expires."""

    token: str
    expires_at: datetime
