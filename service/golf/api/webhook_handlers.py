"""One handler per RPC of ``golf.v1.WebhookService``, shared by gRPC and REST, its rows of the RPC table, and the
conversions of webhooks and of delivery bodies (``WebhookEvent``, proto3 JSON) to the contract's messages."""

from __future__ import annotations

import json

from google.protobuf import json_format

from golf.api.convert import timestamp
from golf.api.rpc import CallContext, Rpc
from golf.app.webhook_records import Coverage, DeliveryRecord, WebhookEventType, WebhookRecord
from golf.app.webhooks import WebhookService
from golf.v1 import webhook_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["WebhookService"].full_name

_EVENT_TYPES: dict[WebhookEventType, pb.WebhookEventType.ValueType] = {
    WebhookEventType.TURN: pb.WEBHOOK_EVENT_TYPE_TURN,
    WebhookEventType.MATCH_ENDED: pb.WEBHOOK_EVENT_TYPE_MATCH_ENDED,
}
_EVENT_TYPES_BACK = {v: k for k, v in _EVENT_TYPES.items()}
_COVERAGES: dict[Coverage, pb.WebhookCoverage.ValueType] = {
    Coverage.PLAYER: pb.WEBHOOK_COVERAGE_PLAYER,
    Coverage.ISSUER: pb.WEBHOOK_COVERAGE_ISSUER,
}
_COVERAGES_BACK = {v: k for k, v in _COVERAGES.items()}


def event_type_name(event: WebhookEventType) -> str:
    """The event's name without its prefix, as in the ``X-Golf-Event`` header: ``TURN``, ``MATCH_ENDED``."""
    return pb.WebhookEventType.Name(_EVENT_TYPES[event]).removeprefix("WEBHOOK_EVENT_TYPE_")


def webhook_to_proto(hook: WebhookRecord, with_secret: bool = False) -> pb.Webhook:
    """The contract's ``Webhook``; its secret only when ``with_secret`` (the answer to the request that made it)."""
    return pb.Webhook(
        id=hook.id,
        url=hook.url,
        events=sorted(_EVENT_TYPES[e] for e in hook.events),
        coverage=_COVERAGES[hook.coverage],
        player_id=hook.player_id or "",
        issuer=hook.issuer,
        create_time=timestamp(hook.created_at),
        secret=hook.secret if with_secret else "",
    )


def event_to_proto(delivery: DeliveryRecord) -> pb.WebhookEvent:
    event = delivery.event
    return pb.WebhookEvent(
        delivery_id=delivery.id,
        webhook_id=delivery.webhook_id,
        type=_EVENT_TYPES[event.type],
        table_id=event.table_id,
        seat=event.seat,
        player_id=event.player_id,
        table_version=event.table_version,
        event_time=timestamp(event.at),
    )


def event_body(delivery: DeliveryRecord) -> bytes:
    """A delivery's body: its ``WebhookEvent`` in proto3 JSON (every field, compact, UTF-8). The same bytes on each
    attempt, so a receiver may also drop duplicates by their hash."""
    data = json_format.MessageToDict(event_to_proto(delivery), always_print_fields_with_no_presence=True)
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


class WebhookHandlers:
    """Protobuf in, protobuf out. Requests arrive checked against the contract's field rules; domain errors
    propagate, and the transports turn them into replies."""

    def __init__(self, webhooks: WebhookService) -> None:
        self.webhooks = webhooks

    async def create_webhook(self, req: pb.CreateWebhookRequest, ctx: CallContext) -> pb.CreateWebhookResponse:
        coverage = _COVERAGES_BACK.get(req.coverage)  # UNSPECIFIED: the default for the caller
        hook = await self.webhooks.create(
            ctx.player,
            req.url,
            [_EVENT_TYPES_BACK[e] for e in req.events],
            coverage,
            req.idempotency_key if req.HasField("idempotency_key") else None,
        )
        return pb.CreateWebhookResponse(webhook=webhook_to_proto(hook, with_secret=True))

    async def list_webhooks(self, req: pb.ListWebhooksRequest, ctx: CallContext) -> pb.ListWebhooksResponse:
        hooks, token = await self.webhooks.list_webhooks(ctx.player, req.page_size, req.page_token)
        return pb.ListWebhooksResponse(webhooks=[webhook_to_proto(h) for h in hooks], next_page_token=token)

    async def get_webhook(self, req: pb.GetWebhookRequest, ctx: CallContext) -> pb.GetWebhookResponse:
        hook = await self.webhooks.get(ctx.player, req.webhook_id)
        return pb.GetWebhookResponse(webhook=webhook_to_proto(hook))

    async def delete_webhook(self, req: pb.DeleteWebhookRequest, ctx: CallContext) -> pb.DeleteWebhookResponse:
        await self.webhooks.delete(ctx.player, req.webhook_id)
        return pb.DeleteWebhookResponse()

    def rpcs(self) -> list[Rpc]:
        """Every RPC of the service with its handler (routes and summaries are in the contract)."""
        S = SERVICE
        return [
            Rpc(S, "CreateWebhook", pb.CreateWebhookRequest, pb.CreateWebhookResponse, self.create_webhook),
            Rpc(S, "ListWebhooks", pb.ListWebhooksRequest, pb.ListWebhooksResponse, self.list_webhooks),
            Rpc(S, "GetWebhook", pb.GetWebhookRequest, pb.GetWebhookResponse, self.get_webhook),
            Rpc(S, "DeleteWebhook", pb.DeleteWebhookRequest, pb.DeleteWebhookResponse, self.delete_webhook),
        ]
