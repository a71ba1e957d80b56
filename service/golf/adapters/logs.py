"""Structured logs: one JSON object per line, with the id of the request being served.

The request id comes from the client (HTTP header ``x-request-id``, gRPC metadata key ``x-request-id``) or is
made up here; it is echoed back (HTTP response header, gRPC trailing metadata) and put on every log line written
while the request is served, so one id follows a request through a load balancer, the service and its logs.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from golf.app.errors import StorageUnavailable

REQUEST_ID_HEADER = "x-request-id"
MAX_REQUEST_ID = 128

request_id: ContextVar[str | None] = ContextVar("golf_request_id", default=None)
"""The id of the request this task serves (each request runs in a task of its own, with its own context)."""

_counter = 0
_prefix = os.urandom(6).hex()


def new_request_id() -> str:
    """A unique id without a system call per request: a random per-process prefix and a counter."""
    global _counter
    _counter += 1
    return f"{_prefix}-{_counter:x}"


def accept_request_id(given: str | None) -> str:
    """The client's id if it sent a sane one, else a new one (ids are logged: keep them short and printable)."""
    if given and len(given) <= MAX_REQUEST_ID and given.isprintable():
        return given
    return new_request_id()


# The attributes every LogRecord has; anything else was passed with ``extra=`` and goes into the JSON object.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",
}


class JsonFormatter(logging.Formatter):
    """``{"time", "level", "logger", "message", "request_id"?, "exception"?, ...extra}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = request_id.get()
        if rid is not None:
            out["request_id"] = rid
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The plain format for a terminal, with the request id when there is one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid = request_id.get()
        return text if rid is None else f"{text} [request_id={rid}]"


class OutageLoggedOnce(logging.Filter):
    """Drops records about a failure that is a database outage (their exception is ``StorageUnavailable``, e.g. a
    background loop's ``log.exception``): the database driver logs each outage once, when it begins and when it
    ends, and a traceback per attempt would bury that line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, StorageUnavailable)


class ClientGoneQuiet(logging.Filter):
    """gRPC logs an ERROR with a traceback (``ExecuteBatchError``) when it cannot send an answer because the client
    has gone: it cancelled the call, its deadline passed or it disconnected while the answer was being sent. That is
    not the server's fault: such a record goes down to DEBUG, without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if exc is None or not record.name.startswith("grpc") or type(exc).__name__ != "ExecuteBatchError":
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        record.exc_info = None
        record.exc_text = None
        record.msg = f"{record.msg} (the client had gone)"
        return logging.getLogger(record.name).isEnabledFor(logging.DEBUG)


def configure_logging(level: str, fmt: str = "json") -> None:
    """Send every logger (uvicorn's and gRPC's included) to stderr in ``fmt`` (``json`` or ``text``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(OutageLoggedOnce())
    handler.addFilter(ClientGoneQuiet())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        # Uvicorn's own handlers would print its lines a second time, in its own format.
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
