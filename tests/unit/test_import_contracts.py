"""The import rules of ``pyproject.toml`` (``[tool.importlinter]``, checked by ``make lint``) and the two contract
types of our own they use (``tools/import_contracts.py``)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import grimp
from importlinter import Contract

from tools.import_contracts import AcyclicModulesContract, StandardLibraryOnlyContract

ROOT = Path(__file__).resolve().parents[2]


def contract(contract_id: str) -> dict[str, Any]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    found: dict[str, Any] = next(c for c in config["contracts"] if c["id"] == contract_id)
    return found


def test_every_module_of_the_tables_package_is_either_pure_or_a_use_case() -> None:
    """A module added to ``golf.app.tables`` must be named in the pure-tables contract: among the pure ones it
    checks, or among the use cases they may not import."""
    graph = grimp.build_graph("golf", cache_dir=None)
    modules = {"golf.app.tables", *graph.find_descendants("golf.app.tables")}
    rules = contract("pure-tables")
    pure = set(rules["source_modules"])
    use_cases = {m for m in rules["forbidden_modules"] if m.startswith("golf.app.tables.")}
    assert not pure & use_cases
    assert modules == pure | use_cases, sorted(modules ^ (pure | use_cases))


def graph_of(imports: list[tuple[str, str]], externals: tuple[str, ...] = ()) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for module in {m for pair in imports for m in pair} - set(externals):
        graph.add_module(module)
    for module in externals:
        graph.add_module(module, is_squashed=True)
    for n, (importer, imported) in enumerate(imports, start=1):
        graph.add_import(importer=importer, imported=imported, line_number=n, line_contents=f"import {imported}")
    return graph


def checked(kind: type[Contract], graph: grimp.ImportGraph, **options: Any) -> Any:
    session = {"root_packages": ["p"], "include_external_packages": True}
    return kind("test", session, options).check(graph, verbose=False)


def test_a_cycle_between_modules_is_found_with_the_lines_of_its_imports() -> None:
    graph = graph_of([("p", "p.a"), ("p.a", "p.b"), ("p.b", "p.c"), ("p.c", "p.a"), ("p.c", "p.d")])
    check = checked(AcyclicModulesContract, graph, packages=["p"])
    assert not check.kept
    assert check.metadata["cycles"] == [[("p.a", "p.b", "l.2"), ("p.b", "p.c", "l.3"), ("p.c", "p.a", "l.4")]]


def test_a_package_may_import_its_children_and_siblings_without_a_cycle() -> None:
    graph = graph_of([("p", "p.a"), ("p.a", "p.b"), ("p.b", "p.c"), ("p.a", "p.c"), ("p.x", "p.a")])
    assert checked(AcyclicModulesContract, graph, packages=["p"]).kept


def test_a_module_that_imports_itself_is_a_cycle() -> None:
    check = checked(AcyclicModulesContract, graph_of([("p", "p.a"), ("p.a", "p.a")]), packages=["p"])
    assert not check.kept and check.metadata["cycles"] == [[("p.a", "p.a", "l.2")]]


def test_only_the_standard_library_and_its_own_modules() -> None:
    imports = [("p.e", "p.e.a"), ("p.e.a", "json"), ("p.e.a", "yaml"), ("p.e.a", "p.app"), ("p.app", "yaml")]
    check = checked(StandardLibraryOnlyContract, graph_of(imports, ("json", "yaml")), source_modules=["p.e"])
    assert not check.kept
    assert check.metadata["outside"] == [("p.e.a", "p.app", "l.4"), ("p.e.a", "yaml", "l.3")]
    alone = graph_of([("p.e", "p.e.a"), ("p.e.a", "json"), ("p.app", "p.e"), ("p.app", "yaml")], ("json", "yaml"))
    assert checked(StandardLibraryOnlyContract, alone, source_modules=["p.e"]).kept
