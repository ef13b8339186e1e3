"""WiderPoker's section of the lobby page (``Game.lobby``): its tables' lines, cheapest
ante first, the same lines ``GET /api/tables/`` and the ``lobby_table`` frames carry
(``tables.selectors.list_lobby_tables``, which lists every public table of the house)."""

from __future__ import annotations

from typing import Any, Final

from tables.gamespec import GameLobby
from tables.models import TableGame
from tables.selectors import list_lobby_tables


def lobby_rows() -> list[dict[str, Any]]:
    """WiderPoker's tables' lobby lines (practice games and tournaments' tables are not
    listed), cheapest ante first."""
    return [row for row in list_lobby_tables() if row["game"] == TableGame.WIDERPOKER]


LOBBY: Final = GameLobby(rows=lobby_rows, template="lobby/_widerpoker_tables.html", json_key="tables")
"""WiderPoker's lobby section; its rows under ``tables`` in lobby/tables.json."""
