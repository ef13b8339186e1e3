"""The room checkers (tests/importgraph.py) on small made-up projects: they find a cycle
closed by a function-local import or by ``from pkg import submodule``, leave out
``if TYPE_CHECKING:`` imports (but a lazy facade's), count lines and find game names where the
house may not name a game. The project's own rooms are asserted by tests/test_import_cycles.py,
tests/test_module_length.py and tests/test_house_names_no_game.py."""

from __future__ import annotations

from pathlib import Path

from tests.importgraph import (
    game_branches,
    graph,
    long_modules,
    module_edges,
    project_files,
    strongly_connected,
)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def components(root: Path, apps: tuple[str, ...], level: str = "module") -> list[list[str]]:
    modules = project_files(root, apps)
    return strongly_connected(graph(module_edges(modules, root), level=level))


def test_a_function_local_import_closes_a_cycle(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tables/__init__.py": "",
            "tables/a.py": "from tables.b import thing\n",
            "tables/b.py": "def thing():\n    from tables import a\n    return a\n",
            "tables/migrations/0001_x.py": "from tables import a\n",
        },
    )
    assert components(tmp_path, ("tables",)) == [["tables.a", "tables.b"]]
    edges = module_edges(project_files(tmp_path, ("tables",)), tmp_path)
    assert [(e.source, e.target, e.local) for e in edges] == [
        ("tables.a", "tables.b", False),
        ("tables.b", "tables.a", True),
    ]


def test_relative_and_submodule_imports_resolve_and_type_checking_is_left_out(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tables/__init__.py": "",
            "tables/services/__init__.py": "",
            "tables/services/x.py": "from . import y\n",
            "tables/services/y.py": (
                "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tables.services import x\n"
            ),
        },
    )
    assert components(tmp_path, ("tables",)) == []
    write(tmp_path, {"tables/services/y.py": "from ..services import x\n"})
    assert components(tmp_path, ("tables",)) == [["tables.services.x", "tables.services.y"]]


def test_a_lazy_facade_counts_its_type_checking_imports(tmp_path: Path) -> None:
    facade = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tables.services.x import f\n"
        "def __getattr__(name):\n    import importlib\n    return importlib.import_module('tables.services.x')\n"
    )
    write(
        tmp_path,
        {
            "tables/__init__.py": "",
            "tables/services/__init__.py": facade,
            "tables/services/x.py": "from tables import selectors\n",
            "tables/selectors.py": "from tables import services\n",
        },
    )
    assert components(tmp_path, ("tables",)) == [["tables.selectors", "tables.services", "tables.services.x"]]


def test_app_level_cycles(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "wallet/__init__.py": "",
            "wallet/admin.py": "def view():\n    from lobby.services import end\n",
            "lobby/__init__.py": "",
            "lobby/services.py": "from wallet import admin\n",
            "jackpots/__init__.py": "from wallet import admin\n",
        },
    )
    apps = ("wallet", "lobby", "jackpots")
    assert components(tmp_path, apps) == [["lobby.services", "wallet.admin"]]
    assert components(tmp_path, apps, level="app") == [["lobby", "wallet"]]


def test_config_infra_is_its_own_node_at_app_level(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "config/__init__.py": "",
            "config/urls.py": "from tables import views\n",
            "config/infra/__init__.py": "",
            "config/infra/metrics.py": "import logging\n",
            "tables/__init__.py": "",
            "tables/views.py": "from config.infra import metrics\n",
        },
    )
    assert components(tmp_path, ("config", "tables"), level="app") == []
    write(tmp_path, {"config/infra/metrics.py": "from tables import views\n"})
    assert components(tmp_path, ("config", "tables"), level="app") == [["config.infra", "tables"]]


def test_long_modules_and_the_one_exception(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "wallet/services.py": "x = 1\n" * 900,
            "tables/long.py": "x = 1\n" * 501,
            "tables/short.py": "x = 1\n" * 500,
        },
    )
    assert long_modules(tmp_path) == [("tables/long.py", 501)]


def test_game_names_outside_the_game_rooms(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "tables/views.py": "if table.game == TableGame.HOLDEM or kind == 'widerpoker':\n    pass\n",
            "tables/holdem/page.py": "GAME = 'holdem'\n",
            "tables/games.py": "KEY = TableGame.WIDERPOKER\n",
            "lobby/views.py": "x = models.TableGame.HOLDEM\ndoc = 'a holdem table'\n",
            "config/celery.py": "app = Celery('widerpoker')\n",
        },
    )
    assert game_branches(tmp_path) == [
        ("lobby/views.py", 1, "TableGame.HOLDEM"),
        ("tables/views.py", 1, "'widerpoker'"),
        ("tables/views.py", 1, "TableGame.HOLDEM"),
    ]
