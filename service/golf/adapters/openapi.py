"""OpenAPI for the REST gateway, derived from the protobuf descriptors so the docs show the real JSON shapes."""

from __future__ import annotations

from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from golf.adapters.openapi_rules import (
    array_keywords,
    int64_as_json,
    is_int64,
    is_map,
    is_required,
    map_keywords,
    oneof_required,
    rules_keywords,
    value_keywords,
)
from golf.api.contract import comment
from golf.api.rpc import NDJSON, Rpc

_WELL_KNOWN: dict[str, dict[str, Any]] = {
    "google.protobuf.Any": {
        "type": "object",
        "description": "A message of the type `@type` names, its fields beside `@type` in proto3 JSON",
        "properties": {"@type": {"type": "string"}},
        "required": ["@type"],
        "additionalProperties": True,
    },
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time", "example": "2026-11-29T12:00:00Z"},
    "google.protobuf.Duration": {
        "type": "string",
        "description": "Seconds with an `s` suffix",
        "example": "12.5s",
    },
}
_SCALARS: dict[int, dict[str, Any]] = {
    FieldDescriptor.TYPE_DOUBLE: {"type": "number"},
    FieldDescriptor.TYPE_FLOAT: {"type": "number"},
    FieldDescriptor.TYPE_INT32: {"type": "integer", "format": "int32"},
    FieldDescriptor.TYPE_SINT32: {"type": "integer", "format": "int32"},
    FieldDescriptor.TYPE_SFIXED32: {"type": "integer", "format": "int32"},
    FieldDescriptor.TYPE_UINT32: {"type": "integer", "format": "int64"},
    FieldDescriptor.TYPE_FIXED32: {"type": "integer", "format": "int64"},
    # proto3 JSON writes 64-bit integers as strings (and accepts numbers too).
    FieldDescriptor.TYPE_INT64: {"type": "string", "format": "int64"},
    FieldDescriptor.TYPE_SINT64: {"type": "string", "format": "int64"},
    FieldDescriptor.TYPE_SFIXED64: {"type": "string", "format": "int64"},
    FieldDescriptor.TYPE_UINT64: {"type": "string", "format": "uint64"},
    FieldDescriptor.TYPE_FIXED64: {"type": "string", "format": "uint64"},
    FieldDescriptor.TYPE_BOOL: {"type": "boolean"},
    FieldDescriptor.TYPE_STRING: {"type": "string"},
    FieldDescriptor.TYPE_BYTES: {"type": "string", "format": "byte"},
}
REF = "#/components/schemas/"
# protobuf's descriptor classes differ by backend (upb or pure Python); their stubs do not say which.
Descriptor = Any
EnumDescriptor = Any


def _enum_schema(enum: EnumDescriptor) -> dict[str, Any]:
    # Written by name; read by name or by number, as proto3 JSON parsers do (in a query string: its digits).
    names, numbers = [v.name for v in enum.values], [v.number for v in enum.values]
    schema: dict[str, Any] = {"type": ["string", "integer"], "enum": names + numbers}
    described = [(v.name, comment(f"{enum.full_name}.{v.name}")) for v in enum.values]
    lines = [f"- `{name}`: {text}" for name, text in described if text]
    head = comment(enum.full_name)
    name, number = names[-1], numbers[-1]
    forms = (
        f"Written by name. Read by name or by number, in a body and in a query string alike (`{name}` or `{number}`),"
        " as proto3 JSON parsers read them; a number the enum does not have is refused (400)."
    )
    schema["description"] = "\n".join([*([head, ""] if head else []), *lines, *([""] if head or lines else []), forms])
    return schema


def _value_schema(field: Any, found: dict[str, Descriptor]) -> dict[str, Any]:
    """The schema of one value of ``field``, with the contract's rules for it."""
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name in _WELL_KNOWN:
            return dict(_WELL_KNOWN[name])
        _collect(field.message_type, found)
        return {"$ref": REF + name}
    if field.type == FieldDescriptor.TYPE_ENUM:
        return {"$ref": REF + field.enum_type.full_name}
    base = dict(_SCALARS[field.type])
    if is_int64(field):
        return int64_as_json(base, value_keywords(field))
    return {**base, **value_keywords(field)}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or JSON ``null``, which proto3 JSON reads as the field's default (the server never writes it)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        nullable = {**schema, "type": [kind, "null"]}
        if "enum" in schema:
            nullable["enum"] = [*schema["enum"], None]
        return nullable
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    return {"anyOf": [schema, {"type": "null"}]}


def _map_schema(field: Any, found: dict[str, Descriptor]) -> dict[str, Any]:
    """A ``map<K, V>`` field: a JSON object of values by key (keys are strings in JSON, whatever K is)."""
    value_field = field.message_type.fields_by_name["value"]
    counts, keys, value_rules = map_keywords(field)
    if value_field.type == FieldDescriptor.TYPE_MESSAGE or value_field.type == FieldDescriptor.TYPE_ENUM:
        values = _value_schema(value_field, found)
    elif is_int64(value_field):
        values = int64_as_json(_SCALARS[value_field.type], rules_keywords(value_rules))
    else:
        values = {**_SCALARS[value_field.type], **rules_keywords(value_rules)}
    schema: dict[str, Any] = {"type": "object", "additionalProperties": values, **counts}
    if keys:
        schema["propertyNames"] = keys
    return schema


def _field_schema(field: Any, found: dict[str, Descriptor], in_json: bool = True) -> dict[str, Any]:
    """``field``'s schema in a JSON body (``in_json``: where ``null`` means the default) or as a parameter."""
    if is_map(field):
        schema = _map_schema(field, found)
        if in_json and not is_required(field):
            schema = _nullable(schema)
        text = comment(field.full_name)
        return {**schema, "description": text} if text else schema
    schema = _value_schema(field, found)
    if field.is_repeated:
        schema = {"type": "array", "items": schema, **array_keywords(field)}
    if in_json and not is_required(field):
        schema = _nullable(schema)
    text = comment(field.full_name)
    if text:
        schema = {**schema, "description": text}
    return schema


def _collect(desc: Descriptor, found: dict[str, Descriptor]) -> None:
    if desc.full_name in found:
        return
    found[desc.full_name] = desc
    for field in desc.fields:
        if is_map(field):  # a map's entry type is no message of the contract: only its value's type is
            value = field.message_type.fields_by_name["value"]
            if value.type == FieldDescriptor.TYPE_MESSAGE and value.message_type.full_name not in _WELL_KNOWN:
                _collect(value.message_type, found)
        elif field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name not in _WELL_KNOWN:
            _collect(field.message_type, found)


def _message_schema(desc: Descriptor, found: dict[str, Descriptor]) -> dict[str, Any]:
    props = {f.json_name: _field_schema(f, found) for f in desc.fields}
    schema: dict[str, Any] = {"type": "object", "properties": props}
    required = [f.json_name for f in desc.fields if is_required(f)]
    if required:
        schema["required"] = required
    notes = [comment(desc.full_name)] if comment(desc.full_name) else []
    for oneof in desc.oneofs:
        if oneof.name.startswith("_"):  # the hidden oneof of a proto3 `optional` field
            continue
        names = [f.json_name for f in oneof.fields]
        must = oneof_required(oneof)
        notes.append(f"Set {'exactly' if must else 'at most'} one of {', '.join(f'`{n}`' for n in names)}.")
        if len(names) == len(desc.fields):  # the whole message is the choice: say it in schema terms too
            schema["maxProperties"] = 1
            if must:
                schema["minProperties"] = 1
    if notes:
        schema["description"] = " ".join(notes)
    return schema


def components(descriptors: list[Descriptor]) -> dict[str, Any]:
    """Schemas for ``descriptors`` and every message and enum they reach, keyed by full proto name."""
    found: dict[str, Descriptor] = {}
    for desc in descriptors:
        _collect(desc, found)
    schemas: dict[str, Any] = {}
    for name, desc in found.items():
        schemas[name] = _message_schema(desc, found)
        for field in desc.fields:
            held = field.message_type.fields_by_name["value"] if is_map(field) else field  # a map: its values
            if held.type == FieldDescriptor.TYPE_ENUM:
                schemas[held.enum_type.full_name] = _enum_schema(held.enum_type)
    return schemas


_DEALING = {"CreateDeal", "CreateGame", "CreateRound", "StartNextHole", "GetDailyDeal"}
"""The RPCs that may deal a new winnable deal, and so answer DEAL_UNAVAILABLE."""


def _parameter(field: Any, where: str, required: bool) -> dict[str, Any]:
    """A path or query parameter: a request field, with its rules and its comment."""
    schema = _field_schema(field, {}, in_json=False)
    description = schema.pop("description", None)
    param: dict[str, Any] = {"name": field.json_name, "in": where, "required": required, "schema": schema}
    if description:
        param["description"] = description
    return param


def _body_schema(desc: Descriptor, path_fields: tuple[str, ...]) -> dict[str, Any]:
    """The request message, less the fields the path sets (``body: "*"`` in the route: every other field)."""
    if not path_fields:
        return {"$ref": REF + desc.full_name}
    schema = _message_schema(desc, {})
    for name in path_fields:
        schema["properties"].pop(name, None)
    required = [n for n in schema.pop("required", []) if n not in path_fields]
    if required:
        schema["required"] = required
    return schema


def _event_stream(rpc: Rpc, extra: dict[str, Any]) -> list[dict[str, Any]]:
    """A server-streaming RPC's route: its 200 is a stream of Server-Sent Events, one per message of the stream,
    each event's ``data`` one of the response's ``oneof`` members in proto3 JSON. The ``schema`` describes one
    event (OpenAPI 3.1 has no ``itemSchema``: tools read a sequential media type's schema as one item's), its
    ``data`` a string of JSON whose ``contentSchema`` names the message. Returns its header parameter
    (``Last-Event-ID``), if it takes one."""
    response: Descriptor = rpc.response.DESCRIPTOR
    members: list[Any] = [f for oneof in response.oneofs for f in oneof.fields if f.message_type is not None]
    named = {rpc.event_name(f.json_name): REF + f.message_type.full_name for f in members}
    named["error"] = REF + "golf.v1.Error"
    kinds = "; ".join(f"`{name}`: a `{ref.removeprefix(REF)}`" for name, ref in named.items())

    def one(name: str, ref: str) -> dict[str, Any]:
        """An event named ``name`` whose data is the message ``ref``."""
        return {
            "type": "object",
            "properties": {
                "event": {"const": name},
                "id": {
                    "type": "string",
                    "pattern": "^[0-9]+$",
                    "description": "The sequence number to resume from (`Last-Event-ID`), on events that have one",
                },
                "data": {
                    "type": "string",
                    "contentMediaType": "application/json",
                    "contentSchema": {"$ref": ref},
                    "description": f"A `{ref.removeprefix(REF)}` in proto3 JSON, on one line",
                },
                "retry": {"type": "integer", "minimum": 0, "description": "Milliseconds to wait before reconnecting"},
            },
            "required": ["event", "data"],
        }

    event = {
        "description": f"One Server-Sent Event, its fields as the lines of the SSE format: {kinds}.",
        "oneOf": [one(name, ref) for name, ref in named.items()],
    }
    extra["responses"]["200"] = {
        "description": "A stream of Server-Sent Events (`text/event-stream`), one per message of the gRPC stream "
        f"(`{response.full_name}`): `id` is the sequence number to resume from (events that have one), `event` "
        f"says what `data` is ({kinds}), and `data` is that message in proto3 JSON on one line. A stream that "
        "ends with a refusal sends it last (`event: error`; for `UNAVAILABLE`: reconnect with `Last-Event-ID` "
        "after `retry` milliseconds).",
        "headers": {
            **extra["responses"]["200"]["headers"],
            "Cache-Control": {"schema": {"type": "string"}, "description": "`no-cache`"},
        },
        "content": {"text/event-stream": {"schema": event}},
    }
    extra["responses"]["204"] = {"description": "Nothing will ever come (a match that is over, all of it sent)"}
    if not rpc.resume_from:
        return []
    return [
        {
            "name": "Last-Event-ID",
            "in": "header",
            "required": False,
            "schema": {"type": "string", "pattern": "^[0-9]{1,19}$"},
            "description": f"The `id` of the last event received: sets `{rpc.resume_from}` (and wins over the "
            "query), as a browser's `EventSource` does when it reconnects.",
        }
    ]


def _ndjson_stream(rpc: Rpc, extra: dict[str, Any]) -> None:
    """A server-streaming RPC served as newline-delimited JSON: its 200 is one line per message of the stream, the
    message's data (the response's one message field, e.g. a ``Record``) in proto3 JSON; a stream that ends with a
    refusal ends with a line ``{"error": Error}``. The ``schema`` describes one line (as for Server-Sent Events:
    OpenAPI 3.1 tools read a sequential media type's schema as one item's)."""
    response: Descriptor = rpc.response.DESCRIPTOR
    members = [f for f in response.fields if f.message_type is not None]
    names = ", ".join(f"`{f.message_type.full_name}`" for f in members)
    error_line = {
        "type": "object",
        "properties": {"error": {"$ref": REF + "golf.v1.Error"}},
        "required": ["error"],
        "description": "The last line of a stream that ended with a refusal after it began",
    }
    extra["responses"]["200"] = {
        "description": f"Newline-delimited JSON (`application/x-ndjson`), streamed: one line per message of the gRPC "
        f"stream (`{response.full_name}`), each line a {names} in proto3 JSON. No lines when nothing matches. A "
        "refusal before the first line is an ordinary JSON error; one after the stream began is its last line, "
        '`{"error": Error}`, and a client must treat the export as incomplete.',
        "headers": {
            **extra["responses"]["200"]["headers"],
            "Cache-Control": {"schema": {"type": "string"}, "description": "`no-cache`"},
        },
        "content": {
            "application/x-ndjson": {
                "schema": {
                    "description": "One line of the stream",
                    "oneOf": [*({"$ref": REF + f.message_type.full_name} for f in members), error_line],
                }
            }
        },
    }


def rpc_openapi(rpc: Rpc) -> dict[str, Any]:
    """The operation's parameters, request body and responses for FastAPI's ``openapi_extra``."""
    desc = rpc.request.DESCRIPTOR
    by_json = {f.json_name: f for f in desc.fields}
    path_fields = rpc.route.path_fields
    params: list[dict[str, Any]] = [_parameter(by_json[name], "path", True) for name in path_fields]
    error = {"content": {"application/json": {"schema": {"$ref": REF + "golf.v1.Error"}}}}
    extra: dict[str, Any] = {
        "responses": {
            "200": {
                "description": "OK",
                "headers": {
                    "x-golf-unknown-fields": {
                        "schema": {"type": "string"},
                        "description": "Sent when the request had keys (body or query) this server's contract does "
                        "not have: they were ignored. Their JSON paths (such as `rules.undoPolcy`), comma-separated, "
                        "at most 10 then `+N more`; other characters than visible ASCII, `%` and `,` "
                        "percent-encoded.",
                    }
                },
                "content": {"application/json": {"schema": {"$ref": REF + rpc.response.DESCRIPTOR.full_name}}},
            },
            "400": {"description": "Invalid argument (`field` names it) or an impossible move", **error},
            "401": {
                "description": "No valid access token (or refresh token): sign in again",
                "headers": {"WWW-Authenticate": {"schema": {"type": "string"}, "description": "RFC 6750 challenge"}},
                **error,
            },
            "403": {"description": "Another player's resource that the caller may see but not change", **error},
            "404": {"description": "Not found (or another player's game in progress)", **error},
            "405": {
                "description": "The path does not take this method (`METHOD_NOT_ALLOWED`)",
                "headers": {"Allow": {"schema": {"type": "string"}, "description": "The methods the path takes"}},
                **error,
            },
            "409": {"description": "Refused move, stale version or reused idempotency key", **error},
            "429": {
                "description": "Rate limited: retry after `Retry-After` seconds (`retryDelay` in the body)",
                "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait"}},
                **error,
            },
            "500": {"description": "Internal error; safe to retry", **error},
            "503": {
                "description": "`UNAVAILABLE`: the database is out of reach or the solver's queue is full; retry "
                "after `Retry-After` seconds with the same idempotency key",
                "headers": {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait"}},
                **error,
            },
        }
    }
    # Public RPCs (signing in) need no token; the document's default security covers the rest.
    if rpc.public:
        extra["security"] = []
    if rpc.name in _DEALING:
        extra["responses"]["422"] = {
            "description": "`DEAL_UNAVAILABLE`: no winnable deal of these rules and difficulty turned up within the "
            "solver's budget; relax the request",
            **error,
        }
    if rpc.stream is not None and rpc.rest_stream == NDJSON:
        _ndjson_stream(rpc, extra)
    elif rpc.stream is not None:
        params += _event_stream(rpc, extra)
    if rpc.http_method == "POST":
        body = _body_schema(desc, path_fields)
        # No body (or an empty one) is the empty message, as in gRPC: required only when a field of it is.
        needs = bool(body.get("required")) or any(is_required(f) for f in desc.fields if f.json_name not in path_fields)
        extra["requestBody"] = {"required": needs, "content": {"application/json": {"schema": body}}}
        extra["responses"]["413"] = {
            "description": "The body is larger than the server takes (`GOLF_MAX_BODY_BYTES`, 64 KiB by default): "
            "`PAYLOAD_TOO_LARGE`, refused before it is read",
            **error,
        }
    else:
        params += [_parameter(f, "query", is_required(f)) for f in desc.fields if f.json_name not in path_fields]
    extra["parameters"] = params
    return extra
