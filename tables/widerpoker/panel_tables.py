"""Per-process probability panel tables of the running hands (issue 23; docs/platform.md,
"REST purchases through the lean door").

A process computes a player's panel at his first private frame (``panel_cache.panel_of``
caches it). When it has computed ``PANEL_TABLE_AFTER`` panels of one hand (a big hand's
buyers over REST, who never opened the game screen; reconnections after a restart), it
builds that hand's ``PanelTable`` (tables/engine/widerpoker/panel_table.py: about 0.15 s of
CPU in a thread of its own, about 19 MiB) and answers every later panel of the hand from it
(about 0.07 ms instead of 0.6 ms), the same panel to the last field. The tables of the
``PANEL_TABLES`` hands used last are kept.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Final

from tables.engine.widerpoker.grid import BoardGrid
from tables.engine.widerpoker.odds import Panel, panel
from tables.engine.widerpoker.panel_table import PanelTable

logger = logging.getLogger(__name__)

PANEL_TABLE_AFTER: Final = 64
"""Panels of one hand computed in this process before the hand's table is built."""
PANEL_TABLES: Final = 2
"""Hands whose table a process keeps (the last used)."""

_LOCK = threading.Lock()
_TABLES: OrderedDict[int, PanelTable | None] = OrderedDict()  # hand id -> table (None: being built)
_COMPUTED: dict[int, int] = {}  # hand id -> panels computed without a table
tuning = {"after": PANEL_TABLE_AFTER}
"""The threshold in force (tests lower it)."""


def hand_panel(hand_id: int, grid_of: Callable[[], BoardGrid], combination: Sequence[int]) -> Panel:
    """``odds.panel(grid_of(), combination)`` of hand ``hand_id`` (its board never changes):
    from the hand's table when this process has built it, else computed (``grid_of`` called
    only then), the table's build started in a thread once ``tuning["after"]`` panels of
    the hand were computed. Raises ``ValueError`` for an invalid combination."""
    build = False
    with _LOCK:
        table = _TABLES.get(hand_id)
        if table is not None:
            _TABLES.move_to_end(hand_id)
        elif hand_id not in _TABLES:
            computed = _COMPUTED[hand_id] = _COMPUTED.get(hand_id, 0) + 1
            if computed >= tuning["after"]:
                _TABLES[hand_id] = None
                _COMPUTED.pop(hand_id, None)
                build = True
            if len(_COMPUTED) > 1000:  # hands long gone
                _COMPUTED.clear()
    if table is not None:
        return table.panel(combination)
    grid = grid_of()
    if build:
        threading.Thread(target=_build, args=(hand_id, grid), name=f"panel-table-{hand_id}", daemon=True).start()
    return panel(grid, combination)


def _build(hand_id: int, grid: BoardGrid) -> None:
    try:
        table = PanelTable(grid)
    except Exception:  # never expected; panels keep being computed one by one
        logger.exception("the panel table of hand %s could not be built", hand_id)
        with _LOCK:
            _TABLES.pop(hand_id, None)
        return
    with _LOCK:
        _TABLES[hand_id] = table
        _TABLES.move_to_end(hand_id)
        while len(_TABLES) > PANEL_TABLES:
            _TABLES.popitem(last=False)


def forget() -> None:
    """Drop every table and count (tests)."""
    with _LOCK:
        _TABLES.clear()
        _COMPUTED.clear()
