"""OpenAPI for the REST gateway, derived from the protobuf descriptors so the docs show the real JSON shapes."""

from __future__ import annotations

import re
from typing import Any

from google.protobuf.descriptor import FieldDescriptor

from golf.api.rpc import Rpc

_WELL_KNOWN: dict[str, dict[str, Any]] = {
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
    return {"type": "string", "enum": [v.name for v in enum.values]}


def _field_schema(field: Any, found: dict[str, Descriptor]) -> dict[str, Any]:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        name = field.message_type.full_name
        if name in _WELL_KNOWN:
            schema = dict(_WELL_KNOWN[name])
        else:
            _collect(field.message_type, found)
            schema = {"$ref": REF + name}
    elif field.type == FieldDescriptor.TYPE_ENUM:
        schema = {"$ref": REF + field.enum_type.full_name}
    else:
        schema = dict(_SCALARS[field.type])
    if field.is_repeated:
        return {"type": "array", "items": schema}
    return schema


def _collect(desc: Descriptor, found: dict[str, Descriptor]) -> None:
    if desc.full_name in found:
        return
    found[desc.full_name] = desc
    for field in desc.fields:
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.full_name not in _WELL_KNOWN:
            _collect(field.message_type, found)


def _message_schema(desc: Descriptor, found: dict[str, Descriptor]) -> dict[str, Any]:
    props = {f.json_name: _field_schema(f, found) for f in desc.fields}
    schema: dict[str, Any] = {"type": "object", "properties": props}
    oneofs = [o for o in desc.oneofs if not o.name.startswith("_")]
    if oneofs:
        schema["description"] = "; ".join(
            f"set exactly one of {', '.join(f.json_name for f in o.fields)}" for o in oneofs
        )
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
            if field.type == FieldDescriptor.TYPE_ENUM:
                schemas[field.enum_type.full_name] = _enum_schema(field.enum_type)
    return schemas


def rpc_openapi(rpc: Rpc) -> dict[str, Any]:
    """The operation's parameters, request body and responses for FastAPI's ``openapi_extra``."""
    desc = rpc.request.DESCRIPTOR
    path_fields = set(re.findall(r"{(\w+)}", rpc.http_path))
    params: list[dict[str, Any]] = [
        {"name": f, "in": "path", "required": True, "schema": {"type": "string"}} for f in sorted(path_fields)
    ]
    error = {"content": {"application/json": {"schema": {"$ref": REF + "golf.v1.Error"}}}}
    extra: dict[str, Any] = {
        "responses": {
            "200": {
                "description": "OK",
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
        }
    }
    # Public RPCs (signing in) need no token; the document's default security covers the rest.
    if rpc.public:
        extra["security"] = []
    if rpc.http_method == "POST":
        extra["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": {"$ref": REF + desc.full_name}}},
        }
        extra["responses"]["413"] = {
            "description": "The body is larger than the server takes (`GOLF_MAX_BODY_BYTES`, 64 KiB by default): "
            "`PAYLOAD_TOO_LARGE`, refused before it is read",
            **error,
        }
    else:
        params += [
            {"name": f.json_name, "in": "query", "required": False, "schema": _field_schema(f, {})}
            for f in desc.fields
            if f.json_name not in path_fields
        ]
    extra["parameters"] = params
    return extra
