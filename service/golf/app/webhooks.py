"""Webhooks: a portal (or a player's app back end) is told when a person's move is awaited at a live table or a
match ends, so it can send push notifications.

Registering, listing and deleting webhooks are the use cases of :class:`WebhookService`. Events reach the outbox
through :class:`WebhookOutbox`, an observer of the table use cases: it runs inside each table mutation's
transaction and writes one delivery row per (webhook, event), so a move and its deliveries commit together or not
at all, and a refused move writes nothing. Nothing here sends anything: a sender (``golf.adapters.webhook_sender``)
claims due rows of the outbox in the background, so a slow or dead receiver never holds up play.

Who may do what:

| command | who |
| --- | --- |
| create (covering the caller's player) | any signed-in caller |
| create (covering every player of an issuer) | a token of a trusted issuer (not this service's own) carrying the
  scope ``golf.webhooks``, for its own issuer only |
| get, delete | the player a webhook covers; a ``golf.webhooks`` token of the webhook's issuer; anyone else is
  told it does not exist |
| list | the caller's own player's webhooks; with a ``golf.webhooks`` token, every webhook of its issuer |
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from golf.app.addresses import is_public
from golf.app.errors import AppError, IdempotencyKeyReused, InvalidArgument, NotFound, PermissionDenied
from golf.app.idempotency import check_key, id_from_key
from golf.app.identity import OWN_ISSUER, Caller
from golf.app.page_tokens import check_page_size, decode_page_token, encode_page_token
from golf.app.ports import AlreadyStored, Clock, RateLimiter, UnitOfWork, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.tables.state import Table
from golf.app.tables.status import TableStatus
from golf.app.tables.writer import Appended
from golf.app.webhook_records import (
    WEBHOOK_SCOPE,
    Coverage,
    DeliveryRecord,
    WebhookEvent,
    WebhookEventType,
    WebhookRecord,
)
from golf.engine.cardgolf.state import Phase

MAX_WEBHOOKS = 10
"""Live webhooks per owner: per player for a player's own, per issuer for those covering all its players."""
MAX_URL_LENGTH = 2048
LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
"""The only hosts a development server may allow (``allow_local_urls``): this machine."""
_RESERVED_SUFFIXES = (".localhost", ".local", ".internal", ".intranet", ".lan", ".home.arpa", ".localdomain", ".arpa")
"""Names that never reach the public internet (RFC 6761, RFC 6762, RFC 8375 and common private suffixes)."""
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_TOP_LABEL = re.compile(r"[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?")
"""A top-level domain starts with a letter: ``10.1`` or ``0x7f.1`` (which resolvers read as IPv4 addresses) are
no host names."""
_WEBHOOK_IDS = uuid.UUID("0b7e4f0c-2a8d-4d63-9c41-6a2f1e5b8d90")
"""The namespace of webhook ids made from (issuer, player, idempotency key), so a retried create finds its hook."""


class TooManyWebhooks(AppError):
    """The owner already has ``MAX_WEBHOOKS`` live webhooks: delete one first."""


def secure_secret() -> str:
    """A fresh signing secret, drawn with ``secrets`` (256 bits)."""
    return "whsec_" + secrets.token_urlsafe(32)


# -- URLs ------------------------------------------------------------------------------------------------------
def check_url(url: str, allow_local: bool = False) -> str:
    """``url`` when a webhook may POST to it; otherwise ``InvalidArgument`` on ``url`` saying why.

    Only ``https`` URLs of public hosts: an IP address must be a global one, and a host name must look like a
    public DNS name (a top-level domain of letters, none of the private suffixes). With ``allow_local`` (tests and
    development) ``http`` and ``https`` URLs of ``localhost``, ``127.0.0.1`` and ``::1`` pass too. Names are
    resolved only when a delivery is made (``address_allowed`` checks each address then): that is when a name
    pointing at a private address is refused."""
    if not url:
        raise InvalidArgument("url", "url is required")
    if len(url) > MAX_URL_LENGTH:
        raise InvalidArgument("url", f"url must be at most {MAX_URL_LENGTH} characters")
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        raise InvalidArgument("url", "url must not hold spaces or control characters")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is no number or out of range
    except ValueError:
        raise InvalidArgument("url", f"url {shown(url)} is not a URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("https", "http"):
        raise InvalidArgument("url", "url must be an https URL")
    host = parts.hostname
    if not host:
        raise InvalidArgument("url", "url must name a host")
    if parts.username is not None or parts.password is not None:
        raise InvalidArgument("url", "url must not hold a user name or password")
    if parts.fragment:
        raise InvalidArgument("url", "url must not have a fragment (#...)")
    if host in LOCAL_HOSTS:
        if not allow_local:
            raise InvalidArgument("url", "url must name a public host, not this machine")
        return url
    if scheme != "https":
        raise InvalidArgument("url", "url must be an https URL")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        _check_host_name(host)
    else:
        if not is_public(address):  # however written: NAT64, 6to4, IPv4-compatible... (golf.app.addresses)
            raise InvalidArgument("url", "url must name a public host, not a private, loopback or reserved address")
    return url


def _check_host_name(host: str) -> None:
    name = host.removesuffix(".")
    labels = name.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        raise InvalidArgument("url", "url must name a public host (a full DNS name; IDN in its xn-- form)")
    if not _TOP_LABEL.fullmatch(labels[-1]) or name == "localhost" or name.endswith(_RESERVED_SUFFIXES):
        raise InvalidArgument("url", "url must name a public host")


def address_allowed(address: str, allow_local: bool = False) -> bool:
    """Whether a delivery may connect to ``address`` (an IP address a webhook's host resolved to): a global
    unicast address however written (``golf.app.addresses.is_public``), or with ``allow_local`` a loopback one.
    Checked at each delivery, so a name that resolves to a private address (DNS rebinding included) is never
    called."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback:
        return allow_local
    return is_public(ip)


# -- the use cases ---------------------------------------------------------------------------------------------
def is_portal(caller: Caller) -> bool:
    """Whether ``caller`` may manage the webhooks of every player of its issuer: a token of a trusted issuer
    carrying ``golf.webhooks`` (this service's own tokens never may, whatever they carry)."""
    return WEBHOOK_SCOPE in caller.scopes and caller.issuer != OWN_ISSUER


def manages(caller: Caller, hook: WebhookRecord) -> bool:
    """Whether ``caller`` may see and delete ``hook``."""
    if is_portal(caller) and hook.issuer == caller.issuer:
        return True
    return hook.coverage is Coverage.PLAYER and hook.player_id == caller.player_id


@dataclass
class WebhookService:
    """Registering, listing and deleting webhooks. ``ids`` and ``secrets`` draw fresh values (tests replace
    them); ``allow_local_urls`` lets URLs of this machine through (tests, development)."""

    uow: UnitOfWorkFactory
    clock: Clock
    limiter: RateLimiter
    allow_local_urls: bool = False
    max_per_owner: int = MAX_WEBHOOKS
    ids: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    secrets: Callable[[], str] = secure_secret

    async def create(
        self,
        caller: Caller,
        url: str,
        events: Iterable[WebhookEventType],
        coverage: Coverage | None = None,
        idempotency_key: str | None = None,
    ) -> WebhookRecord:
        """Register a webhook POSTing ``events`` to ``url``: covering the caller's player, or (``Coverage.ISSUER``,
        the default for a portal's ``golf.webhooks`` token) every player of the caller's issuer. The record holds
        the secret, for this answer only. With ``idempotency_key`` a retry returns the webhook the first request
        made; the same key with another request is ``IdempotencyKeyReused``."""
        wanted = frozenset(events)
        if not wanted:
            raise InvalidArgument("events", "events must name at least one event type")
        url = check_url(url, self.allow_local_urls)
        check_key(idempotency_key)
        portal = is_portal(caller)
        if coverage is None:
            coverage = Coverage.ISSUER if portal else Coverage.PLAYER
        if coverage is Coverage.ISSUER and not portal:
            raise PermissionDenied(
                f"a webhook for every player of an issuer needs a trusted issuer's token with the scope {WEBHOOK_SCOPE}"
            )
        await self.limiter.hit("create", caller.player_id)
        hook = WebhookRecord(
            id=self.ids() if idempotency_key is None else self._hook_id(caller, idempotency_key),
            url=url,
            secret=self.secrets(),
            events=wanted,
            coverage=coverage,
            issuer=caller.issuer,
            player_id=caller.player_id if coverage is Coverage.PLAYER else None,
            created_by=caller.player_id,
            created_at=self.clock(),
        )
        owner = caller.player_id if coverage is Coverage.PLAYER else caller.issuer
        async with self.uow() as uow:
            if idempotency_key is not None:
                first = await uow.webhooks.get_webhook(hook.id)
                if first is not None:
                    return self._retried(first, hook)
            if await uow.webhooks.count_webhooks(coverage, owner) >= self.max_per_owner:
                raise TooManyWebhooks(f"there are already {self.max_per_owner} webhooks here: delete one first")
            try:
                await uow.webhooks.add_webhook(hook)
                await uow.commit()
                return hook
            except AlreadyStored:
                if idempotency_key is None:
                    raise
        async with self.uow() as uow:  # a retry of the same request committed first
            first = await uow.webhooks.get_webhook(hook.id)
        if first is None:  # pragma: no cover - a webhook is never removed, only marked deleted
            raise NotFound(f"no webhook {shown(hook.id)}")
        return self._retried(first, hook)

    @staticmethod
    def _hook_id(caller: Caller, key: str) -> str:
        return id_from_key(_WEBHOOK_IDS, caller.issuer, caller.player_id, key)

    @staticmethod
    def _retried(first: WebhookRecord, asked: WebhookRecord) -> WebhookRecord:
        """The answer to a retried create: the webhook the first request made, secret included."""
        if (first.url, first.events, first.coverage, first.created_by) != (
            asked.url,
            asked.events,
            asked.coverage,
            asked.created_by,
        ):
            raise IdempotencyKeyReused("this idempotency key was already used to register another webhook")
        if not first.live:
            raise NotFound(f"the webhook this idempotency key registered, {shown(first.id)}, was deleted")
        return first

    async def get(self, caller: Caller, webhook_id: str) -> WebhookRecord:
        """A live webhook the caller manages (``NotFound`` otherwise)."""
        async with self.uow() as uow:
            hook = await uow.webhooks.get_webhook(webhook_id)
        if hook is None or not hook.live or not manages(caller, hook):
            raise NotFound(f"no webhook {shown(webhook_id)}")
        return hook

    async def list_webhooks(
        self, caller: Caller, page_size: int = 0, page_token: str = ""
    ) -> tuple[list[WebhookRecord], str]:
        """The webhooks the caller manages, newest first, a page at a time; the token is empty on the last page."""
        size = check_page_size(page_size)
        after = decode_page_token(page_token) if page_token else None
        async with self.uow() as uow:
            if is_portal(caller):
                hooks = await uow.webhooks.list_webhooks(size + 1, after, issuer=caller.issuer)
            else:
                hooks = await uow.webhooks.list_webhooks(size + 1, after, player_id=caller.player_id)
        page = hooks[:size]
        token = encode_page_token(page[-1].created_at, page[-1].id) if len(hooks) > size else ""
        return page, token

    async def delete(self, caller: Caller, webhook_id: str) -> None:
        """Delete a webhook the caller manages; its deliveries not yet made are dropped."""
        async with self.uow() as uow:
            hook = await uow.webhooks.get_webhook(webhook_id)
            if hook is None or not hook.live or not manages(caller, hook):
                raise NotFound(f"no webhook {shown(webhook_id)}")
            await uow.webhooks.delete_webhook(webhook_id, self.clock())
            await uow.commit()


# -- events of the tables --------------------------------------------------------------------------------------
def _wait(table: Table) -> tuple[int, int] | None:
    """What a seat awaited at ``table`` waits in: the hole, and its setup (-1) or the turn number. A seat awaited
    before and after a mutation in the same wait was not told anything new (it drew and must now place)."""
    hole = table.hole
    if hole is None:
        return None
    return table.hole_index, -1 if hole.phase is Phase.SETUP else hole.turns


def table_events(appended: Appended) -> list[WebhookEvent]:
    """The events of one table mutation: a ``TURN`` for each person's seat that a new wait began for (one per
    seat and wait, however many entries the mutation appended, bots' turns included), and a ``MATCH_ENDED`` for
    each person's seat when the match ended. Bots are told nothing."""
    before, after = appended.before, appended.after
    version, at, table_id = after.version, appended.at, appended.table_id
    events: list[WebhookEvent] = []
    waiting_before = set(before.awaiting())
    wait_before, wait_after = _wait(before), _wait(after)
    for seat in after.awaiting():
        now = after.seats[seat]
        if not now.human or now.player_id is None:
            continue
        then = before.seats[seat] if seat < len(before.seats) else None
        same_wait = seat in waiting_before and wait_before == wait_after
        if same_wait and then is not None and then.human and then.player_id == now.player_id:
            continue
        events.append(WebhookEvent(WebhookEventType.TURN, table_id, seat, now.player_id, version, at))
    if after.status is TableStatus.OVER and before.status is not TableStatus.OVER:
        for seat, taken in enumerate(after.seats):
            if taken.player_id is not None:
                events.append(WebhookEvent(WebhookEventType.MATCH_ENDED, table_id, seat, taken.player_id, version, at))
    return events


@dataclass
class WebhookOutbox:
    """The table use cases' observer that writes deliveries (``TableService.observers``), and their publisher that
    wakes the sender once those deliveries are committed (``TableService.publishers``: ``published``).

    Inside a mutation's transaction: the events of the mutation (``table_events``), the live webhooks covering
    their players (one query, only when there are events), and one outbox row per (webhook, event) it wants."""

    ids: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    wake: Callable[[], None] | None = None
    """Called after a commit that wrote deliveries (the sender's ``wake``), so they go out at once."""
    _wrote = False

    async def __call__(self, uow: UnitOfWork, appended: Appended) -> None:
        events = table_events(appended)
        if not events:
            return
        subscriptions = await uow.webhooks.subscriptions(sorted({e.player_id for e in events}))
        if not subscriptions:
            return
        deliveries = [
            DeliveryRecord(self.ids(), sub.webhook_id, event, next_attempt_at=event.at)
            for event in events
            for sub in subscriptions
            if sub.player_id == event.player_id and event.type in sub.events
        ]
        if deliveries:
            await uow.webhooks.add_deliveries(deliveries)
            self._wrote = True  # a rolled-back mutation only costs the sender one needless look

    def published(self, appended: Appended) -> None:
        """A ``Publisher``: after a commit, wake the sender if deliveries were written since the last wake."""
        if self._wrote:
            self._wrote = False
            if self.wake is not None:
                self.wake()


__all__ = [
    "MAX_WEBHOOKS",
    "TooManyWebhooks",
    "WebhookOutbox",
    "WebhookService",
    "address_allowed",
    "check_url",
    "is_portal",
    "manages",
    "table_events",
]
