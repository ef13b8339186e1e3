"""The probability panels of the private ``entry_state`` frames, kept per (hand, combination)
and process as ``Panel.as_dict()`` and as its JSON text, and the splice that puts the text
into a serialised frame (issue 23: encoding the panel again for every frame was an eighth
of a daphne's busy time at 10,000 sockets; docs/benchmarks.md, "s6-private")."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from tables.engine.widerpoker import board_grid
from tables.models import Hand
from tables.realtime.frames import EntryStateFrame, dumps
from tables.widerpoker.panel_tables import hand_panel
from tables.widerpoker.records import board_from_json

_PANEL_MARK = "\x00panel"  # a string no frame holds: dumps writes it "\u0000panel"
_PANEL_SLOT = dumps(_PANEL_MARK)


def render_spliced(state: EntryStateFrame) -> str:
    """``frames.dumps(state)``, the same text, of a frame built with ``spliced=True``
    (``selectors._entry_states``): its ``entry["panel"]``, if any, is a ``CachedPanel``
    whose text replaces the mark (``dumps`` writes a nested dict as ``dumps`` of it).
    ``state`` is changed (built for this call alone)."""
    entry = state["entry"]
    cached = entry.get("panel") if entry is not None else None
    if not isinstance(cached, CachedPanel):
        return dumps(state)
    assert entry is not None
    entry["panel"] = _PANEL_MARK
    return dumps(state).replace(_PANEL_SLOT, cached.text, 1)


class CachedPanel:
    """A probability panel as a private frame carries it: ``text``, ``frames.dumps`` of
    ``Panel.as_dict()`` (about 1.8 KiB, most of the frame), encoded once per (hand,
    combination) and process and spliced into every later frame (``render_entry_states``);
    ``data``, that dict (not to be mutated), kept only once a dict frame asked for it (REST
    answers, the page): about 9.8 KiB more, a socket's frames never need it."""

    __slots__ = ("_data", "_untipped", "text")

    def __init__(self, text: str, data: dict[str, Any] | None = None) -> None:
        self.text = text
        self._data = data
        self._untipped: CachedPanel | None = None

    @property
    def data(self) -> dict[str, Any]:
        """The panel as a dict (``json.loads`` of ``text`` the first time, then kept)."""
        if self._data is None:
            self._data = json.loads(self.text)
        return self._data

    def untipped(self) -> CachedPanel:
        """The same panel with ``tip1`` and ``tip2`` None (a special hand without tips: the
        server never sends them, seed 001, D), made once."""
        if self._untipped is None:
            data = {**self.data, "tip1": None, "tip2": None}
            self._untipped = CachedPanel(dumps(data), data)
        return self._untipped


PANELS: OrderedDict[tuple[int, tuple[int, ...]], CachedPanel] = OrderedDict()
PANELS_LOCK = threading.Lock()
PANEL_CACHE_SIZE = 20_000
"""Probability panels kept per process (~0.1-2 ms each to compute over the board's 100,000
cells, ~0.1 ms to encode; 1.8 KiB each kept, 11.6 KiB with its dict): one per player of a running
hand, computed at his first private frame and reused for every later one (his holds,
purchases, REST answers, reconnections)."""


def panel_of(hand: Hand, combination: tuple[int, ...], *, keep_data: bool = False) -> CachedPanel:
    """The probability panel (``odds.panel(...).as_dict()``'s text, and the dict with
    ``keep_data`` when computed now) of ``combination`` on the board of ``hand``: a function
    of the two alone (a hand's board never changes), cached per (hand, combination), least
    recently used dropped first. The board is parsed only to compute a panel not cached."""
    key = (hand.pk, combination)
    with PANELS_LOCK:
        found = PANELS.get(key)
        if found is not None:
            PANELS.move_to_end(key)
            return found
    data = hand_panel(hand.pk, lambda: board_grid(board_from_json(hand.board)), combination).as_dict()
    computed = CachedPanel(dumps(data), data if keep_data else None)
    with PANELS_LOCK:
        PANELS[key] = computed
        while len(PANELS) > PANEL_CACHE_SIZE:
            PANELS.popitem(last=False)
    return computed
