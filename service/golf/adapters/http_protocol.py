"""Uvicorn's HTTP/1.1 protocol (httptools) sending each answer in one write.

Uvicorn writes a response's status line and headers as soon as the app starts the response, and its body when
the app sends it: two system calls per answer (on a loopback connection each also delivers the segment to the
reader). Here the writes of one turn of the event loop are joined and sent together at the end of that turn: a
plain answer (start, then its whole body, in the same turn) leaves in one write, and nothing waits longer than
the turn that wrote it. A streamed answer (server-sent events) is written as each part comes, as before.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class _JoinedWrites:
    """A connection's transport whose writes of one event-loop turn go out as one; all else is the transport's."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(bytes(data))

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if pending and not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self._flush()  # what was written goes out before the connection closes, as with the transport itself
        self._transport.close()

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(map(len, self._pending))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class JoinedWritesProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` on a transport that joins the writes of each event-loop turn (``http=`` of
    ``uvicorn.Config``)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(_JoinedWrites(transport, self.loop))  # type: ignore[arg-type]
