"""The contract as the ``.proto`` files state it, read at run time: each RPC's REST route (its ``google.api.http``
option) and the comments of every service, method, message, field and enum value.

Routes come from the descriptors the generated code carries. Comments do not (protoc leaves them out of generated
code): ``make gen`` writes the contract with them as a descriptor set, ``golf/v1/contract.binpb``, read here once.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from google.api import annotations_pb2, http_pb2
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import MethodDescriptor

_PATH_FIELD = re.compile(r"{(\w+)}")


@dataclass(frozen=True, slots=True)
class HttpRoute:
    """An RPC's REST route: ``method`` (``GET``, ``POST``), ``path`` with its variables in proto3 JSON form
    (``/v1/games/{gameId}``), the request fields those variables fill, and whether the body is the request."""

    method: str
    path: str
    path_fields: tuple[str, ...]
    body: bool


def http_route(method: MethodDescriptor) -> HttpRoute:
    """The REST route of ``method`` from its ``google.api.http`` option; ``ValueError`` when it has none or one
    the gateway does not serve (only ``get`` and ``delete`` without a body and ``post`` with ``body: "*"`` are
    used; the fields of a request without a body, but those of its path, travel in the query)."""
    options = method.GetOptions()
    if not options.HasExtension(annotations_pb2.http):
        raise ValueError(f"{method.full_name} has no google.api.http option")
    rule: http_pb2.HttpRule = options.Extensions[annotations_pb2.http]
    kind = rule.WhichOneof("pattern")
    if kind == "get" and not rule.body:
        template = rule.get
    elif kind == "post" and rule.body == "*":
        template = rule.post
    elif kind == "delete" and not rule.body:
        template = rule.delete
    else:
        raise ValueError(f'{method.full_name}: only GET and DELETE without a body and POST with body "*" are served')
    by_name = method.input_type.fields_by_name
    for name in _PATH_FIELD.findall(template):
        if name not in by_name:
            raise ValueError(f"{method.full_name}: the route names {name!r}, which the request does not have")
    path = _PATH_FIELD.sub(lambda m: "{" + by_name[m.group(1)].json_name + "}", template)
    fields = tuple(by_name[name].json_name for name in _PATH_FIELD.findall(template))
    return HttpRoute(kind.upper(), path, fields, kind == "post")


@functools.cache
def _comments() -> dict[str, str]:
    """Leading comments by full name: ``golf.v1.Game``, ``golf.v1.Game.status``, ``golf.v1.SolitaireService.Hint``,
    ``golf.v1.GameStatus.GAME_STATUS_WON``."""
    data = resources.files("golf.v1").joinpath("contract.binpb").read_bytes()
    found: dict[str, str] = {}
    for file in descriptor_pb2.FileDescriptorSet.FromString(data).file:
        if not file.name.startswith("golf/"):
            continue
        names = _names_by_path(file)
        for location in file.source_code_info.location:
            name = names.get(tuple(location.path))
            if name is not None and location.leading_comments.strip():
                found[name] = " ".join(line.strip() for line in location.leading_comments.strip().splitlines())
    return found


def comment(full_name: str) -> str:
    """The leading comment of a service, method, message, field or enum value, on one line; empty if none."""
    return _comments().get(full_name, "")


# Field numbers in descriptor.proto, as source locations' paths use them.
_MESSAGE, _ENUM, _SERVICE = 4, 5, 6
_FIELD, _NESTED, _NESTED_ENUM = 2, 3, 4
_ENUM_VALUE, _METHOD = 2, 2


def _names_by_path(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    names: dict[tuple[int, ...], str] = {}
    package = file.package

    def enum(path: tuple[int, ...], prefix: str, desc: descriptor_pb2.EnumDescriptorProto) -> None:
        names[path] = f"{prefix}.{desc.name}"
        for i, value in enumerate(desc.value):
            names[(*path, _ENUM_VALUE, i)] = f"{prefix}.{desc.name}.{value.name}"

    def message(path: tuple[int, ...], prefix: str, desc: descriptor_pb2.DescriptorProto) -> None:
        full = f"{prefix}.{desc.name}"
        names[path] = full
        for i, field in enumerate(desc.field):
            names[(*path, _FIELD, i)] = f"{full}.{field.name}"
        for i, nested in enumerate(desc.nested_type):
            message((*path, _NESTED, i), full, nested)
        for i, nested_enum in enumerate(desc.enum_type):
            enum((*path, _NESTED_ENUM, i), full, nested_enum)

    for i, msg in enumerate(file.message_type):
        message((_MESSAGE, i), package, msg)
    for i, top_enum in enumerate(file.enum_type):
        enum((_ENUM, i), package, top_enum)
    for i, service in enumerate(file.service):
        names[(_SERVICE, i)] = f"{package}.{service.name}"
        for j, method in enumerate(service.method):
            names[(_SERVICE, i, _METHOD, j)] = f"{package}.{service.name}.{method.name}"
    return names
