"""Request bodies and query strings to protobuf messages, with errors that name the exact field at fault.

``json_format`` reports paths inconsistently (oneof members and enums lose parts of the path), so the JSON is
first checked against the message descriptor here; whatever passes is then parsed by ``json_format``.

Keys the message does not have, at any depth, are ignored as binary protobuf ignores unknown fields (an app built
against a newer contract keeps working with an older server) and returned by the parse as JSON paths, for the
gateway to name in the ``x-golf-unknown-fields`` header (``unknown_fields_header``). A field is known by its
lowerCamelCase JSON name and by its proto (snake_case) name, as every proto3 JSON parser takes both; paths, in
errors and in the header, name known fields by their JSON name, and unknown keys as sent.

Every piece of client text an error or the header carries (an unknown key, a value in the message) is cut to
``MAX_ECHO`` characters: a reply never sends back more than a short prefix of what the client sent.
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import quote

import orjson
from google.protobuf import duration_pb2, json_format, timestamp_pb2
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from golf.adapters.json_keys import duplicate_key, twice_message
from golf.api.errors import ApiError, invalid

F = FieldDescriptor
_INT_RANGES = {
    **dict.fromkeys((F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32), (-(2**31), 2**31 - 1)),
    **dict.fromkeys((F.TYPE_UINT32, F.TYPE_FIXED32), (0, 2**32 - 1)),
    **dict.fromkeys((F.TYPE_INT64, F.TYPE_SINT64, F.TYPE_SFIXED64), (-(2**63), 2**63 - 1)),
    **dict.fromkeys((F.TYPE_UINT64, F.TYPE_FIXED64), (0, 2**64 - 1)),
}
_TIMESTAMP, _DURATION = "google.protobuf.Timestamp", "google.protobuf.Duration"
_WKT_STRINGS = {_TIMESTAMP, _DURATION, "google.protobuf.FieldMask"}
_DIGITS = re.compile(r"-?[0-9]+")
_SPECIAL_FLOATS = {"NaN", "Infinity", "-Infinity"}
MAX_ECHO = 64
"""The most characters of any one client string an error message or ``field`` repeats."""
ELLIPSIS = "…"
UNKNOWN_FIELDS_HEADER = "x-golf-unknown-fields"
"""The response header naming the keys of the request that the message does not have (and that were ignored)."""
MAX_UNKNOWN_SHOWN = 10
"""The most unknown keys the header names; more are counted (``+3 more``)."""
MAX_UNKNOWN_HEADER = 1024
"""The most characters of the header's names (the first is always named): response headers must stay well under
what proxies take (nginx's default buffer for them is 4 KiB)."""


def clip(text: str) -> str:
    """``text`` as an error may repeat it: at most ``MAX_ECHO`` characters, then an ellipsis when cut (and any lone
    surrogate, which no protobuf string can hold, as ``?``)."""
    if len(text) > MAX_ECHO:
        text = text[:MAX_ECHO] + ELLIPSIS
    return text if text.isascii() else text.encode("utf-8", "replace").decode("utf-8")


def _shown(value: Any) -> str:
    """A client value quoted for a message, cut like ``clip``; a list or an object only by its kind."""
    if isinstance(value, str):
        return repr(clip(value))
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) >= 10**MAX_ECHO:
        return "a number too large to show"
    return clip(repr(value))


def _as_int(value: Any) -> int | None:
    """The integer ``value`` stands for in proto3 JSON (a number, or a string holding one), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None  # False for inf and nan
    if isinstance(value, str):
        if not value.isascii():
            return None  # float() and int() would read other scripts' digits
        if _DIGITS.fullmatch(value):
            # Exact, unlike float(); past 40 digits it is out of every range (and int() would refuse 4,300+).
            return int(value) if len(value) <= 40 else (-1 if value.startswith("-") else 1) * 10**40
        if value.strip() != value or "_" in value:
            return None  # json_format refuses padded strings; float() would take "1_0"
        try:
            number = float(value)  # "1e3", "2.0"
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    return None


_ENUMS: dict[str, tuple[frozenset[str], frozenset[int], str]] = {}


def _enum_values(enum: Any) -> tuple[frozenset[str], frozenset[int], str]:
    """The enum's names and numbers as Python sets (the descriptor's own maps choke on lone surrogates), and
    its names and numbers listed for a message."""
    known = _ENUMS.get(enum.full_name)
    if known is None:
        names = [v.name for v in enum.values]
        listed = ", ".join(f"{v.name} ({v.number})" for v in enum.values)
        known = _ENUMS[enum.full_name] = (frozenset(names), frozenset(v.number for v in enum.values), listed)
    return known


def _check_enum(field: Any, value: Any, path: str) -> None:
    """An enum's value is its name or its number, a JSON number or a string of digits (a query string has nothing
    else; proto3 JSON parsers read both forms in bodies too): one rule for bodies and queries. Only the enum's own
    numbers are taken."""
    names, numbers, listed = _enum_values(field.enum_type)
    if isinstance(value, str):
        # An enum number is an int32: 11 characters at most ("-2147483648"), so int() never reads a long string.
        known = value in names or (len(value) <= 11 and _DIGITS.fullmatch(value) is not None and int(value) in numbers)
    else:
        # A number names a value only if the enum has it (proto3 enums are open: json_format would keep any).
        known = not isinstance(value, bool) and isinstance(value, int | float) and _as_int(value) in numbers
    if not known:
        raise invalid(path, f"{path}: expected one of {listed}, by name or by number (not {_shown(value)})")


def _check_wkt(name: str, value: Any, path: str) -> None:
    if not isinstance(value, str):
        raise invalid(path, f"{path}: expected a string")
    if name not in (_TIMESTAMP, _DURATION):
        return
    holder = timestamp_pb2.Timestamp() if name == _TIMESTAMP else duration_pb2.Duration()
    try:
        holder.FromJsonString(value)
    except (ValueError, TypeError, OverflowError):
        kind = "an RFC 3339 time such as 2026-11-29T12:00:00Z" if name == _TIMESTAMP else "a duration such as 12.5s"
        raise invalid(path, f"{path}: expected {kind} (not {_shown(value)})") from None


def _check_value(field: Any, value: Any, path: str, unknown: list[str]) -> None:
    if value is None:
        return  # null means "not set" in proto3 JSON
    if field.type == F.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name in _WKT_STRINGS:
            _check_wkt(name, value, path)
            return
        if not isinstance(value, dict):
            raise invalid(path, f"{path}: expected an object")
        _check(value, field.message_type, path, unknown)
    elif field.type == F.TYPE_ENUM:
        _check_enum(field, value, path)
    elif field.type in _INT_RANGES:
        number = _as_int(value)
        if number is None:
            raise invalid(path, f"{path}: expected an integer")
        low, high = _INT_RANGES[field.type]
        if not low <= number <= high:
            raise invalid(path, f"{path}: out of range ({low} to {high})")
    elif field.type == F.TYPE_BOOL:
        if not isinstance(value, bool):
            raise invalid(path, f"{path}: expected true or false")
    elif field.type in (F.TYPE_STRING, F.TYPE_BYTES):
        if not isinstance(value, str):
            raise invalid(path, f"{path}: expected a string")
    elif field.type in (F.TYPE_FLOAT, F.TYPE_DOUBLE) and not _is_number(value):
        raise invalid(path, f"{path}: expected a number")


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return math.isfinite(value)
    if isinstance(value, str):
        if value in _SPECIAL_FLOATS:
            return True
        try:
            return value.strip() == value and "_" not in value and math.isfinite(float(value))
        except ValueError:
            return False
    return False


def _is_map(field: Any) -> bool:
    return bool(field.type == F.TYPE_MESSAGE and field.message_type.GetOptions().map_entry)


_FIELDS: dict[str, dict[str, Any]] = {}


def _fields(desc: Any) -> dict[str, Any]:
    """The message's fields by JSON and by proto name, as a Python dict (like ``_enum_values``)."""
    known = _FIELDS.get(desc.full_name)
    if known is None:
        known = _FIELDS[desc.full_name] = {**{f.name: f for f in desc.fields}, **{f.json_name: f for f in desc.fields}}
    return known


def check(obj: dict[str, Any], desc: Any) -> list[str]:
    """Raise ``ApiError`` (INVALID_ARGUMENT) naming the first field of ``obj`` that ``desc`` cannot take; return
    the paths of the keys it does not have (at any depth), in the order met, each key cut like ``clip``."""
    unknown: list[str] = []
    _check(obj, desc, "", unknown)
    return unknown


def _check(obj: dict[str, Any], desc: Any, prefix: str, unknown: list[str]) -> None:
    fields = _fields(desc)
    seen: set[int] = set()
    for key, value in obj.items():
        field = fields.get(key)
        if field is None:
            unknown.append(f"{prefix}.{clip(key)}" if prefix else clip(key))
            continue
        path = f"{prefix}.{field.json_name}" if prefix else field.json_name
        if field.number in seen:
            # By its JSON name and by its proto name: which one is meant? (json_format would keep the last.)
            raise invalid(path, f"{path}: given twice, as {field.json_name} and as {field.name}")
        seen.add(field.number)
        if value is None:
            continue
        if _is_map(field):
            if not isinstance(value, dict):
                raise invalid(path, f"{path}: expected an object")
            key_field = field.message_type.fields_by_name["key"]
            value_field = field.message_type.fields_by_name["value"]
            for k, v in value.items():
                item = f"{path}.{clip(k)}"
                if key_field.type == F.TYPE_BOOL and k not in ("true", "false"):
                    raise invalid(item, f"{item}: a map key here must be true or false")
                if key_field.type in _INT_RANGES:
                    _check_value(key_field, k, item, unknown)
                if v is None:
                    raise invalid(item, f"{item}: a map value cannot be null")
                _check_value(value_field, v, item, unknown)
        elif field.is_repeated:
            if not isinstance(value, list):
                raise invalid(path, f"{path}: expected a list")
            for i, item in enumerate(value):
                where = f"{path}[{i}]"
                if item is None:
                    raise invalid(where, f"{where}: a list item cannot be null")
                _check_value(field, item, where, unknown)
        else:
            _check_value(field, value, path, unknown)


def parse_body(raw: bytes, message: Message) -> list[str]:
    """Fill ``message`` from a JSON object body (an empty body is an empty object); return the paths of the keys
    it ignored (``check``). A key given twice in one object is refused, naming it (``golf.adapters.json_keys``)."""
    if not raw.strip():
        return []
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        raise invalid("body", f"the body is not valid JSON: {_cut(str(err))}") from None
    if not isinstance(obj, dict):
        raise invalid("body", "the body must be a JSON object")
    twice = duplicate_key(raw, obj)
    if twice is not None:
        raise invalid(twice, twice_message(twice))
    return parse_object(obj, message)


def parse_object(obj: dict[str, Any], message: Message) -> list[str]:
    """Fill ``message`` from a proto3 JSON object (a body, or the query parameters), or raise ``ApiError`` naming
    the field at fault; return the paths of the keys it ignored (``check``)."""
    unknown = check(obj, message.DESCRIPTOR)
    plan = _plain_plan(obj, message.DESCRIPTOR)
    if plan is not None:
        _apply(plan, message)
        return unknown
    try:
        json_format.ParseDict(obj, message, ignore_unknown_fields=True)
    except json_format.ParseError as err:
        raise _fallback(err) from None
    return unknown


# -- the plain case without json_format ---------------------------------------------------------------------------
# Most requests (a move: ids, a key, a version, a column, a card) hold only strings, 32-bit integers, booleans,
# enums by name and nested messages of the same, written in their natural JSON types. ``json_format.ParseDict`` walks
# them in Python with many checks per field, which costs more than the rest of parsing a request; once ``check`` has
# passed, such an object is set on the message directly. Anything else (an enum by number, a 64-bit or floating-point
# number, a repeated, map or well-known field, a number written as a string, null, two members of one oneof, text
# that is not ASCII) goes to ``json_format`` as before, so its answers and its refusals are unchanged.
_STRING, _BOOL, _INT32, _MESSAGE, _ENUM = 1, 2, 3, 4, 5
_PLAIN_INTS = {F.TYPE_INT32, F.TYPE_SINT32, F.TYPE_SFIXED32, F.TYPE_UINT32, F.TYPE_FIXED32}
_Plain = tuple[str, int, Any, Any]
"""A field set directly: its proto name, its kind, its message descriptor (messages) or its numbers by name (enums),
and its real oneof (or None)."""
_PLAIN: dict[str, dict[str, _Plain | None]] = {}
_Plan = list[tuple[str, int, Any]]


def _plain_fields(desc: Any) -> dict[str, _Plain | None]:
    """The message's fields by JSON and by proto name: how each is set directly, or None (``json_format`` sets it)."""
    known = _PLAIN.get(desc.full_name)
    if known is None:
        known = {}
        for field in desc.fields:
            plain: _Plain | None = None
            oneof = field.containing_oneof
            real_oneof = oneof if oneof is not None and len(oneof.fields) > 1 else None
            if not field.is_repeated:
                if field.type == F.TYPE_STRING:
                    plain = (field.name, _STRING, None, real_oneof)
                elif field.type == F.TYPE_BOOL:
                    plain = (field.name, _BOOL, None, real_oneof)
                elif field.type in _PLAIN_INTS:
                    plain = (field.name, _INT32, None, real_oneof)
                elif field.type == F.TYPE_ENUM:
                    plain = (field.name, _ENUM, {v.name: v.number for v in field.enum_type.values}, real_oneof)
                elif field.type == F.TYPE_MESSAGE and not field.message_type.full_name.startswith("google.protobuf."):
                    plain = (field.name, _MESSAGE, field.message_type, real_oneof)
            known[field.name] = known[field.json_name] = plain
        _PLAIN[desc.full_name] = known
    return known


def _plain_plan(obj: dict[str, Any], desc: Any) -> _Plan | None:
    """What to set for ``obj`` (already checked), or None when ``json_format`` must parse it."""
    fields = _plain_fields(desc)
    plan: _Plan = []
    oneofs: set[str] | None = None
    for key, value in obj.items():
        if key not in fields:
            continue  # unknown: ignored, as json_format's ignore_unknown_fields does
        plain = fields[key]
        if plain is None:
            return None
        name, kind, sub, oneof = plain
        if oneof is not None:
            oneofs = oneofs if oneofs is not None else set()
            if oneof.name in oneofs:
                return None
            oneofs.add(oneof.name)
        kind_of = type(value)
        if kind == _STRING:
            if kind_of is not str or not value.isascii():
                return None
        elif kind == _INT32:
            if kind_of is not int:
                return None
        elif kind == _BOOL:
            if kind_of is not bool:
                return None
        elif kind == _ENUM:
            if kind_of is not str or value not in sub:
                return None
            value = sub[value]
        else:
            if kind_of is not dict:
                return None
            value = _plain_plan(value, sub)
            if value is None:
                return None
        plan.append((name, kind, value))
    return plan


def _apply(plan: _Plan, message: Any) -> None:
    for name, kind, value in plan:
        if kind == _MESSAGE:
            part = getattr(message, name)
            part.SetInParent()  # present even when empty, as ``{}`` makes it (``"drawStock": {}``)
            _apply(value, part)
        else:
            setattr(message, name, value)


def unknown_fields_header(unknown: list[str]) -> str:
    """The ``x-golf-unknown-fields`` value naming ``unknown`` (paths from ``check``): the first distinct ones, at
    most ``MAX_UNKNOWN_SHOWN`` and ``MAX_UNKNOWN_HEADER`` characters of them, separated by ", ", then ``+N more``
    when there are more. Each path is already cut like ``clip``; any character of it that is not visible ASCII, and
    ``%`` and ``,``, is percent-encoded (UTF-8), so the value is a safe header (no control characters, no line
    breaks, ASCII only) and splits back into the names at ", " (``urllib.parse.unquote`` gives each back)."""
    distinct = list(dict.fromkeys(unknown))
    shown: list[str] = []
    size = 0
    for name in distinct[:MAX_UNKNOWN_SHOWN]:
        safe = _header_safe(name)
        size += len(safe) + 2
        if shown and size > MAX_UNKNOWN_HEADER:
            break
        shown.append(safe)
    if len(distinct) > len(shown):
        shown.append(f"+{len(distinct) - len(shown)} more")  # a space: no name holds one unencoded
    return ", ".join(shown)


def _header_safe(name: str) -> str:
    if name.isascii() and name.isprintable() and not any(ch in name for ch in " %,"):
        return name  # the usual case: a lowerCamelCase path
    return "".join(ch if "!" <= ch <= "~" and ch not in "%," else quote(ch, safe="") for ch in name)


def _fallback(err: json_format.ParseError) -> ApiError:
    # Anything the check above lets through but json_format refuses (duplicate oneof members): its message
    # carries the path after " at ". The field names there were all checked above; a value may be anywhere in
    # the text, so the text is cut.
    text = str(err)
    _, found, where = text.rpartition(" at ")
    parts = where.split()[0].strip(" .\"'").split(".", 1) if found and where.strip() else []
    field = clip(parts[1]) if len(parts) == 2 else "body"
    return invalid(field, _cut(text))


def _cut(text: str) -> str:
    """A message of a parser, which may quote the client: cut at twice ``MAX_ECHO`` (it is mostly the parser's
    own words)."""
    return text if len(text) <= 2 * MAX_ECHO else text[: 2 * MAX_ECHO] + ELLIPSIS
