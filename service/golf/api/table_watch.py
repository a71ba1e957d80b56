"""``golf.v1.TableService.WatchTable``: the one handler of the server stream for both transports (gRPC's stream of
``WatchTableResponse``, REST's Server-Sent Events), and its row of the RPC table (:func:`watch_rpcs`).

Each event is converted once for every subscriber that sees the same thing (``TableEvent.memo``), and each
transport encodes it once (``StreamItem.encoded``): a thousand watchers of one table cost one view, one message
and one encoding per kind of viewer, not a thousand.
"""

from __future__ import annotations

import grpc

from golf.api.convert import timestamp
from golf.api.errors import ApiError
from golf.api.rpc import CallContext, ItemStream, Rpc, StreamItem, streaming
from golf.api.table_convert import bot_level_to_proto, bot_personality_to_proto, move_to_proto, table_to_proto
from golf.app.tables.events import EventKind, Heartbeat, StreamEnded, TableEvent, TableEvents, Watch
from golf.v1 import card_golf_pb2 as cg
from golf.v1 import errors_pb2
from golf.v1 import table_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["TableService"].full_name
EVENT = "table"
"""The Server-Sent Events ``event`` name of a table event (its ``data``: the ``TableEvent`` in proto3 JSON)."""
HEARTBEAT = "heartbeat"
"""The ``event`` name of a heartbeat (its ``data``: the ``Heartbeat``)."""
_KINDS = {kind: cg.TableEventKind.Value(f"TABLE_EVENT_KIND_{kind.name}") for kind in EventKind}


def event_to_proto(event: TableEvent, into: cg.TableEvent | None = None) -> cg.TableEvent:
    """The event as the contract writes it; its table is the viewer's (``table_to_proto`` of its snapshot).
    Written into ``into`` when given (the field of the response it goes out in), else into a new message."""
    msg = cg.TableEvent() if into is None else into
    msg.seq = event.seq
    msg.time.CopyFrom(timestamp(event.time))
    msg.kind = _KINDS[event.kind]
    table_to_proto(event.snapshot, into=msg.table)
    msg.bot = bot_level_to_proto(event.bot)
    msg.bot_personality = bot_personality_to_proto(event.bot)
    if event.seat is not None:
        msg.seat = event.seat
    if event.move is not None:
        msg.move.CopyFrom(move_to_proto(event.move))
    return msg


def event_item(event: TableEvent) -> StreamItem:
    """The stream item of ``event``, made once for all the subscribers the event object goes to."""
    item = event.memo.get("item")
    if not isinstance(item, StreamItem):
        response = pb.WatchTableResponse()
        event_to_proto(event, into=response.event)
        item = event.memo["item"] = StreamItem(response, EVENT, response.event, str(event.seq))
    return item


def heartbeat_item(beat: Heartbeat) -> StreamItem:
    response = pb.WatchTableResponse(heartbeat=pb.Heartbeat(seq=beat.seq))
    return StreamItem(response, HEARTBEAT, response.heartbeat)


def stream_ended(err: StreamEnded) -> ApiError:
    """UNAVAILABLE / 503 with a retry delay: connect again, with the last sequence number received."""
    body = errors_pb2.Error(reason=errors_pb2.ERROR_REASON_UNAVAILABLE, message=err.message)
    body.retry_delay.FromNanoseconds(int(err.retry_after * 1e9))
    return ApiError(body, grpc.StatusCode.UNAVAILABLE, 503, retry_after=err.retry_after)


class WatchItems:
    """A :class:`~golf.app.tables.events.Watch` as the transports take it (``golf.api.rpc.ItemStream``)."""

    def __init__(self, watch: Watch) -> None:
        self._watch = watch

    def __aiter__(self) -> WatchItems:
        return self

    async def __anext__(self) -> StreamItem:
        try:
            item = await self._watch.__anext__()
        except StreamEnded as err:
            raise stream_ended(err) from None
        return event_item(item) if isinstance(item, TableEvent) else heartbeat_item(item)

    async def aclose(self) -> None:
        await self._watch.aclose()


class TableWatchHandlers:
    """``WatchTable``: the request checked (the transports ran the contract's field rules), the watch refused or
    started here, before the first message; its events then go out as they come."""

    def __init__(self, events: TableEvents) -> None:
        self.events = events

    async def watch_table(self, req: pb.WatchTableRequest, ctx: CallContext) -> ItemStream:
        after = int(req.after_seq) if req.HasField("after_seq") else None
        try:
            watch = await self.events.watch(ctx.player, req.table_id, after, req.join_code or None, ctx.address)
        except StreamEnded as err:
            raise stream_ended(err) from None
        return WatchItems(watch)

    def rpcs(self) -> list[Rpc]:
        return [
            streaming(
                SERVICE,
                "WatchTable",
                pb.WatchTableRequest,
                pb.WatchTableResponse,
                self.watch_table,
                resume_from="afterSeq",
                event_names=(("event", EVENT),),
            )
        ]


def watch_rpcs(events: TableEvents) -> list[Rpc]:
    """The row of ``WatchTable`` for the RPC table (beside ``TableHandlers(...).rpcs()``)."""
    return TableWatchHandlers(events).rpcs()


__all__ = ["EVENT", "HEARTBEAT", "TableWatchHandlers", "WatchItems", "event_item", "event_to_proto", "watch_rpcs"]
