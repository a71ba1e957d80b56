"""Players and sign-in: guests with refresh tokens, and the players of trusted portals, made on first sight."""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import unicodedata
import uuid
from dataclasses import dataclass
from datetime import timedelta

from golf.app.errors import InvalidArgument, NotFound, PermissionDenied, Unauthenticated
from golf.app.identity import AccessToken, Caller, PlayerRecord, RefreshTokenRecord
from golf.app.ports import AlreadyStored, Clock, RateLimiter, TokenIssuer, UnitOfWorkFactory

MAX_DISPLAY_NAME = 64
MAX_REFRESH_TOKEN = 256
ME = "me"
# The key every guest sign-up of the service is counted under (``sign_up_service``).
ALL_SIGN_UPS = "all"
IPV4_NETWORK_BITS = 24
IPV6_NETWORK_BITS = 64


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A player with a new access token, and the refresh token when one was just made."""

    player: PlayerRecord
    access: AccessToken
    refresh: RefreshTokenRecord | None = None
    refresh_token: str = ""
    """The refresh token's text: given out once, never stored (the database keeps its hash)."""


def token_hash(token: str) -> str:
    """How a refresh token is stored and looked up: high-entropy random text needs no slow hash."""
    return hashlib.sha256(token.encode()).hexdigest()


def clean_display_name(name: str, field: str = "displayName") -> str:
    """A display name as shown to others: trimmed, at most 64 characters, no control, format or line-breaking
    characters (names are shown on one line)."""
    name = name.strip()
    if len(name) > MAX_DISPLAY_NAME:
        raise InvalidArgument(field, f"{field} must be at most {MAX_DISPLAY_NAME} characters")
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp") for ch in name):
        raise InvalidArgument(field, f"{field} must not hold control or invisible characters")
    return name


def network_of(address: str) -> str:
    """The network an address is counted with for sign-ups: its /24 (IPv4, also IPv4-mapped IPv6) or its /64
    (IPv6); one ISP customer or rented block usually holds a whole one. Anything else (``unknown``, a Unix socket)
    is its own network."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # a zone index (fe80::1%eth0) is not part of it
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    bits = IPV4_NETWORK_BITS if ip.version == 4 else IPV6_NETWORK_BITS
    return str(ipaddress.ip_network((ip, bits), strict=False))


class PlayerService:
    def __init__(
        self,
        uow: UnitOfWorkFactory,
        clock: Clock,
        tokens: TokenIssuer,
        limiter: RateLimiter,
        refresh_days: int = 365,
    ) -> None:
        self.uow = uow
        self.clock = clock
        self.tokens = tokens
        self.limiter = limiter
        self.refresh_days = refresh_days

    async def create_guest(self, display_name: str, address: str) -> SignedIn:
        """A new guest player, its access token and a refresh token the device keeps.

        Counted per address, then per network, then for the whole service: in that order, so an address refused
        its own allowance uses up none of its network's or the service's."""
        await self.limiter.hit("sign_in", address)
        await self.limiter.hit("sign_up_network", network_of(address))
        await self.limiter.hit("sign_up_service", ALL_SIGN_UPS)
        name = clean_display_name(display_name) or f"Guest {secrets.token_hex(2)}"
        now = self.clock()
        player = PlayerRecord(str(uuid.uuid4()), name, now)
        text = secrets.token_urlsafe(32)
        refresh = RefreshTokenRecord(
            str(uuid.uuid4()), player.id, token_hash(text), now, now + timedelta(days=self.refresh_days)
        )
        async with self.uow() as uow:
            await uow.players.add_player(player)
            await uow.refresh_tokens.add_refresh_token(refresh)
            await uow.commit()
        return SignedIn(player, self.tokens.issue(player.id), refresh, text)

    async def refresh(self, refresh_token: str, address: str) -> SignedIn:
        """A new access token for the player of a refresh token that is known, not revoked and not expired."""
        await self.limiter.hit("sign_in", address)
        _, player = await self._refresh_record(refresh_token)
        return SignedIn(player, self.tokens.issue(player.id))

    async def revoke(self, refresh_token: str, address: str) -> None:
        """The refresh token stops working. Revoking a token twice is fine; an unknown token is refused."""
        await self.limiter.hit("sign_in", address)
        _check_refresh_text(refresh_token)
        async with self.uow() as uow:
            found = await uow.refresh_tokens.revoke_refresh_token(token_hash(refresh_token), self.clock())
            await uow.commit()
        if not found:
            raise Unauthenticated("the refresh token is not one this service gave out")

    async def _refresh_record(self, refresh_token: str) -> tuple[RefreshTokenRecord, PlayerRecord]:
        _check_refresh_text(refresh_token)
        async with self.uow() as uow:
            record = await uow.refresh_tokens.find_refresh_token(token_hash(refresh_token))
            player = await uow.players.get_player(record.player_id) if record is not None else None
        if record is None or player is None:
            raise Unauthenticated("the refresh token is not one this service gave out")
        if record.revoked_at is not None:
            raise Unauthenticated("the refresh token was revoked; create a guest or sign in again")
        if record.expires_at <= self.clock():
            raise Unauthenticated("the refresh token has expired; create a guest or sign in again")
        return record, player

    async def get_player(self, caller: Caller, player_id: str) -> PlayerRecord:
        """A player's public profile; ``me`` is the caller."""
        wanted = caller.player_id if player_id == ME else player_id
        async with self.uow() as uow:
            player = await uow.players.get_player(wanted)
        if player is None:
            raise NotFound("no player has that id")
        return player

    async def exists(self, player_id: str) -> bool:
        """Whether the player's row is still there: the edge refuses the tokens of a deleted player."""
        async with self.uow() as uow:
            return await uow.players.get_player(player_id) is not None

    async def set_display_name(self, caller: Caller, player_id: str, display_name: str) -> PlayerRecord:
        """Change the caller's own display name (``me`` or their id); another player's is PERMISSION_DENIED."""
        if player_id not in (ME, caller.player_id):
            raise PermissionDenied("a player changes only their own display name")
        name = clean_display_name(display_name)
        if not name:
            raise InvalidArgument("displayName", "displayName must hold a visible character")
        await self.limiter.hit("create", caller.player_id)
        async with self.uow() as uow:
            player = await uow.players.rename_player(caller.player_id, name)
            if player is None:
                raise NotFound("no player has that id")
            await uow.commit()
        return player

    async def external_player(self, issuer: str, subject: str, display_name: str | None) -> str:
        """The player id of a trusted portal's player, made on first sight and the same every time after."""
        async with self.uow() as uow:
            found = await uow.players.find_player(issuer, subject)
        if found is not None:
            return found.id
        try:
            name = clean_display_name(display_name or "")
        except InvalidArgument:
            name = ""
        player = PlayerRecord(
            str(uuid.uuid4()), name or f"Player {secrets.token_hex(2)}", self.clock(), issuer, subject
        )
        try:
            async with self.uow() as uow:
                await uow.players.add_player(player)
                await uow.commit()
            return player.id
        except AlreadyStored:
            # Another request (or replica) made this player first: everyone gets that one.
            async with self.uow() as uow:
                again = await uow.players.find_player(issuer, subject)
            assert again is not None
            return again.id


def _check_refresh_text(token: str) -> None:
    if not token:
        raise InvalidArgument("refreshToken", "refreshToken is required")
    if len(token) > MAX_REFRESH_TOKEN:
        raise Unauthenticated("the refresh token is not one this service gave out")
