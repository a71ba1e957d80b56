"""``golf.adapters.http_protocol``: an answer's status line, headers and body leave in one write; nothing is lost or
reordered, and nothing waits past the event-loop turn that wrote it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.responses import StreamingResponse

from golf.adapters.http_protocol import JoinedWritesProtocol, _JoinedWrites


class FakeTransport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 7

    def get_extra_info(self, name: str) -> str:
        return f"info:{name}"


async def test_the_writes_of_one_turn_leave_together_at_its_end() -> None:
    fake = FakeTransport()
    joined = _JoinedWrites(fake, asyncio.get_running_loop())  # type: ignore[arg-type]
    joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
    joined.write(bytearray(b"body"))
    assert fake.writes == [] and joined.get_write_buffer_size() == 7 + 23
    await asyncio.sleep(0)
    assert fake.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
    joined.write(memoryview(b"next"))
    await asyncio.sleep(0)
    assert fake.writes[1:] == [b"next"]
    assert joined.get_extra_info("socket") == "info:socket"  # everything else is the transport's


async def test_close_sends_what_was_written_first_and_nothing_after() -> None:
    fake = FakeTransport()
    joined = _JoinedWrites(fake, asyncio.get_running_loop())  # type: ignore[arg-type]
    joined.write(b"last words")
    joined.close()
    assert fake.writes == [b"last words"] and fake.closed
    await asyncio.sleep(0)  # the flush scheduled by the write finds nothing left, and writes nothing
    assert fake.writes == [b"last words"]


@pytest.fixture
async def served() -> AsyncIterator[str]:
    app = FastAPI()

    @app.get("/plain")
    async def plain() -> dict[str, str]:
        return {"hello": "x" * 100_000}

    @app.get("/stream")
    async def stream() -> StreamingResponse:
        async def parts() -> AsyncIterator[str]:
            for i in range(3):
                yield f"data: {i}\n\n"
                await asyncio.sleep(0.01)

        return StreamingResponse(parts(), media_type="text/event-stream")

    config = uvicorn.Config(app, host="127.0.0.1", port=0, http=JoinedWritesProtocol, log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(1000):  # up to 10 s
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


async def test_answers_and_streams_over_a_real_connection(served: str) -> None:
    async with httpx.AsyncClient(base_url=served) as client:
        for _ in range(3):  # one keep-alive connection, answer after answer
            answer = await client.get("/plain")
            assert answer.status_code == 200 and answer.json() == {"hello": "x" * 100_000}
        async with client.stream("GET", "/stream") as events:
            body = b"".join([part async for part in events.aiter_bytes()])
        assert body == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
