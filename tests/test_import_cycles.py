"""No import cycle in the project (issue 21, "the rooms enforced"): at module level and at
app level (``config.infra`` and ``tables.engine`` nodes of their own), function-local imports
included, ``if TYPE_CHECKING:`` left out (tests/importgraph.py). ``bin/import_cycles`` prints
what remains, with the imports that close each cycle."""

from __future__ import annotations

from tests.importgraph import cycles, upward_imports


def test_no_import_cycle_between_modules() -> None:
    module_level, _, _ = cycles()
    assert module_level == [], f"import cycles (bin/import_cycles shows the imports): {module_level}"


def test_no_import_cycle_between_apps() -> None:
    _, app_level, edges = cycles()
    against = [f"{e.path}:{e.line} {e.source} -> {e.target}" for e in upward_imports(edges)]
    assert app_level == [], f"app-level cycles {app_level}; imports against the app order: {against}"
