"""Access tokens: this service signs its own (HS256) and checks every bearer token a client sends, ours or a trusted
portal's (asymmetric keys only, from a PEM or a JWK set), into a ``Caller``.

Both transports call ``Tokens.verify`` with the raw ``authorization`` value. A token is checked once per process and
remembered until its ``exp``; a cache hit costs a dict lookup and a clock read. Whether the token's player still
exists is asked of the database at most every ``player_check_seconds`` per player and process: a deleted player's
token stops working within that time, on every replica.
"""

from __future__ import annotations

import asyncio
import math
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from jwt.algorithms import get_default_algorithms

from golf.adapters.auth.jwks import JwkSet
from golf.app.errors import Unauthenticated
from golf.app.identity import OWN_ISSUER, AccessToken, Caller

ResolveExternal = Callable[[str, str, str | None], Awaitable[str]]
"""``(issuer, subject, display name or None) -> player id``: finds or creates the player of a portal's user."""
PlayerExists = Callable[[str], Awaitable[bool]]
"""``player id -> whether its row is still there``."""

PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey | ed25519.Ed25519PublicKey | ed448.Ed448PublicKey

MAX_TOKEN_CHARS = 8192
ASYMMETRIC_ALGORITHMS = frozenset(a for a in get_default_algorithms() if a[:2] in ("RS", "PS", "ES") or a == "EdDSA")
"""What a trusted issuer may sign with: a public key cannot be mistaken for an HMAC secret (algorithm confusion)."""

SIGN_IN_FIRST = "sign in first: send 'authorization: Bearer <access token>'"
_REQUIRED = ["exp", "iss", "aud", "sub"]
_SHAPE = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
_CURVES = {
    "ES256": "secp256r1",
    "ES256K": "secp256k1",
    "ES384": "secp384r1",
    "ES512": "secp521r1",
    "ES521": "secp521r1",
}

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


@dataclass(frozen=True)
class TrustedIssuer:
    """A portal whose tokens sign its own players in: ``iss`` ``issuer``, ``aud`` ``audience``, signed by
    ``public_key`` (PEM) or by a key of the JWK set at ``jwks_url`` (exactly one of the two)."""

    issuer: str
    audience: str
    public_key: str | None = None
    jwks_url: str | None = None
    algorithms: tuple[str, ...] = ("RS256", "ES256")
    jwks_refresh_seconds: float = 300.0
    """How long a fetched JWK set is used before it is fetched again: a key the portal removes (rotated away or
    revoked) stops signing its players in within this time. A token naming a key not in the set fetches it again
    (at most every 5 s; a ``kid`` found missing is refused without a fetch for 30 s: ``golf.adapters.auth.jwks``)."""
    jwks_timeout_seconds: float = 5.0
    """The most a request waits for a fetch of the JWK set (concurrent requests wait for the same fetch); past it
    the token is refused as UNAUTHENTICATED, "try again later"."""

    def __post_init__(self) -> None:
        # Settings hand over a list; a tuple keeps the frozen dataclass hashable.
        object.__setattr__(self, "algorithms", tuple(self.algorithms))
        if (self.public_key is None) == (self.jwks_url is None):
            raise ValueError(f"trusted issuer {self.issuer!r}: set exactly one of public_key and jwks_url")
        if not self.algorithms:
            raise ValueError(f"trusted issuer {self.issuer!r}: algorithms is empty")
        for name in ("jwks_refresh_seconds", "jwks_timeout_seconds"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 < value < math.inf):
                raise ValueError(f"trusted issuer {self.issuer!r}: {name} must be a positive number of seconds")
        refused = [a for a in self.algorithms if a not in ASYMMETRIC_ALGORITHMS]
        if refused:
            raise ValueError(
                f"trusted issuer {self.issuer!r}: algorithms {refused} refused; use asymmetric ones "
                f"({', '.join(sorted(ASYMMETRIC_ALGORITHMS))})"
            )


@dataclass(frozen=True, slots=True)
class _Trusted:
    """A trusted issuer made ready: its loaded key and the algorithms that fit it, or its JWKS client."""

    config: TrustedIssuer
    algorithms: list[str]
    key: PublicKey | None = None
    jwks: JwkSet | None = None


@dataclass(frozen=True, slots=True)
class _Verified:
    """A token checked in this process: its caller until ``expires``; ``subject`` for a portal's token (what its
    player was resolved from)."""

    caller: Caller
    expires: float
    subject: tuple[str, str] | None = None


class Tokens:
    """Signs this service's access tokens (``golf.app.ports.TokenIssuer``) and verifies bearer tokens."""

    def __init__(
        self,
        key: bytes,
        issuer: str,
        audience: str,
        access_seconds: int,
        trusted: Sequence[TrustedIssuer] = (),
        resolve_external: ResolveExternal | None = None,
        leeway: float = 30.0,
        player_exists: PlayerExists | None = None,
        player_check_seconds: float = 10.0,
        cache_size: int = 100_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if len(key) < 32:
            raise ValueError("the token signing key must be at least 32 bytes")
        if access_seconds <= 0:
            raise ValueError("access_seconds must be positive")
        self._key = key
        self._issuer = issuer
        self._audience = audience
        self._access_seconds = access_seconds
        self._leeway = leeway
        self._cache_size = cache_size
        self._clock = clock
        self._resolve = resolve_external
        self._exists = player_exists
        self._check_seconds = player_check_seconds
        self._trusted: dict[str, _Trusted] = {}
        for config in trusted:
            # A portal named like us would pass its players off as our guests.
            if config.issuer in (issuer, OWN_ISSUER) or config.issuer in self._trusted:
                raise ValueError(f"trusted issuer {config.issuer!r}: clashes with this service's or another issuer")
            self._trusted[config.issuer] = _prepare(config, clock)
        if self._trusted and resolve_external is None:
            raise ValueError("trusted issuers need resolve_external to map their subjects to players")
        self._verified: OrderedDict[str, _Verified] = OrderedDict()
        self._players: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._present: OrderedDict[str, float] = OrderedDict()  # player id -> known to exist until then
        self._asking: dict[str, asyncio.Task[bool]] = {}  # player id -> its existence check in flight

    def issue(self, player_id: str) -> AccessToken:
        """Sign an access token for ``player_id``, valid ``access_seconds`` from now."""
        now = int(self._clock())
        expires = now + self._access_seconds
        claims = {
            "iss": self._issuer,
            "aud": self._audience,
            "sub": player_id,
            "iat": now,
            "exp": expires,
            "jti": secrets.token_urlsafe(16),
            "scope": "play",
        }
        token = jwt.encode(claims, self._key, algorithm="HS256")
        return AccessToken(token=token, expires_at=datetime.fromtimestamp(expires, tz=UTC))

    async def verify(self, authorization: str | None) -> Caller:
        """The caller behind an ``authorization`` header (or gRPC metadata) value; ``Unauthenticated`` if none."""
        if not authorization:
            raise Unauthenticated(SIGN_IN_FIRST, invalid_token=False)
        parts = authorization.split()
        if len(parts) != 2 or parts[0].lower() != "bearer":
            raise Unauthenticated("the authorization value must be 'Bearer <access token>'")
        token = parts[1]
        if len(token) > MAX_TOKEN_CHARS:
            raise Unauthenticated(f"the access token is longer than {MAX_TOKEN_CHARS} characters")
        verified = self._verified.get(token)
        if verified is not None and self._clock() < verified.expires:
            self._verified.move_to_end(token)
        else:
            # Strict on cached entries: past exp, check again (the leeway then decides, as for a new token).
            verified = await self._checked(token)
        if await self._still_there(verified.caller.player_id):
            return verified.caller
        self._verified.pop(token, None)
        if verified.subject is None:
            raise Unauthenticated("the token's player no longer exists; create a guest or sign in again")
        # A portal's player is made on first sight: its row gone, the portal's user is seen for the first time
        # again (as a replica that never met them would), not handed the id of a player that no longer exists.
        self._players.pop(verified.subject, None)
        return (await self._checked(token)).caller

    async def _checked(self, token: str) -> _Verified:
        """Check a token and remember the outcome until its ``exp``."""
        verified = await self._check(token)
        if self._clock() < verified.expires:
            _remember(self._verified, token, verified, self._cache_size)
        return verified

    async def _still_there(self, player_id: str) -> bool:
        """Whether the player's row exists, asked at most every ``player_check_seconds`` (concurrent calls of one
        player share one question); a player just resolved from a portal's subject needs no asking."""
        if self._exists is None or self._present.get(player_id, -math.inf) > self._clock():
            return True
        asking = self._asking.get(player_id)
        if asking is None:
            asking = asyncio.create_task(self._ask(player_id, self._exists))
            self._asking[player_id] = asking
        return await asyncio.shield(asking)

    async def _ask(self, player_id: str, exists: PlayerExists) -> bool:
        try:
            there = await exists(player_id)
        finally:
            self._asking.pop(player_id, None)
        if there:
            _remember(self._present, player_id, self._clock() + self._check_seconds, self._cache_size)
        else:
            self._present.pop(player_id, None)
        return there

    async def _check(self, token: str) -> _Verified:
        """Verify a token not seen yet: its Caller and its ``exp``."""
        if _SHAPE.fullmatch(token) is None:
            raise Unauthenticated("the access token is malformed: it must be three base64url segments")
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except jwt.PyJWTError:
            raise Unauthenticated("the access token is malformed: its header or claims cannot be decoded") from None
        alg = header.get("alg")
        if not isinstance(alg, str) or alg.lower() == "none":
            raise Unauthenticated("unsigned tokens are refused")
        issuer = unverified.get("iss")
        if issuer is None:
            raise Unauthenticated("the token lacks the 'iss' claim")
        if issuer == self._issuer:
            claims = self._decode(token, self._key, ["HS256"], issuer, self._audience)
            return _Verified(Caller(claims["sub"], OWN_ISSUER, _scopes(claims)), claims["exp"])
        trusted = self._trusted.get(issuer) if isinstance(issuer, str) else None
        if trusted is None:
            raise Unauthenticated("the token's issuer is not trusted")
        if alg not in trusted.algorithms:
            raise Unauthenticated("the token's signing algorithm is not accepted for its issuer")
        key = trusted.key if trusted.key is not None else await _jwks_key(trusted, header, alg)
        claims = self._decode(token, key, trusted.algorithms, trusted.config.issuer, trusted.config.audience)
        player_id = await self._player_of(trusted.config.issuer, claims)
        caller = Caller(player_id, trusted.config.issuer, _scopes(claims))
        return _Verified(caller, claims["exp"], (trusted.config.issuer, claims["sub"]))

    def _decode(
        self, token: str, key: bytes | PublicKey, algorithms: list[str], issuer: str, audience: str
    ) -> dict[str, Any]:
        """Check signature and claims; times are checked here against ``clock`` (PyJWT reads the real clock)."""
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=algorithms,
                audience=audience,
                issuer=issuer,
                options={"require": _REQUIRED, "verify_exp": False, "verify_nbf": False, "verify_iat": False},
            )
        except jwt.PyJWTError as err:
            raise Unauthenticated(_refusal(err)) from None
        now = self._clock()
        claims["exp"] = _time_claim(claims, "exp")
        if claims["exp"] <= now - self._leeway:
            raise Unauthenticated("the access token has expired; refresh it")
        for name in ("nbf", "iat"):
            if name in claims and _time_claim(claims, name) > now + self._leeway:
                raise Unauthenticated("the access token is not valid yet")
        if not claims["sub"]:
            raise Unauthenticated("the token's 'sub' claim is empty")
        return claims

    async def _player_of(self, issuer: str, claims: dict[str, Any]) -> str:
        """The player behind a portal's subject, asked of ``resolve_external`` once per subject and process."""
        subject: str = claims["sub"]
        known = self._players.get((issuer, subject))
        if known is not None:
            self._players.move_to_end((issuer, subject))
            return known
        name = next((v for v in (claims.get("name"), claims.get("preferred_username")) if isinstance(v, str)), None)
        assert self._resolve is not None  # checked in __init__ whenever there are trusted issuers
        player_id = await self._resolve(issuer, subject, name)
        _remember(self._players, (issuer, subject), player_id, self._cache_size)
        # Just found or made: no need to ask whether it exists.
        _remember(self._present, player_id, self._clock() + self._check_seconds, self._cache_size)
        return player_id


def _prepare(config: TrustedIssuer, clock: Callable[[], float]) -> _Trusted:
    """Load a trusted issuer's PEM (keeping the algorithms that fit the key) or make its JWK set."""
    if config.jwks_url is not None:
        jwks = JwkSet(config.issuer, config.jwks_url, config.jwks_refresh_seconds, config.jwks_timeout_seconds, clock)
        return _Trusted(config, list(config.algorithms), jwks=jwks)
    assert config.public_key is not None  # TrustedIssuer holds exactly one of the two
    try:
        key = load_pem_public_key(config.public_key.encode())
    except (ValueError, UnsupportedAlgorithm) as err:
        raise ValueError(f"trusted issuer {config.issuer!r}: public_key is not a PEM public key") from err
    if not isinstance(key, PublicKey):
        raise ValueError(f"trusted issuer {config.issuer!r}: public_key must be an RSA, EC or Ed25519/Ed448 key")
    algorithms = [a for a in config.algorithms if _fits(key, a)]
    if not algorithms:
        raise ValueError(f"trusted issuer {config.issuer!r}: none of {list(config.algorithms)} fits its public key")
    return _Trusted(config, algorithms, key=key)


async def _jwks_key(trusted: _Trusted, header: dict[str, Any], alg: str) -> PublicKey:
    """The key of the issuer's JWK set named by the token's ``kid``."""
    assert trusted.jwks is not None
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise Unauthenticated("the token names no signing key of its issuer ('kid' header)")
    key = (await trusted.jwks.key(kid)).key
    if not isinstance(key, PublicKey) or not _fits(key, alg):
        raise Unauthenticated("the token's signing algorithm does not fit its issuer's key")
    return key


def _fits(key: PublicKey, alg: str) -> bool:
    """Whether ``alg`` can verify with ``key`` (PyJWT raises a bare TypeError on a mismatch)."""
    if alg.startswith(("RS", "PS")):
        return isinstance(key, rsa.RSAPublicKey)
    if alg.startswith("ES"):
        return isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == _CURVES.get(alg)
    return alg == "EdDSA" and isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey)


def _refusal(err: jwt.PyJWTError) -> str:
    """A readable reason for a PyJWT refusal; never any part of the token."""
    if isinstance(err, jwt.MissingRequiredClaimError):
        return f"the token lacks the {err.claim!r} claim"
    if isinstance(err, jwt.InvalidSignatureError):
        return "the token's signature does not match its issuer's key"
    if isinstance(err, jwt.InvalidAudienceError):
        return "the token is meant for another audience"
    if isinstance(err, jwt.InvalidIssuerError):
        return "the token's issuer is not trusted"
    if isinstance(err, jwt.InvalidAlgorithmError):
        return "the token's signing algorithm is not accepted for its issuer"
    if isinstance(err, jwt.exceptions.InvalidSubjectError):
        return "the token's 'sub' claim must be a string"
    return "the access token is invalid"


def _time_claim(claims: dict[str, Any], name: str) -> float:
    """A NumericDate claim as a float; NaN or a non-number would never expire, so they are refused."""
    value = claims[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise Unauthenticated(f"the token's {name!r} claim must be a number of seconds")
    return float(value)


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    scope = claims.get("scope")
    return frozenset(scope.split()) if isinstance(scope, str) else frozenset()


def _remember(cache: OrderedDict[_K, _V], key: _K, value: _V, size: int) -> None:
    """Put ``key`` last in a bounded LRU, dropping the least recently used past ``size``."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)
