"""``golf.v1.RecordService.ExportRecords``: the one handler of the export stream for both transports (gRPC's stream
of ``ExportRecordsResponse``; over REST newline-delimited JSON, one ``Record`` per line) and its row of the RPC table.

The request is checked and the export opened before anything is sent, so a bad request is an ordinary refusal;
each record is converted once, as it is read, and never held after it is sent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable

from golf.api.convert import time_range
from golf.api.record_convert import record_to_proto
from golf.api.rpc import CallContext, ItemStream, Rpc, StreamItem, streaming
from golf.app.errors import InvalidArgument, RateLimited
from golf.app.exports import GAME, MATCH, Exported, Exporter, ExportQuery
from golf.v1 import record_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["RecordService"].full_name
RECORD = "record"
"""The name of a record item (the ``ExportRecordsResponse`` member a line of the REST form is)."""
_KINDS = {pb.GAME_FAMILY_UNSPECIFIED: None, pb.GAME_FAMILY_SOLITAIRE: GAME, pb.GAME_FAMILY_CARD_GOLF: MATCH}


def export_query(req: pb.ExportRecordsRequest, ctx: CallContext) -> ExportQuery:
    """The use case's query of a request (the contract's field rules already ran); refusals name the field."""
    caller = ctx.player
    kind = _KINDS.get(req.family)
    if req.family not in _KINDS:
        raise InvalidArgument("family", "family must be GAME_FAMILY_SOLITAIRE or GAME_FAMILY_CARD_GOLF")
    since, until = time_range(req, ("since", "until"))
    return ExportQuery.build(
        caller.player_id,
        caller.issuer,
        since=since,
        until=until,
        player_id=req.player_id or None,
        preset=req.preset or None,
        kind=kind,
        max_records=req.max,
    )


class RecordItems:
    """An export as the transports take it (``golf.api.rpc.ItemStream``): one item per record. ``on_close`` runs
    once, when the transport closes the stream (always, however it ended)."""

    def __init__(self, records: AsyncIterator[Exported], on_close: Callable[[], None] | None = None) -> None:
        self._records = records
        self._on_close = on_close

    def __aiter__(self) -> RecordItems:
        return self

    async def __anext__(self) -> StreamItem:
        item = await self._records.__anext__()
        response = pb.ExportRecordsResponse()
        response.record.CopyFrom(record_to_proto(item))
        return StreamItem(response, RECORD, response.record)

    async def aclose(self) -> None:
        done, self._on_close = self._on_close, None
        try:
            close = getattr(self._records, "aclose", None)
            if close is not None:
                await close()
        finally:
            if done is not None:
                done()


MAX_RUNNING = 2
"""Exports one player may have running at once on one server process (each may replay up to 100,000 records)."""


class ExportHandlers:
    """``ExportRecords``: the request checked here, before the first message (its fields, then its player: an unknown
    one is NOT_FOUND, as for ``ListHistory``); the records then go out as they are read. A player with
    ``max_running`` exports still streaming is refused (RATE_LIMITED) until one ends."""

    def __init__(self, exporter: Exporter, max_running: int = MAX_RUNNING) -> None:
        self.exporter = exporter
        self.max_running = max_running
        self._running: Counter[str] = Counter()

    async def export_records(self, req: pb.ExportRecordsRequest, ctx: CallContext) -> ItemStream:
        query = export_query(req, ctx)
        player = ctx.player.player_id
        if self._running[player] >= self.max_running:
            raise RateLimited(f"{self.max_running} exports of this player are still running: wait for one to end", 1.0)
        self._running[player] += 1  # counted across the check's await, so a burst cannot pass the limit
        try:
            records = await self.exporter.open(query)  # an unknown player is refused here, before the stream
        except BaseException:
            self._ended(player)
            raise
        return RecordItems(records, lambda: self._ended(player))

    def _ended(self, player: str) -> None:
        self._running[player] -= 1
        if self._running[player] <= 0:
            del self._running[player]

    def rpcs(self) -> list[Rpc]:
        return [
            streaming(
                SERVICE,
                "ExportRecords",
                pb.ExportRecordsRequest,
                pb.ExportRecordsResponse,
                self.export_records,
                rest_stream="ndjson",
            )
        ]


__all__ = ["MAX_RUNNING", "RECORD", "ExportHandlers", "RecordItems", "export_query"]
