"""The SQL store of webhooks and their outbox of deliveries (``webhooks``, ``webhook_deliveries``).

The use cases reach it inside a unit of work (``SqlUnitOfWork.webhooks``): the table observer writes deliveries in
the transaction of the move that made them. The sender (``golf.adapters.webhook_sender``) claims due deliveries in
short transactions of its own: on PostgreSQL with ``FOR UPDATE SKIP LOCKED``, so several processes never claim the
same row; on SQLite the one writer at a time does the same. A claim moves the row's ``next_attempt_at`` past the
attempt's end: that is its lease. A sender that dies mid-attempt leaves the row to be claimed again when it runs
out, and the finishing updates name the claim, so a sender whose lease ran out changes nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from golf.adapters.db.drivers import Row, Transaction, UniqueViolation
from golf.adapters.db.rows import maybe_when, when
from golf.app.ports import AlreadyStored
from golf.app.webhook_records import (
    Coverage,
    DeliveryRecord,
    DeliveryStatus,
    Subscription,
    WebhookEvent,
    WebhookEventType,
    WebhookRecord,
    decode_events,
    encode_events,
)

_HOOK_COLUMNS = "id, url, secret, events, coverage, issuer, player_id, created_by, created_at, deleted_at"
_DELIVERY_COLUMNS = (
    "id, webhook_id, event, table_id, seat, player_id, table_version, event_time, status, attempts, "
    "next_attempt_at, claim_token, last_error, finished_at"
)
_DELIVERY_MARKS = ", ".join("?" * len(_DELIVERY_COLUMNS.split(",")))
_ROWS_PER_INSERT = 60
"""14 placeholders a row: 840 a statement (the PostgreSQL driver numbers at most 999)."""
_SQLITE_UNIQUE = {"webhooks.id": "webhooks_pkey", "webhook_deliveries.id": "webhook_deliveries_pkey"}
_SQLITE_PREFIX = "UNIQUE constraint failed: "
MAX_ERROR_LENGTH = 255


def _hook(row: Row) -> WebhookRecord:
    return WebhookRecord(
        id=row["id"],
        url=row["url"],
        secret=row["secret"],
        events=decode_events(row["events"]),
        coverage=Coverage(row["coverage"]),
        issuer=row["issuer"],
        player_id=row["player_id"],
        created_by=row["created_by"],
        created_at=when(row["created_at"]),
        deleted_at=maybe_when(row["deleted_at"]),
    )


def _delivery(row: Row) -> DeliveryRecord:
    event = WebhookEvent(
        type=WebhookEventType(row["event"]),
        table_id=row["table_id"],
        seat=row["seat"],
        player_id=row["player_id"],
        table_version=row["table_version"],
        at=when(row["event_time"]),
    )
    return DeliveryRecord(
        id=row["id"],
        webhook_id=row["webhook_id"],
        event=event,
        status=DeliveryStatus(row["status"]),
        attempts=row["attempts"],
        next_attempt_at=maybe_when(row["next_attempt_at"]),
        last_error=row["last_error"],
        delivered_at=maybe_when(row["finished_at"]) if row["status"] == DeliveryStatus.DELIVERED.value else None,
    )


def _constraint(err: UniqueViolation) -> str:
    text = err.constraint
    if text.startswith(_SQLITE_PREFIX):
        return _SQLITE_UNIQUE.get(text[len(_SQLITE_PREFIX) :], text)
    return text


@dataclass(frozen=True, slots=True)
class Claimed:
    """A delivery a sender has claimed, with what it needs to make it: its webhook's URL and secret, and whether
    the webhook is still live. ``claim`` names the claim, for the finishing update."""

    delivery: DeliveryRecord
    url: str
    secret: str
    live: bool
    claim: str


class SqlWebhookStore:
    """Webhooks and the outbox, in one transaction (a unit of work's, or the sender's own)."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    # -- webhooks --------------------------------------------------------------------------------------------
    async def add_webhook(self, hook: WebhookRecord) -> None:
        try:
            await self.tx.execute(
                f"INSERT INTO webhooks ({_HOOK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                hook.id,
                hook.url,
                hook.secret,
                encode_events(hook.events),
                hook.coverage.value,
                hook.issuer,
                hook.player_id,
                hook.created_by,
                hook.created_at,
                hook.deleted_at,
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err

    async def get_webhook(self, webhook_id: str) -> WebhookRecord | None:
        row = await self.tx.fetchone(f"SELECT {_HOOK_COLUMNS} FROM webhooks WHERE id = ?", webhook_id)
        return _hook(row) if row else None

    async def list_webhooks(
        self, limit: int, after: tuple[datetime, str] | None, issuer: str | None = None, player_id: str | None = None
    ) -> list[WebhookRecord]:
        if (issuer is None) == (player_id is None):
            raise ValueError("list the webhooks of an issuer or of a player")
        sql: list[str]
        args: list[Any]
        if issuer is not None:
            sql, args = ["issuer = ?"], [issuer]
        else:
            sql, args = ["coverage = ?", "player_id = ?"], [Coverage.PLAYER.value, player_id]
        sql.append("deleted_at IS NULL")
        if after is not None:
            when, row_id = after
            sql.append("created_at <= ? AND (created_at < ? OR (created_at = ? AND id < ?))")
            args += [when, when, when, row_id]
        rows = await self.tx.fetchall(
            f"SELECT {_HOOK_COLUMNS} FROM webhooks WHERE {' AND '.join(sql)} ORDER BY created_at DESC, id DESC LIMIT ?",
            *args,
            limit,
        )
        return [_hook(r) for r in rows]

    async def count_webhooks(self, coverage: Coverage, owner: str) -> int:
        column = "player_id" if coverage is Coverage.PLAYER else "issuer"
        if self.tx.dialect == "postgresql":
            # Counted under a lock of the owner held to the end of the transaction, so two creates of one owner
            # count one after the other and never pass the limit together (SQLite has one writer at a time).
            await self.tx.fetchone("SELECT pg_advisory_xact_lock(hashtext(?))", f"webhooks:{column}:{owner}")
        row = await self.tx.fetchone(
            f"SELECT COUNT(*) AS n FROM webhooks WHERE {column} = ? AND coverage = ? AND deleted_at IS NULL",
            owner,
            coverage.value,
        )
        return int(row["n"]) if row else 0

    async def delete_webhook(self, webhook_id: str, when: datetime) -> bool:
        changed = await self.tx.execute(
            "UPDATE webhooks SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL", when, webhook_id
        )
        if changed:
            await self.tx.execute(
                "UPDATE webhook_deliveries SET status = ?, finished_at = ?, claim_token = NULL "
                "WHERE webhook_id = ? AND status = ?",
                DeliveryStatus.CANCELLED.value,
                when,
                webhook_id,
                DeliveryStatus.PENDING.value,
            )
        return changed > 0

    async def subscriptions(self, player_ids: Sequence[str]) -> list[Subscription]:
        if not player_ids:
            return []
        marks = ", ".join("?" * len(player_ids))
        # Two index lookups: the players' own webhooks, and those of the players' issuers.
        rows = await self.tx.fetchall(
            f"SELECT id, events, player_id AS covered FROM webhooks "
            f"WHERE player_id IN ({marks}) AND coverage = ? AND deleted_at IS NULL "
            f"UNION ALL "
            f"SELECT w.id, w.events, p.id AS covered FROM players p JOIN webhooks w ON w.issuer = p.issuer "
            f"WHERE p.id IN ({marks}) AND w.coverage = ? AND w.deleted_at IS NULL",
            *player_ids,
            Coverage.PLAYER.value,
            *player_ids,
            Coverage.ISSUER.value,
        )
        return [Subscription(r["id"], r["covered"], decode_events(r["events"])) for r in rows]

    # -- the outbox ------------------------------------------------------------------------------------------
    async def add_deliveries(self, deliveries: Sequence[DeliveryRecord]) -> None:
        for start in range(0, len(deliveries), _ROWS_PER_INSERT):
            chunk = deliveries[start : start + _ROWS_PER_INSERT]
            args: list[Any] = []
            for d in chunk:
                e = d.event
                args += [d.id, d.webhook_id, e.type.value, e.table_id, e.seat, e.player_id, e.table_version, e.at,
                         d.status.value, d.attempts, d.next_attempt_at or e.at, None, d.last_error, None]  # fmt: skip
            await self.tx.execute(
                f"INSERT INTO webhook_deliveries ({_DELIVERY_COLUMNS}) VALUES "
                + ", ".join(f"({_DELIVERY_MARKS})" for _ in chunk),
                *args,
            )

    async def deliveries_of(self, webhook_id: str) -> list[DeliveryRecord]:
        """Every delivery of a webhook, oldest event first (for tests and operators)."""
        rows = await self.tx.fetchall(
            f"SELECT {_DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? "
            "ORDER BY event_time, table_version, seat, id",
            webhook_id,
        )
        return [_delivery(r) for r in rows]

    async def claim(self, now: datetime, lease_until: datetime, limit: int) -> list[Claimed]:
        """Up to ``limit`` pending deliveries due at ``now``, oldest first, claimed until ``lease_until``; each
        claim counts as an attempt."""
        claim = str(uuid.uuid4())
        pending = DeliveryStatus.PENDING.value
        if self.tx.dialect == "postgresql":
            rows = await self.tx.fetchall(
                "WITH due AS ("
                " SELECT id FROM webhook_deliveries WHERE status = ? AND next_attempt_at <= ?"
                " ORDER BY next_attempt_at LIMIT ? FOR UPDATE SKIP LOCKED"
                ") UPDATE webhook_deliveries d SET next_attempt_at = ?, claim_token = ?, attempts = d.attempts + 1"
                " FROM due WHERE d.id = due.id RETURNING d.id",
                pending,
                now,
                limit,
                lease_until,
                claim,
            )
            ids = [r["id"] for r in rows]
        else:
            rows = await self.tx.fetchall(
                "SELECT id FROM webhook_deliveries WHERE status = ? AND next_attempt_at <= ? "
                "ORDER BY next_attempt_at LIMIT ?",
                pending,
                now,
                limit,
            )
            ids = [r["id"] for r in rows]
            if ids:
                await self.tx.execute(
                    "UPDATE webhook_deliveries SET next_attempt_at = ?, claim_token = ?, attempts = attempts + 1 "
                    f"WHERE id IN ({', '.join('?' * len(ids))})",
                    lease_until,
                    claim,
                    *ids,
                )
        if not ids:
            return []
        found = await self.tx.fetchall(
            f"SELECT {_columns('d')}, w.url, w.secret, w.deleted_at AS hook_deleted_at "
            "FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id "
            f"WHERE d.id IN ({', '.join('?' * len(ids))}) ORDER BY d.next_attempt_at, d.event_time",
            *ids,
        )
        return [Claimed(_delivery(r), r["url"], r["secret"], r["hook_deleted_at"] is None, claim) for r in found]

    async def delivered(self, claimed: Claimed, when: datetime) -> bool:
        """Mark a claimed delivery made; False when the claim was lost (its lease ran out and it was claimed
        again, or its webhook was deleted meanwhile)."""
        changed = await self.tx.execute(
            "UPDATE webhook_deliveries SET status = ?, finished_at = ?, last_error = NULL, claim_token = NULL "
            "WHERE id = ? AND claim_token = ? AND status = ?",
            DeliveryStatus.DELIVERED.value,
            when,
            claimed.delivery.id,
            claimed.claim,
            DeliveryStatus.PENDING.value,
        )
        return changed > 0

    async def attempt_failed(
        self, claimed: Claimed, error: str, retry_at: datetime | None, when: datetime, cancelled: bool = False
    ) -> bool:
        """Note a failed attempt: due again at ``retry_at``, or given up (``FAILED``, or ``CANCELLED`` when the
        webhook is gone) when it is None. False when the claim was lost."""
        if retry_at is not None:
            status, finished, next_at = DeliveryStatus.PENDING, None, retry_at
        else:
            status = DeliveryStatus.CANCELLED if cancelled else DeliveryStatus.FAILED
            finished, next_at = when, when
        changed = await self.tx.execute(
            "UPDATE webhook_deliveries SET status = ?, finished_at = ?, next_attempt_at = ?, last_error = ?, "
            "claim_token = NULL WHERE id = ? AND claim_token = ? AND status = ?",
            status.value,
            finished,
            next_at,
            error[:MAX_ERROR_LENGTH],
            claimed.delivery.id,
            claimed.claim,
            DeliveryStatus.PENDING.value,
        )
        return changed > 0

    async def prune(self, before: datetime, limit: int = 1000) -> int:
        """Remove up to ``limit`` deliveries finished (made, given up or cancelled) before ``before``."""
        return await self.tx.execute(
            "DELETE FROM webhook_deliveries WHERE id IN "
            "(SELECT id FROM webhook_deliveries WHERE finished_at < ? ORDER BY finished_at LIMIT ?)",
            before,
            limit,
        )


def _columns(alias: str) -> str:
    return ", ".join(f"{alias}.{c.strip()}" for c in _DELIVERY_COLUMNS.split(","))
