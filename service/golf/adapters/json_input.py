"""Request bodies and query strings to protobuf messages, with errors that name the exact field at fault.

``json_format`` reports paths inconsistently (oneof members and enums lose parts of the path), so the JSON is
first checked against the message descriptor here; whatever passes is then parsed by ``json_format``.
"""

from __future__ import annotations

from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from golf.api.errors import ApiError, invalid

F = FieldDescriptor
_INT_RANGES = {
    **dict.fromkeys((F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32), (-(2**31), 2**31 - 1)),
    **dict.fromkeys((F.TYPE_UINT32, F.TYPE_FIXED32), (0, 2**32 - 1)),
    **dict.fromkeys((F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64), (-(2**63), 2**63 - 1)),
    **dict.fromkeys((F.TYPE_UINT64, F.TYPE_FIXED64), (0, 2**64 - 1)),
}
_WKT_STRINGS = {"google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask"}


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, str):
        try:
            return float(value).is_integer()
        except ValueError:
            return False
    return False


def _check_value(field: Any, value: Any, path: str) -> None:
    if value is None:
        return  # null means "not set" in proto3 JSON
    if field.type == F.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name in _WKT_STRINGS:
            if not isinstance(value, str):
                raise invalid(path, f"{path}: expected a string")
            return
        if not isinstance(value, dict):
            raise invalid(path, f"{path}: expected an object")
        check(value, field.message_type, path)
    elif field.type == F.TYPE_ENUM:
        names = {v.name for v in field.enum_type.values}
        if not (value in names or (_is_int(value) and not isinstance(value, str))):
            raise invalid(path, f"{path}: expected one of {', '.join(sorted(names))}")
    elif field.type in _INT_RANGES:
        if not _is_int(value):
            raise invalid(path, f"{path}: expected an integer")
        low, high = _INT_RANGES[field.type]
        if not low <= int(float(value)) <= high:
            raise invalid(path, f"{path}: out of range ({low} to {high})")
    elif field.type == F.TYPE_BOOL:
        if not isinstance(value, bool):
            raise invalid(path, f"{path}: expected true or false")
    elif field.type in (F.TYPE_STRING, F.TYPE_BYTES):
        if not isinstance(value, str):
            raise invalid(path, f"{path}: expected a string")
    elif field.type in (F.TYPE_FLOAT, F.TYPE_DOUBLE) and (
        isinstance(value, bool) or not isinstance(value, int | float | str)
    ):
        raise invalid(path, f"{path}: expected a number")


def check(obj: dict[str, Any], desc: Any, prefix: str = "") -> None:
    """Raise ``ApiError`` (INVALID_ARGUMENT) naming the first field of ``obj`` that ``desc`` cannot take."""
    for key, value in obj.items():
        path = f"{prefix}.{key}" if prefix else key
        field = desc.fields_by_camelcase_name.get(key) or desc.fields_by_name.get(key)
        if field is None:
            raise invalid(path, f"{path}: no such field")
        if field.is_repeated:
            if value is None:
                continue
            if not isinstance(value, list):
                raise invalid(path, f"{path}: expected a list")
            for i, item in enumerate(value):
                _check_value(field, item, f"{path}[{i}]")
        else:
            _check_value(field, value, path)


def parse_body(raw: bytes, message: Message) -> None:
    """Fill ``message`` from a JSON object body (an empty body is an empty object)."""
    if not raw.strip():
        return
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise invalid("body", f"the body is not valid JSON: {err}") from None
    if not isinstance(obj, dict):
        raise invalid("body", "the body must be a JSON object")
    parse_object(obj, message)


def parse_object(obj: dict[str, Any], message: Message) -> None:
    """Fill ``message`` from a proto3 JSON object, or raise ``ApiError`` naming the field at fault."""
    check(obj, message.DESCRIPTOR)
    try:
        json_format.ParseDict(obj, message)
    except json_format.ParseError as err:
        raise _fallback(err) from None


def _fallback(err: json_format.ParseError) -> ApiError:
    # Anything the check above lets through but json_format refuses (out-of-range numbers, duplicate oneof
    # members): its message carries the path after " at ".
    text = str(err)
    _, found, where = text.rpartition(" at ")
    parts = where.split()[0].strip(" .\"'").split(".", 1) if found and where.strip() else []
    return invalid(parts[1] if len(parts) == 2 else "body", text)
