"""The import graph of solvers/ and app/ has no cycle.

Edges are read with ast from every ``import`` and ``from ... import`` statement, at module level AND inside
functions: a function-level import only delays the cycle to the first call, it does not remove the mutual
dependency (the isPADMM warm start of ALM-SNCG was such a call-time import). Imports under
``if TYPE_CHECKING:`` are left out (they never run), and so are ``importlib.import_module`` calls with computed
names (the benchmark dispatcher's, which only go downwards from solvers.bench to a family).

``from package import name`` is an edge to ``package.name`` when that is a module, else to ``package``. A module
inside a package imports its package's ``__init__`` first, but that implicit parent edge is not counted (every
``__init__`` importing its own modules would otherwise be a cycle by construction). For the same reason one explicit
kind is not counted either: a FUNCTION-level ``from . import solve`` (or ``METHODS``) from a module to its own
package's ``__init__``, the family's public entry point, which the package assembles from its modules; it runs only
after the package has finished importing. Sibling modules importing each other, at any level, always count.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("solvers", "app")


def module_files() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_nodes(tree: ast.AST):
    """(import statement, whether it sits inside a function) for the whole tree, skipping ``if TYPE_CHECKING:``."""
    stack = [(tree, False)]
    while stack:
        node, in_function = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, in_function
        in_function = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and is_type_checking(child.test):
                stack.extend((grandchild, in_function) for grandchild in child.orelse)
                continue
            stack.append((child, in_function))


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node, in_function in import_nodes(ast.parse(path.read_text(), str(path))):
        if in_function and isinstance(node, ast.ImportFrom) and node.level == 1 and not node.module \
                and path.name != "__init__.py" and all(f"{package}.{a.name}" not in modules for a in node.names):
            continue  # the own package's entry point, at call time (see the module docstring)
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            base = package.split(".")
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            candidates = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                          for alias in node.names]
        for candidate in candidates:
            while candidate and candidate not in modules:  # `import a.b.c` of a non-module attribute
                candidate = candidate.rpartition(".")[0]
            if candidate and candidate != name:
                targets.add(candidate)
    return targets


def import_graph() -> dict[str, set[str]]:
    modules = module_files()
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None (iterative depth-first search, three colours)."""
    state: dict[str, int] = {}
    for root in sorted(graph):
        if state.get(root):
            continue
        path, iterators = [root], [iter(sorted(graph[root]))]
        state[root] = 1
        while iterators:
            nxt = next(iterators[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iterators.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                iterators.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_the_import_graph_of_solvers_and_app_has_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_the_graph_sees_function_level_and_relative_imports():
    graph = import_graph()
    assert "solvers.smm.alm" in graph["solvers.smm.ispadmm"]  # module level, relative
    assert "solvers.sparse.bench_common" in graph["solvers.sparse.bench_peers"]
    assert "solvers.core" in graph["solvers.sparse.bench_common"]  # `from ..core import`


def test_a_sibling_import_inside_a_function_counts():
    graph = import_graph()
    assert "solvers.sparse" not in graph["solvers.sparse.path"]  # call-time `from . import solve`: not counted
    assert "solvers.sparse.synthetic" in graph["solvers.sparse"]  # `from . import synthetic`, a module: counted


def test_the_cycle_finder_finds_a_call_time_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
