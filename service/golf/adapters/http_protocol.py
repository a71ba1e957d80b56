"""Uvicorn's HTTP/1.1 protocol (httptools) with the edge's limits, sending each answer in one write.

Uvicorn writes a response's status line and headers as soon as the app starts the response, and its body when
the app sends it: two system calls per answer (on a loopback connection each also delivers the segment to the
reader). Here the writes of one turn of the event loop are joined and sent together at the end of that turn: a
plain answer (start, then its whole body, in the same turn) leaves in one write, and nothing waits longer than
the turn that wrote it. A streamed answer (server-sent events) is written as each part comes, as before.

The limits (``HttpLimits``) hold before any work, at a cost linear in what was read: uvicorn's httptools protocol
has none (httptools joins each piece of a header to the pieces before it: a 64 MB header took seconds of the event
loop, and the loop serves gRPC too). See ``EdgeProtocol``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any, ClassVar

import grpc
import httptools
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from golf.adapters.proto_json import to_json
from golf.adapters.settings import Settings
from golf.api.error_details import rest_body
from golf.api.errors import ApiError
from golf.v1 import errors_pb2

R = errors_pb2.ErrorReason


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


def _default(name: str) -> Any:
    return Settings.model_fields[name].default


@dataclass(frozen=True, slots=True)
class HttpLimits:
    """What one HTTP connection may send and hold (the ``GOLF_`` settings of the same names)."""

    max_request_line_bytes: int = _default("max_request_line_bytes")
    max_header_bytes: int = _default("max_header_bytes")
    max_headers: int = _default("max_headers")
    max_body_bytes: int = _default("max_body_bytes")
    header_timeout_seconds: float = _default("header_timeout_seconds")
    max_connections: int = _default("max_connections")

    @classmethod
    def from_settings(cls, settings: Settings) -> HttpLimits:
        """The limits ``settings`` set."""
        return cls(**{name: getattr(settings, name) for name in cls.__dataclass_fields__})


def _answer(
    status: HTTPStatus, reason: errors_pb2.ErrorReason.ValueType, message: str, code: grpc.StatusCode, extra: str = ""
) -> bytes:
    """A whole HTTP answer with the ``Error`` body every refusal has, closing the connection: made once, as the
    connection is refused before any request of it reached the app."""
    body = to_json(rest_body(ApiError(errors_pb2.Error(reason=reason, message=message), code, status.value)))
    head = (
        f"HTTP/1.1 {status.value} {status.phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n{extra}\r\n"
    )
    return head.encode() + body


@dataclass(frozen=True, slots=True)
class _Answers:
    line_too_long: bytes
    headers_too_large: bytes
    too_many_headers: bytes
    timed_out: bytes
    busy: bytes

    @classmethod
    def of(cls, limits: HttpLimits) -> _Answers:
        too_large, invalid = R.ERROR_REASON_PAYLOAD_TOO_LARGE, R.ERROR_REASON_INVALID_ARGUMENT
        exhausted, out_of_range = grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INVALID_ARGUMENT
        return cls(
            line_too_long=_answer(
                HTTPStatus.REQUEST_URI_TOO_LONG,
                too_large,
                f"the request's path and query are longer than {limits.max_request_line_bytes} bytes",
                exhausted,
            ),
            headers_too_large=_answer(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                too_large,
                f"the request's headers are larger than {limits.max_header_bytes} bytes",
                exhausted,
            ),
            too_many_headers=_answer(
                HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                too_large,
                f"the request has more than {limits.max_headers} headers",
                exhausted,
            ),
            timed_out=_answer(
                HTTPStatus.REQUEST_TIMEOUT,
                invalid,
                f"the request did not arrive whole within {limits.header_timeout_seconds:g} s",
                out_of_range,
            ),
            busy=_answer(
                HTTPStatus.SERVICE_UNAVAILABLE,
                R.ERROR_REASON_UNAVAILABLE,
                f"this server has {limits.max_connections} connections open; retry later",
                grpc.StatusCode.UNAVAILABLE,
                "retry-after: 1\r\n",
            ),
        )


HOLD_AFTER_REFUSAL = 0.5
"""Seconds a connection is not read after a rate-limit refusal (``Retry-After`` is 1 s or more)."""


class _Refused(Exception):
    """Raised in a parser callback to stop the parse: the connection is answered ``EdgeProtocol._pending``."""


class EdgeProtocol(JoinedWritesProtocol):
    """``JoinedWritesProtocol`` with the edge's limits (``limits``; ``edge_protocol`` makes a class with others):

    - the request line and the headers (their bytes and their count) are bounded: past them 414 or 431, and the
      connection is closed. The bytes of a head are counted as they come and the parser is never given more than
      the limit, so a refusal costs what was read, once.
    - a request has ``header_timeout_seconds`` from its first byte to arrive whole (408, then closed); a connection
      with no request in progress is closed after uvicorn's keep-alive timeout, from its opening too (uvicorn
      starts that timer only after an answer).
    - a body the app never read (a refusal answered first: 401, 404, 405, ...) is read and thrown away up to
      ``max_body_bytes``, so a small one keeps the connection alive; past that the connection is closed (uvicorn
      read and threw away an endless chunked body for ever).
    - at most ``max_connections`` are open: another one gets 503 and is closed before anything is read.
    - after a rate-limit refusal (429 with ``Retry-After``) the connection is not read for ``HOLD_AFTER_REFUSAL``
      seconds: its next request would most likely be refused too, and a client that does not wait as it was told
      gets a refusal per hold per connection, not as many as the event loop can make.
    """

    limits: ClassVar[HttpLimits] = HttpLimits()
    answers: ClassVar[_Answers] = _Answers.of(limits)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._turned_away = False  # over the cap: answered 503 and closed in connection_made
        self._in_head = True  # waiting for, or reading, a request's line and headers
        self._head_read = 0  # bytes of the current head given to the parser
        self._url_read = 0
        self._header_count = 0
        self._discarded = 0  # bytes of body thrown away after the answer
        self._pending: bytes | None = None  # what a refused connection is sent (b"": nothing) before it closes
        self._timer: asyncio.TimerHandle | None = None  # the current request's header timeout
        self._hold = False  # the answer being sent is a rate-limit refusal

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if len(self.server_state.connections) >= self.limits.max_connections:
            self._turned_away = True
            transport.write(self.answers.busy)
            transport.close()
            return
        super().connection_made(transport)
        # A connection that never sends a request is idle from the start.
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._turned_away:
            return
        self._stop_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._turned_away or self.parser is None or self.transport.is_closing():
            return
        if not self._in_head:
            self._feed(data)
            return
        if self._timer is None:
            self._timer = self.loop.call_later(self.limits.header_timeout_seconds, self._timed_out)
        room = self.limits.max_request_line_bytes + self.limits.max_header_bytes - self._head_read
        if len(data) <= room:
            self._head_read += len(data)
            self._feed(data)
            return
        # Past the limit: the parser gets no more than it, and the rest only if the head ended within it.
        self._head_read += room
        self._feed(data[:room])
        if self.transport.is_closing():
            return
        if self._in_head:
            self._refuse(self.answers.headers_too_large)
            return
        self.data_received(data[room:])

    def _refuse(self, answer: bytes) -> None:
        self._stop_timer()
        self._unset_keepalive_if_required()
        if answer:
            self.transport.write(answer)
        self.transport.close()

    def _feed(self, data: bytes) -> None:
        """uvicorn's ``data_received``, but a parse our callbacks stopped gets their refusal, not a 400."""
        self._unset_keepalive_if_required()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if self._pending is not None:
                self._refuse(self._pending)
                return
            self._stop_timer()
            self.logger.warning("Invalid HTTP request received.")
            self.send_400_response("Invalid HTTP request received.")
        except httptools.HttpParserUpgrade:
            if self._should_upgrade():
                self.handle_websocket_upgrade()
            else:
                self._unsupported_upgrade_warning()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        if self._in_head:
            self._refuse(self.answers.timed_out)
        else:
            # A body that did not come: the app, waiting for it, is told the client went away.
            self._refuse(b"")

    def _start_asgi_task(self, cycle: Any, app: Any) -> None:
        protocol = self

        async def watched(scope: Any, receive: Any, send: Any) -> None:
            async def send_watched(message: Any) -> None:
                if message["type"] == "http.response.start" and message["status"] == 429:
                    protocol._hold = any(name.lower() == b"retry-after" for name, _ in message.get("headers", ()))
                await send(message)

            await app(scope, receive, send_watched)

        super()._start_asgi_task(cycle, watched)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._hold and not self.transport.is_closing():
            self._hold = False
            self.flow.pause_reading()
            self.loop.call_later(HOLD_AFTER_REFUSAL, self._release)

    def _release(self) -> None:
        if not self.transport.is_closing():
            self.flow.resume_reading()

    # Parser callbacks
    def on_message_begin(self) -> None:
        self._url_read = self._header_count = self._discarded = 0
        super().on_message_begin()

    def on_url(self, url: bytes) -> None:
        self._url_read += len(url)
        if self._url_read > self.limits.max_request_line_bytes:
            self._pending = self.answers.line_too_long
            raise _Refused
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > self.limits.max_headers:
            self._pending = self.answers.too_many_headers
            raise _Refused
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_read = 0
        super().on_headers_complete()

    def on_body(self, body: bytes) -> None:
        if self.cycle.response_complete:  # answered without reading it: thrown away, up to the limit
            self._discarded += len(body)
            if self._discarded > self.limits.max_body_bytes:
                self._pending = b""
                raise _Refused
            return
        super().on_body(body)

    def on_message_complete(self) -> None:
        self._stop_timer()
        # Bytes of the next head in the same read are not counted: at most one read more than the limit.
        self._in_head = True
        self._head_read = 0
        super().on_message_complete()


def edge_protocol(limits: HttpLimits) -> type[EdgeProtocol]:
    """An ``EdgeProtocol`` class with ``limits`` (for ``http=`` of ``uvicorn.Config``, which takes a class)."""
    return type("EdgeProtocol", (EdgeProtocol,), {"limits": limits, "answers": _Answers.of(limits)})
