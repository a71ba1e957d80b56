"""The one validation layer both transports run on every request before its handler.

The field rules (lengths, ranges, formats, required fields, known enum values) are stated in the contract itself,
as ``buf.validate`` options in ``proto/golf/v1``, and checked here with protovalidate; the OpenAPI document shows the
same rules. What the options cannot say, the checks here add: no string may hold a NUL character (see
``golf.api.text``). A request that breaks a rule is refused as INVALID_ARGUMENT / 400 naming the field, in proto3
JSON form (``rules.decks``), before any handler, database or solver sees it.
"""

from __future__ import annotations

from typing import Any

import protovalidate
from google.protobuf.message import Message

from golf.api.errors import ApiError, Violation, invalid
from golf.api.text import check_text

_VALIDATOR = protovalidate.Validator()


def check_request(message: Message) -> None:
    """Raise ``ApiError`` (INVALID_ARGUMENT) when ``message`` breaks a rule of the contract."""
    violations = _VALIDATOR.collect_violations(message)
    if violations:
        raise _refusal(message, violations)
    check_text(message)


def _refusal(message: Message, violations: list[protovalidate.Violation]) -> ApiError:
    """The first violation names the field; the message lists every one (a client fixes them all at once)."""
    found = [(*_where(message, v), v.proto.rule_id) for v in violations]
    broken = [Violation(path, f"{path} {problem}" if path else problem, rule) for path, problem, rule in found]
    return invalid(broken[0].field, "; ".join(v.description for v in broken), broken)


def _where(message: Message, violation: protovalidate.Violation) -> tuple[str, str]:
    """The field at fault as a proto3 JSON path (``rules.decks``, ``moves[2]``) and what is wrong with it.

    A required oneof left empty is reported on the message holding it, naming its choices: ``move`` must set one
    of ``playColumn``, ``drawStock``.
    """
    parts: list[str] = []
    desc: Any = message.DESCRIPTOR
    problem = ""
    field = violation.proto.field
    for element in field.elements if field is not None else ():
        if desc is not None and element.field_name in desc.oneofs_by_name:
            choices = ", ".join(f.json_name for f in desc.oneofs_by_name[element.field_name].fields)
            problem = f"must set one of {choices}"
            break
        fd = desc.fields_by_name.get(element.field_name) if desc is not None else None
        name = fd.json_name if fd is not None else element.field_name
        desc = fd.message_type if fd is not None else None
        subscript = element.subscript  # a repeated field's index or a map's key
        if subscript is not None:
            key = subscript.value
            name += f"[{key}]" if subscript.field == "index" else f"[{key!r}]"
        parts.append(name)
    if not problem:
        rule = violation.proto.rule_id
        problem = "is required" if rule == "required" else violation.proto.message or rule
    return ".".join(parts), problem
