"""Which way the daemon's parts depend on each other, read from the source (every import
statement, those inside functions included, since a deferred import is still a cycle).

The web package serves the API and knows nothing of the console, which builds on it;
the daemon's subpackages import each other in one direction only; and no two repository
modules import each other, so each area's SQL can be read, and loaded, on its own."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DAEMON = ROOT / "daemon"


def _name(path: Path) -> str:
    parts = ("fairgrid",) + path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The fairgrid modules and packages ``path`` imports, as absolute dotted names (a
    ``from X import y`` counts as X.y when that is a module, else X)."""
    package = _name(path) if path.name == "__init__.py" else _name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{a.name}" for a in node.names)
    return {n for n in found if n == "fairgrid" or n.startswith("fairgrid.")}


MODULES = {_name(p): p for p in DAEMON.rglob("*.py") if "__pycache__" not in p.parts}
GRAPH = {name: {n for n in _imports(path) if n in MODULES and n != name}
         for name, path in MODULES.items()}


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph, or None."""
    state: dict[str, int] = {}

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt, path + [nxt])):
                return found
        state[node] = 2
        return None

    for start in sorted(edges):
        if start not in state and (found := visit(start, [start])):
            return found
    return None


def test_the_web_package_imports_nothing_of_the_console():
    web = [n for n in MODULES if n.startswith("fairgrid.daemon.web")]
    assert len(web) > 10
    wrong = {n: sorted(i for i in _imports(MODULES[n]) if i.startswith("fairgrid.daemon.console"))
             for n in web}
    assert not {n: i for n, i in wrong.items() if i}
    console = [n for n in MODULES if n.startswith("fairgrid.daemon.console")]
    assert any(i.startswith("fairgrid.daemon.web") for n in console for i in GRAPH[n])


def test_the_daemons_subpackages_depend_one_way():
    def part(name):  # fairgrid.daemon.store.repository.x -> store; top-level modules: none
        rest = name.split(".")[2:]
        return rest[0] if rest and (DAEMON / rest[0]).is_dir() else None
    edges: dict[str, set[str]] = {}
    for a, targets in GRAPH.items():
        for b in targets:
            if part(a) and part(b) and part(a) != part(b):
                edges.setdefault(part(a), set()).add(part(b))
    assert "web" in edges["console"]
    assert _cycle(edges) is None, _cycle(edges)


def test_no_two_repository_modules_import_each_other():
    package = "fairgrid.daemon.store.repository"
    # the package's __init__ only defines a decorator its modules share and names them
    inside = {n: {t for t in GRAPH[n] if t.startswith(package + ".")}
              for n in MODULES if n.startswith(package + ".")}
    assert "fairgrid.daemon.store.repository.outbox" in inside[f"{package}.organiser"]
    assert _cycle(inside) is None, _cycle(inside)


def test_a_cycle_is_found():  # the check above would pass vacuously without this
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}}) is None


def test_no_two_modules_of_the_daemon_import_each_other():
    # a package's __init__ names its modules; a module importing its package is no cycle
    modules = {n: {t for t in GRAPH[n] if not MODULES[t].name == "__init__.py"}
               for n in MODULES if MODULES[n].name != "__init__.py"}
    assert _cycle(modules) is None, _cycle(modules)
