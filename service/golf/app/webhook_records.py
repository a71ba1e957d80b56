"""What the webhook use cases store: the webhooks themselves and their outbox of deliveries. Pure records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

WEBHOOK_SCOPE = "golf.webhooks"
"""The token scope that lets a caller register webhooks covering every player of its issuer."""


class WebhookEventType(Enum):
    """What a webhook is told about (``WebhookEventType`` of the contract)."""

    TURN = "turn"
    """A person's seat is awaited (once per wait, not per move)."""
    MATCH_ENDED = "match_ended"
    """The table's match is over (one event per person's seat)."""


class Coverage(Enum):
    """Whose events a webhook receives."""

    PLAYER = "player"
    """The player who registered it."""
    ISSUER = "issuer"
    """Every player of the registering token's issuer."""


class DeliveryStatus(Enum):
    """Where a delivery of the outbox stands."""

    PENDING = "pending"
    """Waiting for its next attempt (or being attempted)."""
    DELIVERED = "delivered"
    """The receiver answered 2xx."""
    FAILED = "failed"
    """Every attempt failed; given up."""
    CANCELLED = "cancelled"
    """Its webhook was deleted before it was delivered."""


@dataclass(frozen=True, slots=True)
class WebhookRecord:
    """A registered webhook. ``secret`` signs its deliveries: stored as given (it must be at hand to sign), shown
    to a client only in the answer to the request that made it."""

    id: str
    url: str
    secret: str
    events: frozenset[WebhookEventType]
    coverage: Coverage
    issuer: str
    """The issuer of the registering token: whose players an ``ISSUER`` webhook covers."""
    player_id: str | None
    """The covered player (``PLAYER``); None for an issuer's webhook."""
    created_by: str
    """The player id of the registering token."""
    created_at: datetime
    deleted_at: datetime | None = None

    @property
    def live(self) -> bool:
        return self.deleted_at is None


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    """One event for one player: what a delivery's body says (never a card)."""

    type: WebhookEventType
    table_id: str
    seat: int
    player_id: str
    table_version: int
    at: datetime


@dataclass(frozen=True, slots=True)
class DeliveryRecord:
    """One event to POST to one webhook: a row of the outbox, written in the transaction of the move that made
    the event. ``next_attempt_at`` is also the lease of a claimed delivery: a sender that claims it moves it past
    the attempt's end, so a sender that dies mid-attempt leaves it to be claimed again once that time passes."""

    id: str
    webhook_id: str
    event: WebhookEvent
    status: DeliveryStatus = DeliveryStatus.PENDING
    attempts: int = 0
    next_attempt_at: datetime | None = None
    last_error: str | None = None
    delivered_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Subscription:
    """A live webhook that covers ``player_id`` (the observer's query): its id and the events it wants."""

    webhook_id: str
    player_id: str
    events: frozenset[WebhookEventType]


def encode_events(events: frozenset[WebhookEventType]) -> str:
    """The stored text of a set of event types: their values, sorted, comma-separated."""
    return ",".join(sorted(e.value for e in events))


def decode_events(text: str) -> frozenset[WebhookEventType]:
    """The event types stored as ``text`` by :func:`encode_events`."""
    return frozenset(WebhookEventType(v) for v in text.split(",") if v)
