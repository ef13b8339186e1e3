"""The engine is a pure library: standard library and numpy only (STYLE, Principles 1)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "tables" / "engine"
MODULES = sorted(ENGINE.rglob("*.py"))
APPS = {"lobby", "tables", "wallet", "jackpots", "handhistory", "backoffice", "config"}
FRAMEWORKS = {"django", "rest_framework", "channels", "channels_redis", "celery", "daphne"}
# No clock, no I/O, no global random state (STYLE, Engine).
IMPURE = {"random", "time", "datetime", "os", "io", "pathlib", "socket", "secrets", "logging"}


def imported_modules(path: Path) -> list[str]:
    """Absolute module names imported by a file (relative imports stay inside the engine)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
    return names


def test_the_engine_has_modules_to_check() -> None:
    assert len(MODULES) >= 10


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_modules_import_nothing_from_django_or_the_apps(path: Path) -> None:
    for name in imported_modules(path):
        top = name.split(".")[0]
        assert top not in FRAMEWORKS, f"{path.name} imports {name}"
        if top in APPS:
            assert name == "tables.engine" or name.startswith("tables.engine."), (
                f"{path.name} imports the app module {name}"
            )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_modules_import_only_the_standard_library_and_numpy(path: Path) -> None:
    for name in imported_modules(path):
        top = name.split(".")[0]
        if top == "tables":
            continue  # checked above: only tables.engine
        assert top in sys.stdlib_module_names or top == "numpy", f"{path.name} imports {name}"
        assert top not in IMPURE, f"{path.name} imports {name}: no clock, I/O or global RNG"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_modules_never_touch_numpy_global_random_state(path: Path) -> None:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "random":
            assert not (isinstance(node.value, ast.Name) and node.value.id in {"np", "numpy"}), (
                f"{path.name} uses numpy.random"
            )


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_engine_modules_postpone_annotations(path: Path) -> None:
    tree = ast.parse(path.read_text())
    futures = [
        alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module == "__future__"
        for alias in node.names
    ]
    assert "annotations" in futures, f"{path.name} lacks 'from __future__ import annotations'"


def test_the_engine_ships_a_py_typed_marker() -> None:
    assert (ENGINE / "py.typed").is_file()


def test_the_boundary_check_catches_a_django_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from django.db import models\nimport tables.models\nfrom . import cards\n")
    assert imported_modules(bad) == ["django.db", "tables.models"]
