"""The package's import graph, read statically (``ast``; nothing is imported).

An edge ``a -> b`` means module ``a`` imports module ``b`` of the same package (or a module inside
package ``b``, whose ``__init__`` runs first). Imports run when
the module is loaded (at module level, in a class body, under ``if``/``try``) are *module-level*;
imports inside a function or method are *function-level* and counted apart: they only run when
called, so they cannot make a cycle at import time. A module importing a package it is inside
(``from yoxla import __version__``) is no edge: that package's ``__init__`` has already run. Imports under ``if TYPE_CHECKING:`` never run
and are left out.

``python bench/import_graph.py`` prints the figures; ``tests/core/test_core_imports.py`` fails
when a module-level cycle appears.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

LONG_MODULE_LINES = 600


@dataclass(frozen=True)
class ModuleInfo:
    """One module: its dotted name, file, line count and the package modules it imports."""

    name: str
    path: Path
    lines: int
    module_imports: frozenset[str]
    function_imports: frozenset[str]
    function_import_statements: int


@dataclass(frozen=True)
class ImportGraph:
    """Every module of one package and the figures read from them."""

    package: str
    modules: dict[str, ModuleInfo] = field(default_factory=dict)

    @property
    def line_count(self) -> int:
        return sum(m.lines for m in self.modules.values())

    def long_modules(self, limit: int = LONG_MODULE_LINES) -> list[tuple[str, int]]:
        """Modules over ``limit`` lines, longest first."""
        rows = [(m.name, m.lines) for m in self.modules.values() if m.lines > limit]
        return sorted(rows, key=lambda r: (-r[1], r[0]))

    def edges(self, *, function_level: bool = False) -> dict[str, set[str]]:
        """Module-level edges, plus function-level ones when asked."""
        out: dict[str, set[str]] = {}
        for m in self.modules.values():
            targets = set(m.module_imports)
            if function_level:
                targets |= m.function_imports
            out[m.name] = targets
        return out

    def cycles(self, *, function_level: bool = False) -> list[list[str]]:
        """Strongly connected components with more than one module (or a module importing itself)."""
        graph = self.edges(function_level=function_level)
        comps = strongly_connected(graph)
        found = [c for c in comps if len(c) > 1 or c[0] in graph.get(c[0], set())]
        return sorted((sorted(c) for c in found), key=lambda c: (-len(c), c))

    def function_import_count(self) -> int:
        return sum(m.function_import_statements for m in self.modules.values())

    def figures(self) -> dict[str, object]:
        """The numbers ``bench/import_graph.py --json`` writes."""
        cycles = self.cycles()
        return {
            "package": self.package,
            "modules": len(self.modules),
            "lines": self.line_count,
            "module_level_cycles": len(cycles),
            "cycles": cycles,
            "modules_in_cycles": sum(len(c) for c in cycles),
            "function_level_imports": self.function_import_count(),
            "cycles_counting_function_level": len(self.cycles(function_level=True)),
            "modules_over_600_lines": [{"module": n, "lines": k} for n, k in self.long_modules()],
        }


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components: modules that reach one another (a module that
    reaches no other is its own). Quadratic, which a package's few hundred modules allow."""
    reach: dict[str, set[str]] = {}
    for root in graph:
        seen: set[str] = set()
        todo = [t for t in graph[root] if t in graph]
        while todo:
            node = todo.pop()
            if node not in seen:
                seen.add(node)
                todo.extend(t for t in graph[node] if t in graph and t not in seen)
        reach[root] = seen
    comps: dict[frozenset[str], list[str]] = {}
    for node in sorted(graph):
        comp = frozenset({node} | {m for m in reach[node] if node in reach[m]})
        comps.setdefault(comp, []).append(node)
    return list(comps.values())


def module_name(root: Path, path: Path, package: str) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = [package, *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _import_nodes(tree: ast.Module) -> tuple[list[ast.stmt], list[ast.stmt]]:
    """(module-level, function-level) import statements, skipping ``if TYPE_CHECKING:`` blocks."""
    module_level: list[ast.stmt] = []
    function_level: list[ast.stmt] = []
    todo: list[tuple[ast.AST, bool]] = [(tree, False)]
    while todo:
        node, in_function = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (function_level if in_function else module_level).append(child)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                todo.extend((c, in_function) for c in child.orelse)
            else:
                inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                todo.append((child, inner))
    return module_level, function_level


def _targets(stmt: ast.stmt, current: str, is_package: bool, known: set[str], package: str) -> set[str]:
    """Package modules one import statement loads (the deepest known module of each name)."""
    names: list[str] = []
    if isinstance(stmt, ast.Import):
        names = [a.name for a in stmt.names]
    elif isinstance(stmt, ast.ImportFrom):
        if stmt.level:
            base = current.split(".") if is_package else current.split(".")[:-1]
            base = base[: len(base) - (stmt.level - 1)] if stmt.level > 1 else base
            prefix = ".".join(base)
            mod = f"{prefix}.{stmt.module}" if stmt.module else prefix
        else:
            mod = stmt.module or ""
        names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in stmt.names]
    out: set[str] = set()
    for name in names:
        if name != package and not name.startswith(package + "."):
            continue
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name not in _ancestors(current):  # a package is loaded before its modules
            out.add(name)
            out |= _outer_packages(name, current, package)
    return out


def _outer_packages(target: str, current: str, package: str) -> set[str]:
    """Packages whose ``__init__`` loading ``target`` runs first, less those ``current`` is inside."""
    mine = set(_ancestors(current))
    return {p for p in _ancestors(target) if p not in mine and p != package}


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def build_graph(root: Path, package: str | None = None) -> ImportGraph:
    """Read every ``*.py`` file under ``root`` (the package folder) into an :class:`ImportGraph`."""
    package = package or root.name
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    names = {module_name(root, p, package): p for p in files}
    known = set(names)
    graph = ImportGraph(package=package)
    for name, path in names.items():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
        is_pkg = path.name == "__init__.py"
        mod_level, fn_level = _import_nodes(tree)
        mod_targets = set().union(*(_targets(s, name, is_pkg, known, package) for s in mod_level))
        fn_targets = set().union(*(_targets(s, name, is_pkg, known, package) for s in fn_level))
        mod_targets.discard(name)
        fn_targets.discard(name)
        graph.modules[name] = ModuleInfo(
            name=name,
            path=path,
            lines=len(text.splitlines()),
            module_imports=frozenset(mod_targets),
            function_imports=frozenset(fn_targets),
            function_import_statements=len(fn_level),
        )
    return graph
