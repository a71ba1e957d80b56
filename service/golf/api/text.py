"""Checks every request's text fields: one rule for both transports and both databases.

PostgreSQL cannot store or even compare a NUL character in text (SQLite can), so a NUL in any string of a request
would fail on one database and not the other; it is refused up front as invalid, naming the field.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from golf.api.errors import invalid

_STRING = FieldDescriptor.TYPE_STRING
_MESSAGE = FieldDescriptor.TYPE_MESSAGE


def check_text(message: Message, prefix: str = "") -> None:
    """Raise INVALID_ARGUMENT for the first string field (at any depth, map keys and values too) holding a NUL
    character."""
    for fd, value in message.ListFields():
        entry = fd.message_type
        if entry is not None and entry.GetOptions().map_entry:
            _check_map(entry.fields_by_name["value"], value, prefix + fd.json_name)
        elif fd.type == _STRING:
            if any("\x00" in v for v in (value if fd.is_repeated else (value,))):
                field = prefix + fd.json_name
                raise invalid(field, f"{field} must not contain NUL characters")
        elif fd.type == _MESSAGE:
            for item in value if fd.is_repeated else (value,):
                check_text(item, prefix + fd.json_name + ".")


def _check_map(value_fd: FieldDescriptor, entries: Any, field: str) -> None:
    """A ``map<K, V>`` field: its string keys, and its values (strings, or messages at any depth)."""
    for key, value in entries.items():
        name = f"{field}[{key!r}]"
        if isinstance(key, str) and "\x00" in key:
            raise invalid(field, f"{field} keys must not contain NUL characters")
        if value_fd.type == _STRING and "\x00" in value:
            raise invalid(name, f"{name} must not contain NUL characters")
        if value_fd.type == _MESSAGE:
            check_text(value, name + ".")
