"""Two contract types of our own for import-linter: ``make lint`` runs ``lint-imports``, the contracts are in
``pyproject.toml`` (``[tool.importlinter]``, which registers these under ``contract_types``).

- ``acyclic_modules``: no import cycle between modules. import-linter's own ``acyclic_siblings`` looks at packages,
  and a package may rightly import a sibling that imports it back through other modules (the ports name the table
  records; the table use cases, in the same package as the records, use the ports): what must never happen is a
  module reached again from itself.
- ``standard_library_only``: modules (or packages) that import nothing but the standard library and their own
  modules, whatever dependency the project adds later. It needs ``include_external_packages``: without it the graph
  holds no import of another package and the contract would be kept by default.
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Iterator
from itertools import pairwise

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output


def _lines(graph: ImportGraph, importer: str, imported: str) -> str:
    numbers = sorted({d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)})
    return ", ".join(f"l.{n}" for n in numbers)


class AcyclicModulesContract(Contract):
    """No module of ``packages`` (or of their descendants) imports itself, directly or through other modules."""

    packages = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        modules: set[str] = set()
        for package in self.packages:  # type: ignore[attr-defined]
            modules |= {package.name, *graph.find_descendants(package.name)}
        cycles = [_a_cycle(graph, part) for part in _tangles(graph, modules)]
        output.verbose_print(verbose, f"{len(modules)} modules, {len(cycles)} import cycles.")
        details = [[(a, b, _lines(graph, a, b)) for a, b in pairwise(c)] for c in cycles]
        return ContractCheck(kept=not cycles, metadata={"cycles": details})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for cycle in check.metadata["cycles"]:
            output.print_error(f"An import cycle through {len(cycle)} modules:")
            for importer, imported, lines in cycle:
                output.print(f"  {importer} -> {imported} ({lines})")
            output.new_line()


def _tangles(graph: ImportGraph, modules: set[str]) -> list[set[str]]:
    """The strongly connected parts of the import graph among ``modules`` that hold a cycle (Tarjan's algorithm,
    without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def successors(module: str) -> list[str]:
        return sorted(graph.find_modules_directly_imported_by(module) & modules)

    for root in sorted(modules):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = []
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work.append((root, iter(successors(root))))
        while work:
            module, rest = work[-1]
            step = next(rest, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(successors(step))))
                elif step in on_stack:
                    low[module] = min(low[module], index[step])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
            if low[module] == index[module]:
                part: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.add(member)
                    if member == module:
                        break
                if len(part) > 1 or module in graph.find_modules_directly_imported_by(module):
                    found.append(part)
    return found


def _a_cycle(graph: ImportGraph, part: set[str]) -> list[str]:
    """One shortest cycle through the first module of ``part`` (a tangle), as the modules along it, first repeated
    at the end."""
    start = min(part)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        for step in sorted(graph.find_modules_directly_imported_by(module) & part):
            if step == start:
                path = [module]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if step not in came_from:
                came_from[step] = module
                queue.append(step)
    raise AssertionError(f"no cycle through {start}")  # pragma: no cover - a tangle holds one


def _compiled_own(graph: ImportGraph, module: str, imported: str, source: str) -> bool:
    """Whether ``module`` imports ``imported`` (a root package) only as grimp records an import of one of
    ``source``'s own modules that has no Python source (a compiled extension: the engine's Cython search,
    ``golf.engine.solitaire._search``): as an import of the root package, the statement naming the module."""
    if "." in imported:
        return False
    named = [d["line_contents"].split()[1] for d in graph.get_import_details(importer=module, imported=imported)]
    return bool(named) and all(n == source or n.startswith(source + ".") for n in named)


class StandardLibraryOnlyContract(Contract):
    """Each of ``source_modules`` (with its descendants) imports nothing but the standard library and itself."""

    source_modules = fields.ListField(subfield=fields.ModuleField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        if not self.session_options.get("include_external_packages"):
            raise ValueError("standard_library_only needs include_external_packages = true")
        roots = set(self.session_options["root_packages"])
        outside: list[tuple[str, str, str]] = []
        for source in self.source_modules:  # type: ignore[attr-defined]
            own = {source.name, *graph.find_descendants(source.name)}
            for module in sorted(own):
                for imported in sorted(graph.find_modules_directly_imported_by(module) - own):
                    top = imported.split(".")[0]
                    if top in roots and _compiled_own(graph, module, imported, source.name):
                        continue
                    if top in roots or top not in sys.stdlib_module_names:
                        outside.append((module, imported, _lines(graph, module, imported)))
        output.verbose_print(verbose, f"{len(outside)} imports outside the standard library.")
        return ContractCheck(kept=not outside, metadata={"outside": outside})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module, imported, lines in check.metadata["outside"]:
            output.print_error(f"{module} imports {imported} ({lines}): neither the standard library nor its own.")
        output.new_line()
