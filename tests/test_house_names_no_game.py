"""The house never names a game (issue 21): no ``TableGame.<member>`` and no ``"holdem"`` /
``"widerpoker"`` literal outside the registry (``tables/games.py``), the models, the game
packages (``tables/widerpoker/``, ``tables/holdem/``), the engine and the tournaments
(tests/importgraph.py ``GAME_ROOMS``). ``bin/game_branches`` prints the places.

And the "Apps in layers" import-linter contract (pyproject.toml) places every sub-package and
module of ``tables`` but the engine in its tables layer, so none escapes the layers."""

from __future__ import annotations

import tomllib

from tests.importgraph import ENGINE, ROOT, game_branches


def test_no_game_branch_in_the_house() -> None:
    found = [f"{path}:{line} {what}" for path, line, what in game_branches()]
    assert found == [], f"{len(found)} game branches outside the game rooms: {found}"


def test_the_apps_layers_place_every_part_of_tables() -> None:
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = settings["tool"]["importlinter"]["contracts"]
    layers = next((c["layers"] for c in contracts if c["name"].startswith("Apps in layers")), None)
    assert layers is not None, "the 'Apps in layers' contract is not enabled in pyproject.toml"
    named = {part.strip().strip("()") for layer in layers for group in layer.split("|") for part in group.split(":")}
    parts = {
        f"tables.{path.stem if path.suffix == '.py' else path.name}"
        for path in (ROOT / "tables").iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").exists()
    }
    parts -= {ENGINE, "tables.migrations"}
    assert parts - named == set(), f"parts of tables in no layer of 'Apps in layers': {sorted(parts - named)}"
