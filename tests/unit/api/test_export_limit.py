"""A player may have two exports streaming at once on a server process: a third is RATE_LIMITED until one ends,
however it ends (read to its end, or closed early by a client that left); an export refused before its stream
(an unknown player) holds no place."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from golf.api.export_handlers import MAX_RUNNING, ExportHandlers
from golf.api.rpc import CallContext, ItemStream
from golf.app.errors import NotFound, RateLimited
from golf.app.exports import Exported, ExportQuery
from golf.app.identity import Caller
from golf.v1 import record_service_pb2 as pb


class NoRecords:
    """An exporter with nothing to export (what is counted is the streams, not their records)."""

    async def open(self, query: ExportQuery) -> AsyncIterator[Exported]:
        return self.export(query)

    async def export(self, query: ExportQuery) -> AsyncIterator[Exported]:
        for _ in ():
            yield _


class UnknownPlayer(NoRecords):
    """An exporter that finds no player of the request's ``playerId``."""

    async def open(self, query: ExportQuery) -> AsyncIterator[Exported]:
        raise NotFound("no player")


def ctx(player: str) -> CallContext:
    return CallContext(Caller(player), "127.0.0.1")


async def start(handlers: ExportHandlers, player: str) -> ItemStream:
    return await handlers.export_records(pb.ExportRecordsRequest(), ctx(player))


async def test_a_third_running_export_is_refused_until_one_ends() -> None:
    handlers = ExportHandlers(NoRecords())  # type: ignore[arg-type]
    running = [await start(handlers, "ann") for _ in range(MAX_RUNNING)]
    with pytest.raises(RateLimited) as refused:
        await start(handlers, "ann")
    assert refused.value.retry_after > 0
    other: Any = await start(handlers, "bob")  # another player's exports are counted apart
    # Read to its end, then closed by the transport: its place is free again.
    assert [item async for item in running[0]] == []
    await running[0].aclose()
    again = await start(handlers, "ann")
    # Closed early (the client left), and closed twice: counted once.
    await running[1].aclose()
    await running[1].aclose()
    await again.aclose()
    await other.aclose()
    assert [await start(handlers, "ann") for _ in range(MAX_RUNNING)]


async def test_an_export_refused_before_its_stream_holds_no_place() -> None:
    handlers = ExportHandlers(UnknownPlayer())  # type: ignore[arg-type]
    for _ in range(MAX_RUNNING + 1):
        with pytest.raises(NotFound):
            await start(handlers, "ann")
    handlers.exporter = NoRecords()  # type: ignore[assignment]
    assert [await start(handlers, "ann") for _ in range(MAX_RUNNING)]
