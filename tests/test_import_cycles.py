"""No import cycles in the package, counting the imports written inside functions (and under TYPE_CHECKING).

A function-local import hides a cycle from Python at import time, not from the design: two modules that need each
other are one module, or share a third. grimp (installed with import-linter) records every import statement.
"""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("blueprints", include_external_packages=False, exclude_type_checking_imports=False)


def strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """The import cycles, each as the sorted modules of one strongly connected component (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1 or module in graph.find_modules_directly_imported_by(module):
                cycles.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return cycles


def test_the_graph_counts_imports_written_inside_functions(graph):
    # The commands that plan import the offline preview inside a function, to keep `aitrain --help` fast.
    assert graph.direct_import_exists(importer="blueprints.cli.support", imported="blueprints.engine.preview")
    details = graph.get_import_details(importer="blueprints.cli.support", imported="blueprints.engine.preview")
    assert any(d["line_contents"].startswith("from ") for d in details)


def test_there_are_no_import_cycles(graph):
    assert strongly_connected(graph) == []


def test_the_cycle_finder_finds_a_planted_cycle():
    planted = grimp.ImportGraph()
    for module in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        planted.add_module(module)
    planted.add_import(importer="pkg.a", imported="pkg.b")
    planted.add_import(importer="pkg.b", imported="pkg.a")
    planted.add_import(importer="pkg.c", imported="pkg.a")
    assert strongly_connected(planted) == [["pkg.a", "pkg.b"]]
