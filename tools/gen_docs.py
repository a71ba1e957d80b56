"""Write the parts of the docs that would drift if written by hand, from what they describe (``make docs``).

Each generated part is a block between two markers in a hand-written page::

    <!-- generated: settings -->
    ...
    <!-- end generated -->

The first marker names what goes there; the lines between the markers are replaced, the rest of the page is kept.
What a block can be:

- ``settings``: every setting of ``golf.adapters.settings.Settings`` (its environment variable, type, default and
  the attribute docstring under the field), and ``trusted-issuer``: the fields of one ``GOLF_TRUSTED_ISSUERS``
  entry, from ``TrustedIssuerSettings``;
- ``rpcs golf.v1.TableService``: each RPC of a service, its REST route (its ``google.api.http`` option, as the
  gateway serves it) and the first sentence of its comment in the ``.proto`` (from the contract's descriptor set
  that ``make install`` writes, through ``golf.api.contract``);
- ``house-rules`` and ``presets``: the card Golf house rules catalogue and presets of the engine.

``python tools/gen_docs.py`` rewrites the pages; ``--check`` writes nothing and exits 1 naming every stale page.
``tests/unit/test_docs.py`` regenerates in memory and fails on a stale page.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "service"))

from golf.adapters import settings as settings_module  # noqa: E402
from golf.api import contract  # noqa: E402
from golf.engine.cardgolf.house_rules import HOUSE_RULES, conflicts_of  # noqa: E402
from golf.engine.cardgolf.presets import DESCRIPTIONS, PRESETS, preset_version  # noqa: E402

PAGES = ("README.md", "docs/*.md")
"""The pages that may hold generated blocks (globs under the repository's root)."""

_BLOCK = re.compile(r"(<!-- generated: ([^>]+?) -->\n)(.*?)(<!-- end generated -->)", re.DOTALL)
_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s|$)")


def pages() -> list[Path]:
    """Every page that may hold generated blocks, in a stable order."""
    found: list[Path] = []
    for pattern in PAGES:
        found.extend(sorted(ROOT.glob(pattern)))
    return found


def regenerate(text: str) -> str:
    """``text`` with every generated block written afresh; ``ValueError`` for a block of an unknown kind."""

    def block(match: re.Match[str]) -> str:
        return match.group(1) + render(match.group(2).strip()) + match.group(4)

    return _BLOCK.sub(block, text)


def render(name: str) -> str:
    """The lines of the block called ``name`` (``settings``, ``rpcs golf.v1.TableService``, ...), ending in a
    newline."""
    kind, _, argument = name.partition(" ")
    renderer = _RENDERERS.get(kind)
    if renderer is None:
        raise ValueError(f"unknown generated block {name!r}: one of {', '.join(sorted(_RENDERERS))}")
    return renderer(argument.strip())


# -- settings --------------------------------------------------------------------------------------------------------


def _docstrings(class_name: str) -> dict[str, tuple[str, str]]:
    """Each field of the class ``class_name`` in the settings module: its annotation as written and the docstring
    under it (empty when it has none), read from the source so the service itself needs no change to be documented.
    """
    tree = ast.parse(Path(settings_module.__file__ or "").read_text())
    cls = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == class_name)
    found: dict[str, tuple[str, str]] = {}
    body = cls.body
    for i, node in enumerate(body):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            doc = ""
            after = body[i + 1] if i + 1 < len(body) else None
            if (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                doc = " ".join(line.strip() for line in after.value.value.strip().splitlines()).replace("``", "`")
            found[node.target.id] = (ast.unparse(node.annotation), doc)
    return found


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list | dict):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def _bounds(metadata: list[Any]) -> str:
    """Bounds a field declares (``Field(ge=0)``), as text beside its type."""
    words = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
    parts = [f"{words[key]} {getattr(item, key)}" for item in metadata for key in words if hasattr(item, key)]
    return f" ({', '.join(parts)})" if parts else ""


def _cell(text: str) -> str:
    """Text safe in one table cell: on one line, its ``|`` escaped."""
    return text.replace("|", "\\|").replace("\n", " ")


def _settings(_: str) -> str:
    model = settings_module.Settings
    prefix = str(model.model_config.get("env_prefix", ""))
    docs = _docstrings(model.__name__)
    lines = ["| variable | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        names = [prefix + name.upper()]
        alias = field.validation_alias
        if alias is not None and hasattr(alias, "choices"):
            names = [str(choice) for choice in alias.choices]
        variable = "`" + "`, formerly `".join(names) + "`"
        annotation, doc = docs[name]
        if not doc:
            raise ValueError(f"the setting {name} has no docstring in {model.__module__} to document it by")
        kind = f"`{_cell(annotation)}`{_bounds(field.metadata)}"
        lines.append(f"| {variable} | {kind} | {_default(field.get_default())} | {_cell(doc)} |")
    return "\n".join(lines) + "\n"


def _trusted_issuer(_: str) -> str:
    model = settings_module.TrustedIssuerSettings
    docs = _docstrings(model.__name__)
    lines = ["| field | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        annotation, doc = docs[name]
        default = "required" if field.is_required() else _default(field.get_default())
        lines.append(f"| `{name}` | `{_cell(annotation)}`{_bounds(field.metadata)} | {default} | {_cell(doc)} |")
    return "\n".join(lines) + "\n"


# -- the contract ----------------------------------------------------------------------------------------------------


def _first_sentence(text: str) -> str:
    match = _SENTENCE.match(text)
    return match.group(1) if match else text


def _rpcs(service: str) -> str:
    package, _, name = service.rpartition(".")
    descriptor = None
    for module_path in sorted((ROOT / "proto" / Path(*package.split("."))).glob("*_service.proto")):
        module = importlib.import_module(f"{package}.{module_path.stem}_pb2")
        descriptor = module.DESCRIPTOR.services_by_name.get(name) or descriptor
    if descriptor is None:
        raise ValueError(f"no service {service} in proto/{package.replace('.', '/')}")
    lines = [f"| RPC (`{service}`) | REST | what it does |", "| --- | --- | --- |"]
    for method in descriptor.methods:
        route = contract.http_route(method)
        stream = " (a server stream)" if method.server_streaming else ""
        what = _first_sentence(contract.comment(method.full_name))
        lines.append(f"| `{method.name}`{stream} | `{route.method} {route.path}` | {_cell(what)} |")
    return "\n".join(lines) + "\n"


# -- the card Golf catalogues ----------------------------------------------------------------------------------------


def _json_name(option: str) -> str:
    """A ``GolfRules`` field as ``CardGolfRules`` names it in JSON (``flip_after_discard``: ``flipAfterDiscard``);
    an entry of a table of points keeps its key (``values.K``)."""
    field, dot, key = option.partition(".")
    head, *rest = field.split("_")
    return head + "".join(word.title() for word in rest) + dot + key


def _house_rules(_: str) -> str:
    lines = ["| house rule | what it does | options it sets | conflicts with |", "| --- | --- | --- | --- |"]
    for rule in HOUSE_RULES.values():
        options = ", ".join(f"`{_json_name(key)}`" for key in rule.decides)
        conflicts = ", ".join(f"`{other}`" for other in conflicts_of(rule.name)) or "-"
        lines.append(f"| `{rule.name}` | {_cell(rule.description)} | {options} | {conflicts} |")
    return "\n".join(lines) + "\n"


def _presets(_: str) -> str:
    lines = ["| preset | version | what it is |", "| --- | ---: | --- |"]
    for name in PRESETS:
        lines.append(f"| `{name}` | {preset_version(name)} | {_cell(DESCRIPTIONS[name])} |")
    return "\n".join(lines) + "\n"


_RENDERERS: dict[str, Callable[[str], str]] = {
    "settings": _settings,
    "trusted-issuer": _trusted_issuer,
    "rpcs": _rpcs,
    "house-rules": _house_rules,
    "presets": _presets,
}


def stale() -> Iterator[tuple[Path, str]]:
    """Each page whose generated blocks differ from what they describe today, with its text regenerated."""
    for page in pages():
        text = page.read_text()
        fresh = regenerate(text)
        if fresh != text:
            yield page, fresh


def main(argv: list[str] | None = None) -> int:
    """Rewrite the stale pages (``--check``: name them and exit 1, writing nothing)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a page is stale")
    args = parser.parse_args(argv)
    found = list(stale())
    for page, fresh in found:
        where = page.relative_to(ROOT)
        if args.check:
            print(f"stale: {where} (run make docs)", file=sys.stderr)
        else:
            page.write_text(fresh)
            print(f"wrote {where}")
    return 1 if args.check and found else 0


if __name__ == "__main__":
    sys.exit(main())
