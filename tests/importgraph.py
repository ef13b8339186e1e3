"""The project's rooms, read from its source (no import runs): the import graph and its
cycles, the modules over the length limit, and the places where the house names a game.

Used by ``tests/test_import_cycles.py``, ``tests/test_module_length.py``,
``tests/test_house_names_no_game.py`` and by ``bin/import_cycles``, ``bin/long_modules`` and
``bin/game_branches``, which print what they find (issue 21, "the rooms enforced").

Every import counts, the function-local ones included; imports under ``if TYPE_CHECKING:``
never run and are left out, but for a lazy facade's (a package ``__getattr__`` that imports
them on first use, ``tables/services/__init__.py``), which count as local imports.
``from pkg import name`` is an edge to the module ``pkg.name`` when there is one, else to
``pkg``. Importing ``a.b.c`` is an edge to ``a.b.c`` only (not to the packages ``a`` and
``a.b`` that Python also initialises), as import-linter counts it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("tables", "wallet", "jackpots", "handhistory", "lobby", "backoffice", "config")
"""The project's top-level packages (``[tool.importlinter] root_packages``)."""
SKIPPED_DIRS = frozenset({"migrations", "tests", "__pycache__"})

MAX_LINES = 500
LONG_MODULE_EXCEPTIONS = frozenset({"wallet/services.py"})
"""Modules allowed over ``MAX_LINES`` (issue 21: "no module over 500 lines but the wallet's services")."""


@dataclass(frozen=True, slots=True)
class Edge:
    """One import: ``source`` imports ``target`` (dotted module names) at ``path:line``;
    ``local`` when the import is inside a function or method body."""

    source: str
    target: str
    path: str
    line: int
    local: bool


def project_files(root: Path = ROOT, apps: Iterable[str] = APPS) -> dict[str, Path]:
    """``{dotted module name: path}`` of every project ``.py`` file under ``apps``, without
    migrations and tests; a package is named by its ``__init__.py``."""
    modules: dict[str, Path] = {}
    for app in apps:
        for path in sorted((root / app).rglob("*.py")):
            relative = path.relative_to(root)
            if SKIPPED_DIRS.intersection(relative.parts[:-1]):
                continue
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def is_lazy_facade(tree: ast.Module) -> bool:
    """Whether the module defines a module-level ``__getattr__`` (PEP 562): a lazy facade
    that resolves, at run time, the names its ``if TYPE_CHECKING:`` block imports."""
    return any(isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in tree.body)


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement of ``tree`` outside ``if TYPE_CHECKING:`` bodies, with whether
    it is inside a function. A lazy facade's (``is_lazy_facade``) ``TYPE_CHECKING`` imports
    count, as function-local ones: its ``__getattr__`` makes them at run time."""
    facade = is_lazy_facade(tree)
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, local = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, local
            continue
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            children: list[ast.AST] = list(node.orelse)
            if facade:
                stack.extend((child, True) for child in reversed(node.body))
        else:
            children = list(ast.iter_child_nodes(node))
        inside = local or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        stack.extend((child, inside) for child in reversed(children))


def _resolve(name: str, modules: Mapping[str, Path]) -> str | None:
    """The longest prefix of ``name`` that is a project module, or ``None``."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def module_edges(modules: Mapping[str, Path], root: Path = ROOT) -> list[Edge]:
    """Every import between project modules (self-imports dropped), once per statement, in file order."""
    edges: list[Edge] = []
    seen: set[Edge] = set()
    for source, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        relative = str(path.relative_to(root))
        for node, local in _imports(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    package = source.split(".") if is_package else source.split(".")[:-1]
                    package = package[: len(package) - (node.level - 1)]
                    base = ".".join([*package, base] if base else package)
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            for target in targets:
                resolved = _resolve(target, modules)
                edge = Edge(source, resolved or "", relative, node.lineno, local)
                if resolved is not None and resolved != source and edge not in seen:
                    seen.add(edge)
                    edges.append(edge)
    return edges


CONFIG_INFRA = "config.infra"
"""The infrastructure half of ``config`` (metrics, logging, partitions, ...: modules every app
may import, importing no app); the rest of ``config`` wires the apps together (settings, urls,
asgi, wsgi, celery) and nobody imports it."""
ENGINE = "tables.engine"
"""The game engine: a pure library (stdlib and numpy) that stays inside ``tables`` (issue 21)
and that ``jackpots`` may use."""
OWN_NODES = (CONFIG_INFRA, ENGINE)
"""Sub-packages that are nodes of their own in the app-level graph."""
APP_ORDER = ("config", "backoffice", "lobby", "handhistory", "tables", "jackpots", "wallet", ENGINE, CONFIG_INFRA)
"""The intended layers, top first (the "Apps in layers" contract): a node imports only nodes after it."""


def app_of(module: str) -> str:
    """The node of a dotted module name in the app-level graph: its top-level package (the
    Django app, or ``config``), but one of ``OWN_NODES`` for the modules under it."""
    for node in OWN_NODES:
        if module == node or module.startswith(node + "."):
            return node
    return module.split(".", 1)[0]


def upward_imports(edges: Iterable[Edge]) -> list[Edge]:
    """The imports against ``APP_ORDER`` (a node importing one above it): what keeps the
    app-level cycles."""
    rank = {node: position for position, node in enumerate(APP_ORDER)}
    found = []
    for edge in edges:
        source, target = rank.get(app_of(edge.source)), rank.get(app_of(edge.target))
        if source is not None and target is not None and target < source:
            found.append(edge)
    return found


def graph(edges: Iterable[Edge], *, level: str = "module") -> dict[str, set[str]]:
    """The adjacency of ``edges`` at ``level`` ``"module"`` or ``"app"`` (imports inside
    one app are dropped at app level)."""
    adjacency: dict[str, set[str]] = {}
    for edge in edges:
        source, target = edge.source, edge.target
        if level == "app":
            source, target = app_of(source), app_of(target)
            if source == target:
                continue
        adjacency.setdefault(source, set()).add(target)
        adjacency.setdefault(target, set())
    return adjacency


def strongly_connected(adjacency: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (the import cycles), each
    sorted, the list sorted by size then name. Tarjan's algorithm, iterative (no recursion
    limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(adjacency):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(adjacency[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(adjacency.get(successor, ())))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found, key=lambda component: (-len(component), component))


def cycles(root: Path = ROOT) -> tuple[list[list[str]], list[list[str]], list[Edge]]:
    """(module-level cycles, app-level cycles, every edge) of the project at ``root``."""
    edges = module_edges(project_files(root), root)
    return strongly_connected(graph(edges)), strongly_connected(graph(edges, level="app")), edges


def describe_cycles(root: Path = ROOT) -> str:
    """A report of the import cycles: each strongly connected component with the imports
    inside it (``path:line``, ``local`` for a function-local import)."""
    module_level, app_level, edges = cycles(root)
    lines = [
        f"# Import cycles (tests/importgraph.py; bin/import_cycles): {len(module_level)} at module level, "
        f"{len(app_level)} at app level",
        "",
    ]
    lines.append("## App level")
    for component in app_level:
        members = set(component)
        lines.append(f"- {' <-> '.join(component)}")
        crossing: dict[tuple[str, str], list[Edge]] = {}
        for edge in edges:
            pair = (app_of(edge.source), app_of(edge.target))
            if pair[0] != pair[1] and pair[0] in members and pair[1] in members:
                crossing.setdefault(pair, []).append(edge)
        for (source, target), found in sorted(crossing.items()):
            where = ", ".join(f"{e.path}:{e.line}{' (local)' if e.local else ''}" for e in found[:6])
            more = f" and {len(found) - 6} more" if len(found) > 6 else ""
            lines.append(f"    {source} -> {target}: {len(found)} imports: {where}{more}")
    lines += ["", f"## Imports against the intended app order ({' > '.join(APP_ORDER)})"]
    for edge in upward_imports(edges):
        local = " (local)" if edge.local else ""
        lines.append(f"    {edge.source} -> {edge.target}  {edge.path}:{edge.line}{local}")
    lines += ["", "## Module level"]
    for component in module_level:
        members = set(component)
        lines.append(f"- {len(component)} modules: {', '.join(component)}")
        for edge in edges:
            if edge.source in members and edge.target in members:
                local = " (local)" if edge.local else ""
                lines.append(f"    {edge.source} -> {edge.target}  {edge.path}:{edge.line}{local}")
    return "\n".join(lines) + "\n"


def long_modules(root: Path = ROOT, limit: int = MAX_LINES) -> list[tuple[str, int]]:
    """``(path, lines)`` of every project module over ``limit`` lines but the allowed
    ``LONG_MODULE_EXCEPTIONS``, longest first."""
    found = []
    for path in project_files(root).values():
        relative = str(path.relative_to(root))
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit and relative not in LONG_MODULE_EXCEPTIONS:
            found.append((relative, count))
    return sorted(found, key=lambda item: (-item[1], item[0]))


GAME_KEYS = frozenset({"holdem", "widerpoker"})
"""The games' keys (``tables.models.TableGame`` values): as a literal they are a game branch."""
GAME_ROOMS = (
    "tables/games.py",
    "tables/models.py",
    "tables/models/",
    "tables/widerpoker/",
    "tables/holdem/",
    "tables/engine/",
    "tables/tournaments/",
)
"""Where a module may name a game (issue 21): the registry, the models, the game packages, the
engine, and the tournaments (WiderPoker tournaments, a game feature). Migrations and tests are
not project modules here (``project_files``)."""

PRODUCT_NAME_MODULES = frozenset({"config/celery.py", "config/settings.py"})
"""Modules where ``"widerpoker"`` is the product's name (the Celery app, the default database
and cache names), not a game key: their literals are not game branches (``TableGame.`` still is)."""


def _names_a_game(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        value = node.value
        owner = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else ""
        if owner == "TableGame":
            return f"TableGame.{node.attr}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in GAME_KEYS:
        return repr(node.value)
    return None


def game_branches(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """``(path, line, what)`` of every ``TableGame.<member>`` access and every ``"holdem"`` /
    ``"widerpoker"`` string literal in a project module outside ``GAME_ROOMS``, in path and
    line order. A docstring that is exactly a game key would count too (none is)."""
    found: list[tuple[str, int, str]] = []
    for path in project_files(root).values():
        relative = str(path.relative_to(root))
        if any(relative == room or (room.endswith("/") and relative.startswith(room)) for room in GAME_ROOMS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            what = _names_a_game(node)
            if what is not None and not (relative in PRODUCT_NAME_MODULES and what.startswith("'")):
                found.append((relative, getattr(node, "lineno", 0), what))
    return sorted(found)
