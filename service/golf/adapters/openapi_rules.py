"""The contract's field rules (``buf.validate`` options) as JSON Schema keywords for the OpenAPI document.

The same options protovalidate enforces on every request (``golf.api.validation``), shown where OpenAPI tools and
API clients read them: lengths, ranges, allowed values, patterns, and which fields a request must set.
"""

from __future__ import annotations

from typing import Any

from buf.validate import validate_pb2
from google.protobuf.descriptor import FieldDescriptor

# protobuf's descriptor classes differ by backend (upb or pure Python); their stubs do not say which.
Field = Any
Oneof = Any

_NUMBER_KINDS = ("int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32",
                 "sfixed64", "float", "double")  # fmt: skip


def field_rules(field: Field) -> validate_pb2.FieldRules | None:
    options = field.GetOptions()
    if not options.HasExtension(validate_pb2.field):
        return None
    rules: validate_pb2.FieldRules = options.Extensions[validate_pb2.field]
    return rules


def is_required(field: Field) -> bool:
    """The request must set the field (``required``): a non-empty string, a present message."""
    rules = field_rules(field)
    return rules is not None and rules.required


def oneof_required(oneof: Oneof) -> bool:
    options = oneof.GetOptions()
    return bool(options.HasExtension(validate_pb2.oneof) and options.Extensions[validate_pb2.oneof].required)


def value_keywords(field: Field) -> dict[str, Any]:
    """JSON Schema keywords for one value of ``field`` (each item of a repeated field)."""
    return rules_keywords(field_rules(field))


def rules_keywords(rules: validate_pb2.FieldRules | None) -> dict[str, Any]:
    """JSON Schema keywords for a value held to ``rules`` (a field's, or a map's keys' or values')."""
    if rules is None:
        return {}
    kind = rules.WhichOneof("type")
    out: dict[str, Any] = {}
    if kind == "string":
        text = rules.string
        if text.HasField("min_len"):
            out["minLength"] = text.min_len
        elif rules.required:
            out["minLength"] = 1
        if text.HasField("max_len"):
            out["maxLength"] = text.max_len
        if text.HasField("pattern"):
            out["pattern"] = text.pattern
    elif kind in _NUMBER_KINDS:
        number = getattr(rules, kind)
        for name, keyword in (("gte", "minimum"), ("lte", "maximum"), ("gt", "exclusiveMinimum"),
                              ("lt", "exclusiveMaximum")):  # fmt: skip
            if number.HasField(name):
                out[keyword] = getattr(number, name)
        allowed = list(getattr(number, "in"))
        if allowed:
            out["enum"] = allowed
    return out


def array_keywords(field: Field) -> dict[str, Any]:
    rules = field_rules(field)
    if rules is None or rules.WhichOneof("type") != "repeated":
        return {}
    out: dict[str, Any] = {}
    if rules.repeated.HasField("min_items"):
        out["minItems"] = rules.repeated.min_items
    if rules.repeated.HasField("max_items"):
        out["maxItems"] = rules.repeated.max_items
    return out


def is_map(field: Field) -> bool:
    """A ``map<K, V>`` field: in JSON an object of values by key."""
    return bool(field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry)


def map_keywords(field: Field) -> tuple[dict[str, Any], dict[str, Any], validate_pb2.FieldRules | None]:
    """A map field's object keywords (``maxProperties``...), its keys' schema keywords (``propertyNames``) and
    the rules of its values."""
    rules = field_rules(field)
    if rules is None or rules.WhichOneof("type") != "map":
        return {}, {}, None
    pairs = rules.map
    out: dict[str, Any] = {}
    if pairs.HasField("min_pairs"):
        out["minProperties"] = pairs.min_pairs
    if pairs.HasField("max_pairs"):
        out["maxProperties"] = pairs.max_pairs
    keys = rules_keywords(pairs.keys) if pairs.HasField("keys") else {}
    return out, keys, pairs.values if pairs.HasField("values") else None


def int64_as_json(base: dict[str, Any], keywords: dict[str, Any]) -> dict[str, Any]:
    """A 64-bit integer: proto3 JSON writes it as a string of digits and reads a number too. Bounds apply to the
    number form; the string form is held to digits."""
    number = {"type": "integer", "format": base.get("format", "int64"), **keywords}
    return {"anyOf": [number, {"type": "string", "pattern": "^-?[0-9]+$"}]}


def is_int64(field: Field) -> bool:
    return field.type in (
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
    )
