"""Fast proto3 JSON output, equal to ``json_format.MessageToDict(m, always_print_fields_with_no_presence=True)``.

protobuf's ``json_format`` walks every field in Python with many checks per field, which costs more than the
rest of a move for a 52-card game. Here each message type is compiled once into a table; the set fields come
from the C ``ListFields``; messages without nested messages (cards, mostly), and the types registered with
:func:`memoise` (parts of a message that repeat from one response to the next, such as a finished hole's score
breakdown), are memoised by their wire bytes. A test compares the output with ``json_format`` on whole games.

A memoised part seen again is kept as its encoded JSON (an ``orjson.Fragment``, copied into the output as it is),
so a part that repeats costs neither a conversion nor an encoding again.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

Convert = Callable[[Any], Any]
F = FieldDescriptor
_INT64 = {F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64, F.TYPE_UINT64, F.TYPE_FIXED64}
_FLOAT = {F.TYPE_FLOAT, F.TYPE_DOUBLE}
_WKT_STRING = {"google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask"}
_MEMO_LIMIT = 4096
"""Entries per memoised type; a full memo is emptied and fills again with what is in use now."""
_memoised: set[str] = set()


def _float(value: float) -> Any:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


class _Compiled:
    __slots__ = ("by_number", "defaults", "memo", "memoised")

    def __init__(self) -> None:
        self.by_number: dict[int, tuple[str, Convert]] = {}
        self.defaults: dict[str, Any] = {}
        self.memoised = True
        """Outputs are memoised by wire bytes (a leaf message, or a type registered with ``memoise``)."""
        self.memo: dict[bytes, dict[str, Any] | orjson.Fragment] = {}
        """By wire bytes: the object made the first time, its encoded JSON from the second time on."""


_compiled: dict[str, _Compiled] = {}
_EPOCH = datetime(1970, 1, 1)


def _scalar(field: Any) -> Convert:
    if field.type == F.TYPE_ENUM:
        names = {v.number: v.name for v in field.enum_type.values}
        return lambda v: names.get(v, v)
    if field.type in _INT64:
        return str
    if field.type in _FLOAT:
        return _float
    if field.type == F.TYPE_BYTES:
        return lambda v: base64.b64encode(v).decode()
    return _same


def _same(value: Any) -> Any:
    return value


def _timestamp(value: Any) -> str:
    """``Timestamp.ToJsonString`` without its checks (the messages here are made by the service): RFC 3339 in UTC
    with 0, 3, 6 or 9 digits of fraction, as protobuf writes it (a test compares the two)."""
    seconds, nanos = value.seconds, value.nanos
    text = (_EPOCH + timedelta(seconds=seconds)).isoformat()
    if nanos == 0:
        return text + "Z"
    if nanos % 1_000_000 == 0:
        return f"{text}.{nanos // 1_000_000:03d}Z"
    if nanos % 1000 == 0:
        return f"{text}.{nanos // 1000:06d}Z"
    return f"{text}.{nanos:09d}Z"


def _message_converter(field: Any) -> Convert:
    name = field.message_type.full_name
    if name == "google.protobuf.Timestamp":
        return _timestamp
    if name in _WKT_STRING:
        return lambda v: v.ToJsonString()
    if name.startswith("google.protobuf."):
        return lambda v: json_format.MessageToDict(v, always_print_fields_with_no_presence=True)
    return _encodable


def _default(field: Any) -> Any:
    if field.type == F.TYPE_ENUM:
        return field.enum_type.values_by_number[0].name
    if field.type in _INT64:
        return "0"
    if field.type == F.TYPE_BOOL:
        return False
    if field.type in (F.TYPE_STRING, F.TYPE_BYTES):
        return ""
    if field.type in _FLOAT:
        return 0.0
    return 0


def _list_of(one: Convert) -> Convert:
    if one is _same:
        return list
    return lambda values: [one(v) for v in values]


def _map_of(one: Convert) -> Convert:
    return lambda entries: {str(k): one(v) for k, v in entries.items()}


def _compile(desc: Any) -> _Compiled:
    c = _Compiled()
    for field in desc.fields:
        if field.type == F.TYPE_MESSAGE:
            c.memoised = desc.full_name in _memoised
            if field.message_type.GetOptions().map_entry:
                value_field = field.message_type.fields_by_name["value"]
                conv_value = (
                    _message_converter(value_field) if value_field.type == F.TYPE_MESSAGE else _scalar(value_field)
                )
                c.by_number[field.number] = (field.json_name, _map_of(conv_value))
                c.defaults[field.json_name] = {}
                continue
            conv = _message_converter(field)
        else:
            conv = _scalar(field)
        if field.is_repeated:
            conv = _list_of(conv)
            c.defaults[field.json_name] = []
        elif not field.has_presence:
            c.defaults[field.json_name] = _default(field)
        c.by_number[field.number] = (field.json_name, conv)
    _compiled[desc.full_name] = c
    return c


def memoise(full_name: str) -> None:
    """Memoise the JSON of message type ``full_name`` by its wire bytes: for a part that repeats unchanged in many
    messages, where serialising it (in C) costs far less than converting it again."""
    _memoised.add(full_name)
    compiled = _compiled.get(full_name)
    if compiled is not None:
        compiled.memoised = True


def _encodable(message: Message) -> dict[str, Any] | orjson.Fragment:
    """The proto3 JSON object of ``message``, fields without presence written out at their defaults, for
    ``orjson.dumps``: memoised parts are ``orjson.Fragment`` (JSON text)."""
    desc = message.DESCRIPTOR
    c = _compiled.get(desc.full_name) or _compile(desc)
    if c.memoised:
        key = message.SerializeToString(deterministic=True)
        hit = c.memo.get(key)
        if hit is not None:
            if not isinstance(hit, orjson.Fragment):  # seen a second time: worth encoding once for good
                hit = c.memo[key] = orjson.Fragment(orjson.dumps(hit))
            return hit
    out = dict(c.defaults)
    by_number = c.by_number
    for field, value in message.ListFields():
        name, conv = by_number[field.number]
        out[name] = conv(value)
    if c.memoised:
        if len(c.memo) >= _MEMO_LIMIT:
            c.memo.clear()
        c.memo[key] = out
    return out


def to_json(message: Message) -> bytes:
    """Compact proto3 JSON bytes of ``message``."""
    return orjson.dumps(_encodable(message))
