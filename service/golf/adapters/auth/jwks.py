"""A trusted portal's JWK set: fetched from its JWKS URL, kept ``refresh_seconds``, and fetched again at most every
few seconds for a token naming a key not in it.

PyJWKClient fetches and parses the set (its HTTP client, its ``timeout``, its filter of signing keys); its caches
are not used, since it serves every lookup under one lock: while one fetch hangs on a slow endpoint, tokens whose key
is already known queue behind it, and each queued unknown ``kid`` fetches again in turn. Here lookups of known keys
never wait, concurrent fetches of one set are one fetch (counted in ``fetches``) that each waiter waits for at most
``timeout_seconds``, and a ``kid`` found missing is remembered for a while, so made-up ``kid``s cost no fetch.
"""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from collections.abc import Callable

import jwt
from jwt.api_jwk import PyJWK

from golf.app.errors import Unauthenticated

MIN_REFETCH_SECONDS = 5.0
"""Fetches of one set start at least this far apart (or ``refresh_seconds``, if shorter): a flood of unknown
``kid``s, or a failing endpoint, costs the portal one fetch per interval, not one per token."""
UNKNOWN_KID_SECONDS = 30.0
"""How long a ``kid`` a fetch found missing is refused without another fetch (unless a later fetch, made for another
reason, brings it): PyJWKClient's cooldown. A portal publishes a new key before it signs with it."""
MAX_UNKNOWN_KIDS = 10_000

_Fetched = dict[str, PyJWK] | Unauthenticated


class JwkSet:
    """The signing keys of one issuer's JWK set, looked up by ``kid``."""

    def __init__(
        self,
        issuer: str,
        url: str,
        refresh_seconds: float,
        timeout_seconds: float,
        clock: Callable[[], float],
        min_refetch_seconds: float = MIN_REFETCH_SECONDS,
        unknown_kid_seconds: float = UNKNOWN_KID_SECONDS,
    ) -> None:
        try:
            # Fetching and parsing only: no cache of PyJWKClient's (see the module's docstring).
            self._client = jwt.PyJWKClient(url, cache_jwk_set=False, cache_keys=False, timeout=timeout_seconds)
        except jwt.PyJWKClientError as err:
            raise ValueError(f"trusted issuer {issuer!r}: {err}") from err
        self._issuer = issuer
        self._refresh = refresh_seconds
        self._timeout = timeout_seconds
        self._clock = clock
        self._min_refetch = min(min_refetch_seconds, refresh_seconds)
        self._unknown_seconds = unknown_kid_seconds
        self._keys: dict[str, PyJWK] = {}
        self._fresh_until = -math.inf
        self._started_at = -math.inf  # when the last fetch started, whatever became of it
        self._failure: Unauthenticated | None = None  # why the last fetch failed, until one succeeds
        self._fetch: asyncio.Task[_Fetched] | None = None
        self._unknown: OrderedDict[str, float] = OrderedDict()  # kid -> refused without a fetch until then
        self.fetches = 0
        """Fetches started: what the tests count."""

    async def key(self, kid: str) -> PyJWK:
        """The set's signing key named ``kid``; ``Unauthenticated`` when it is not in the set or the set cannot be
        had (fetching it if it is older than ``refresh_seconds``, or lacks ``kid`` and was fetched a while ago)."""
        now = self._clock()
        fresh = now < self._fresh_until
        if fresh and kid in self._keys:
            return self._keys[kid]
        if self._unknown.get(kid, -math.inf) > now:
            raise self._not_among()
        if self._fetch is None and now < self._started_at + self._min_refetch:
            # Fetched (or tried) a moment ago: asking again would only load the portal.
            raise self._not_among() if fresh else (self._failure or self._unavailable())
        fetched = await self._fetched()
        if isinstance(fetched, Unauthenticated):
            raise fetched
        if kid in fetched:
            return fetched[kid]
        self._remember_unknown(kid, self._clock())
        raise self._not_among()

    async def _fetched(self) -> _Fetched:
        """The outcome of the fetch in flight, or of a new one; a waiter that is cancelled (its client went away)
        leaves the fetch to the others."""
        if self._fetch is None:
            self._started_at = self._clock()
            self.fetches += 1
            self._fetch = asyncio.create_task(self._fetch_keys(), name=f"jwks {self._issuer}")
        return await asyncio.shield(self._fetch)

    async def _fetch_keys(self) -> _Fetched:
        """Fetch the set (in a thread: PyJWKClient blocks), for at most ``timeout_seconds`` in all (urllib's
        timeout bounds each read, not the whole answer); the keys, or the refusal every waiter gets."""
        outcome: _Fetched
        try:
            signing = await asyncio.wait_for(asyncio.to_thread(self._client.get_signing_keys), self._timeout)
        except (TimeoutError, jwt.PyJWKClientConnectionError):
            outcome = self._unavailable()
        except (jwt.PyJWKClientError, jwt.PyJWKSetError, jwt.PyJWKError, ValueError):
            # No JSON object, no usable signing key (ValueError: the body is not JSON at all).
            outcome = Unauthenticated(f"the signing keys of issuer {self._issuer} could not be read")
        else:
            outcome = {k.key_id: k for k in signing if k.key_id}
            self._keys = outcome
            self._fresh_until = self._clock() + self._refresh
        finally:
            self._fetch = None  # even when cancelled (the loop stopping): the next lookup may fetch again
        self._failure = outcome if isinstance(outcome, Unauthenticated) else None
        return outcome

    def _remember_unknown(self, kid: str, now: float) -> None:
        self._unknown[kid] = now + self._unknown_seconds
        self._unknown.move_to_end(kid)
        while len(self._unknown) > MAX_UNKNOWN_KIDS:
            self._unknown.popitem(last=False)

    def _not_among(self) -> Unauthenticated:
        return Unauthenticated(f"the token's signing key is not among the keys of issuer {self._issuer}")

    def _unavailable(self) -> Unauthenticated:
        return Unauthenticated(f"the signing keys of issuer {self._issuer} could not be fetched; try again later")
