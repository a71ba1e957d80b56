"""The webhook sender: a background loop that POSTs the outbox's due deliveries, signed, and retries with backoff.

Moves only ever write outbox rows (``golf.app.webhooks.WebhookOutbox``, inside the move's transaction); this loop
claims due rows in short transactions of its own (``SqlWebhookStore.claim``: ``FOR UPDATE SKIP LOCKED`` on
PostgreSQL, so any number of processes share the outbox and each delivery is attempted by one of them at a time),
POSTs them with at most ``concurrency`` in flight, and writes each outcome back. A slow or dead receiver holds one
delivery slot for at most ``timeout`` seconds, never a move, and never the database.

Each POST carries the event in proto3 JSON (``golf.v1.WebhookEvent``) and the headers

- ``X-Golf-Event``: ``TURN`` or ``MATCH_ENDED``;
- ``X-Golf-Delivery``: the delivery's id, the same on every attempt (receivers drop duplicates by it);
- ``X-Golf-Signature``: ``t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the webhook's secret>``.

A receiver verifies it as :func:`verify_signature` does: recompute the HMAC over the timestamp, a dot and the raw
body bytes; compare in constant time; refuse a timestamp too far from its clock (a replay).

Only a 2xx answer counts as delivered. Anything else (a timeout, a refused or reset connection, a redirect, any
other status, a host that resolves to an address not allowed) is a failed attempt: the delivery is due again after
``backoff * 2**(attempts - 1)`` seconds (at most ``backoff_max``), less up to half of that at random (so a
receiver back from an outage is not hit by every retry at once), and is given up after ``max_attempts``.

Deliveries are at least once: a process that dies after a receiver answered but before it wrote the outcome leaves
the delivery to be claimed again when its lease (``timeout`` and a margin) runs out.

Against SSRF, each delivery resolves the webhook's host and connects only if every address is a public one
(``golf.app.webhooks.address_allowed``), then connects to that very address (TLS still checks the host's name), so
a name that changes its answer between the check and the connection cannot lead anywhere else.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import ipaddress
import logging
import random
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

import httpx

from golf.adapters.db.repository import Database
from golf.adapters.db.webhook_store import Claimed
from golf.adapters.settings import Settings
from golf.api.webhook_handlers import event_body, event_type_name
from golf.app.errors import AppError
from golf.app.ports import Clock
from golf.app.webhooks import address_allowed

log = logging.getLogger("golf.webhooks")

SIGNATURE_HEADER = "X-Golf-Signature"
EVENT_HEADER = "X-Golf-Event"
DELIVERY_HEADER = "X-Golf-Delivery"
USER_AGENT = "golf-webhooks/1"
LEASE_MARGIN_SECONDS = 30.0
"""A claim lasts the attempt's timeout and this much more: long enough to write the outcome back."""
PRUNE_EVERY_SECONDS = 600.0
TOLERANCE_SECONDS = 300
"""How far from the receiver's clock a signature's timestamp may be, in :func:`verify_signature`."""

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""The addresses of a host (and port): the system's resolver unless a test gives another."""


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Golf-Signature`` value of ``body`` sent at ``timestamp`` (unix seconds)."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def verify_signature(
    secret: str, header: str, body: bytes, now: float | None = None, tolerance: int = TOLERANCE_SECONDS
) -> bool:
    """Whether ``header`` (an ``X-Golf-Signature`` value) signs ``body`` with ``secret`` and is recent: what a
    receiver should do, shown in Python."""
    t: int | None = None
    macs: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            t = int(value)
        elif key == "v1":
            macs.append(value)
    if t is None or not macs:
        return False
    if abs((time.time() if now is None else now) - t) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, mac) for mac in macs)


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (IPv4 first: a local receiver often listens on 127.0.0.1 only)."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    return sorted(addresses, key=lambda a: ":" in a)


class DeliveryRefused(Exception):
    """The webhook's host resolved to an address deliveries may not go to (or to none)."""


@dataclass(frozen=True, slots=True)
class SenderSettings:
    """The sender's knobs (``Settings.webhook_*`` describes each)."""

    max_attempts: int = 10
    backoff_seconds: float = 5.0
    backoff_max_seconds: float = 1800.0
    timeout_seconds: float = 5.0
    concurrency: int = 32
    poll_seconds: float = 1.0
    keep_days: float = 7.0
    allow_local_urls: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> SenderSettings:
        return cls(
            max_attempts=settings.webhook_max_attempts,
            backoff_seconds=settings.webhook_backoff_seconds,
            backoff_max_seconds=settings.webhook_backoff_max_seconds,
            timeout_seconds=settings.webhook_timeout_seconds,
            concurrency=settings.webhook_concurrency,
            poll_seconds=settings.webhook_poll_seconds,
            keep_days=settings.webhook_keep_days,
            allow_local_urls=settings.webhook_allow_local_urls,
        )


class WebhookSender:
    """The loop: ``run_forever`` as a task of its own (cancel it to stop), or ``start`` / ``stop``; ``run_once``
    for tests. ``wake`` makes it look at the outbox at once: the table use cases' ``WebhookOutbox`` calls it after
    committing deliveries."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        settings: SenderSettings | None = None,
        client: httpx.AsyncClient | None = None,
        resolver: Resolver = system_resolver,
        rng: random.Random | None = None,
    ) -> None:
        self.database = database
        self.clock = clock
        self.settings = settings or SenderSettings()
        s = self.settings
        self.client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(s.timeout_seconds),
            follow_redirects=False,
            limits=httpx.Limits(max_connections=s.concurrency, max_keepalive_connections=s.concurrency),
            trust_env=False,  # never through a proxy of the environment: the address check must hold
        )
        self.resolver = resolver
        self.rng = rng or random.Random()
        self._wake = asyncio.Event()
        self._in_flight: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None
        self._next_prune = 0.0

    # -- the loop --------------------------------------------------------------------------------------------
    def wake(self) -> None:
        """Look at the outbox now (deliveries were just committed). Never blocks, never raises."""
        self._wake.set()

    def start(self) -> None:
        """Run the loop in the background until ``stop``."""
        if self._task is None:
            self._task = asyncio.create_task(self.run_forever(), name="webhook-sender")

    async def stop(self) -> None:
        """Stop the loop started by ``start`` (as cancelling ``run_forever`` does)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def run_forever(self) -> None:
        """Claim and make deliveries until cancelled. Then deliveries in flight get up to ``timeout`` seconds to
        finish (the rest are claimed again when their lease runs out) and the HTTP client is closed."""
        try:
            while True:
                self._wake.clear()
                started = await self._claim_and_start()
                free = self.settings.concurrency - len(self._in_flight)
                if started and free > 0:
                    continue  # more may be due
                await self._prune_now_and_then()
                # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that comes as the wait ends,
                # and a stopping server would wait for this loop for ever.
                woken = asyncio.ensure_future(self._wake.wait())
                try:
                    await asyncio.wait({woken}, timeout=self.settings.poll_seconds)
                finally:
                    woken.cancel()
        finally:
            await self.close(self.settings.timeout_seconds)

    async def close(self, grace: float = 0.0) -> None:
        """Let deliveries in flight finish for up to ``grace`` seconds, cancel the rest, close the HTTP client."""
        if self._in_flight:
            _, late = await asyncio.wait(set(self._in_flight), timeout=grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        await self.client.aclose()

    async def run_once(self) -> int:
        """Claim what is due now (up to the free slots), make those deliveries and wait for them; how many were
        attempted. For tests and tools: the loop does this without waiting."""
        started = await self._claim_and_start()
        if self._in_flight:
            await asyncio.gather(*self._in_flight, return_exceptions=True)
        return started

    async def _claim_and_start(self) -> int:
        free = self.settings.concurrency - len(self._in_flight)
        if free <= 0:
            return 0
        now = self.clock()
        lease = now + timedelta(seconds=self.settings.timeout_seconds + LEASE_MARGIN_SECONDS)
        try:
            async with self.database() as uow:
                claimed = await uow.webhooks.claim(now, lease, free)
                await uow.commit()
        except AppError:
            return 0  # the database is out of reach or busy (its driver logs the outage): try again later
        except Exception:
            log.exception("claiming webhook deliveries failed")
            return 0
        for item in claimed:
            task = asyncio.create_task(self._deliver(item), name=f"webhook-delivery-{item.delivery.id}")
            self._in_flight.add(task)
            task.add_done_callback(self._finished)
        return len(claimed)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._in_flight.discard(task)
        if len(self._in_flight) == self.settings.concurrency - 1:
            self._wake.set()  # a slot came free while every slot was taken: more may be waiting

    async def _prune_now_and_then(self) -> None:
        if time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + PRUNE_EVERY_SECONDS
        try:
            async with self.database() as uow:
                await uow.webhooks.prune(self.clock() - timedelta(days=self.settings.keep_days))
                await uow.commit()
        except Exception:  # pruning is housekeeping: the next round tries again
            log.warning("removing finished webhook deliveries failed", exc_info=True)

    # -- one delivery ----------------------------------------------------------------------------------------
    async def _deliver(self, claimed: Claimed) -> None:
        delivery = claimed.delivery
        error: str | None
        if not claimed.live:
            await self._record(claimed, "the webhook was deleted", give_up=True, cancelled=True)
            return
        try:
            error = await self._post(claimed)
        except Exception as err:  # a bug, not the receiver's doing: still a failed attempt, retried
            log.exception("webhook delivery %s failed unexpectedly", delivery.id)
            error = f"internal error: {type(err).__name__}"
        if error is None:
            await self._record(claimed, None)
            return
        give_up = delivery.attempts >= self.settings.max_attempts
        if give_up:
            log.warning(
                "webhook delivery %s to webhook %s given up after %d attempts: %s",
                delivery.id,
                delivery.webhook_id,
                delivery.attempts,
                error,
            )
        else:
            log.debug("webhook delivery %s attempt %d failed: %s", delivery.id, delivery.attempts, error)
        await self._record(claimed, error, give_up=give_up)

    async def _post(self, claimed: Claimed) -> str | None:
        """POST one delivery; None when the receiver took it (2xx), else what went wrong."""
        delivery = claimed.delivery
        body = event_body(delivery)
        timestamp = int(self.clock().timestamp())
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            EVENT_HEADER: event_type_name(delivery.event.type),
            DELIVERY_HEADER: delivery.id,
            SIGNATURE_HEADER: sign(claimed.secret, timestamp, body),
        }
        try:
            async with asyncio.timeout(self.settings.timeout_seconds):
                url, extensions, host = await self._pinned(claimed.url)
                if host is not None:
                    headers["Host"] = host  # the name, not the address connected to
                request = self.client.build_request("POST", url, content=body, headers=headers, extensions=extensions)
                response = await self.client.send(request, stream=True)  # the answer's body is never read
                await response.aclose()
        except DeliveryRefused as err:
            return str(err)
        except (TimeoutError, httpx.TimeoutException):
            return f"no answer within {self.settings.timeout_seconds:g} s"
        except httpx.HTTPError as err:
            return f"{type(err).__name__}: {err}"[:200] or type(err).__name__
        except OSError as err:
            return f"could not resolve or connect: {err.strerror or err}"[:200]
        if 200 <= response.status_code < 300:
            return None
        return f"HTTP {response.status_code}"

    async def _pinned(self, url: str) -> tuple[httpx.URL, dict[str, object], str | None]:
        """``url`` with its host replaced by the address it resolves to, once every address it resolves to is
        allowed; the request extensions that keep TLS checking the host's own name; and the ``Host`` header to
        send (None: the URL's own)."""
        target = httpx.URL(url)
        host = target.host
        port = target.port or (443 if target.scheme == "https" else 80)
        try:
            ipaddress.ip_address(host)
        except ValueError:
            addresses = await self.resolver(host, port)
        else:
            addresses = [host]
        if not addresses:
            raise DeliveryRefused(f"{host} resolves to no address")
        refused = [a for a in addresses if not address_allowed(a, self.settings.allow_local_urls)]
        if refused:
            raise DeliveryRefused(f"{host} resolves to an address deliveries may not go to ({refused[0]})")
        extensions: dict[str, object] = {}
        if addresses[0] == host:
            return target, extensions, None
        if target.scheme == "https":
            extensions["sni_hostname"] = host
        header = target.netloc.decode("ascii")
        return target.copy_with(host=addresses[0].split("%", 1)[0]), extensions, header

    async def _record(
        self, claimed: Claimed, error: str | None, give_up: bool = False, cancelled: bool = False
    ) -> None:
        """Write an attempt's outcome; a database out of reach leaves the delivery to its lease (tried again)."""
        now = self.clock()
        try:
            async with self.database() as uow:
                store = uow.webhooks
                if error is None:
                    await store.delivered(claimed, now)
                else:
                    retry_at = None if give_up else now + timedelta(seconds=self.backoff(claimed.delivery.attempts))
                    await store.attempt_failed(claimed, error, retry_at, now, cancelled=cancelled)
                await uow.commit()
        except Exception:
            log.warning("the outcome of webhook delivery %s was not stored", claimed.delivery.id, exc_info=True)

    def backoff(self, attempts: int) -> float:
        """Seconds to wait after the ``attempts``-th failed attempt: exponential, capped, with jitter."""
        s = self.settings
        full = min(s.backoff_max_seconds, s.backoff_seconds * 2.0 ** max(0, attempts - 1))
        return full / 2 + self.rng.random() * full / 2
