"""Who deals a WiderPoker table between its hands, when it is not its seats: the hooks the
clock's step (``lifecycle.advance_widerpoker_table``) asks first. A tournament's table deals
its entrants (docs/tournaments.md): ``tables.apps.TablesConfig.ready`` registers
``tables.tournaments.services.tournament_step`` here, so the cash lifecycle does not import
the tournaments (issue 21: no import cycles)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tables.models import Table

Dealer = Callable[..., bool]
"""``dealer(table, *, now=datetime) -> bool``: called inside the clock's transaction with the
table's row locked; True when it took the table's step (dealt, waited or closed it), False
when the table is not its own (the next hook, then the seats' deal, go on)."""

_DEALERS: dict[str, Dealer] = {}


def register(name: str, dealer: Dealer) -> None:
    """Register ``dealer`` under ``name`` (registering the same name again replaces it: an
    app's ``ready`` may run more than once). Dealers are asked in registration order."""
    _DEALERS[name] = dealer


def deal_between_hands(table: Table, *, now: datetime) -> bool:
    """Ask each registered dealer, in order, to take ``table``'s step at ``now``; True as soon
    as one did, False when none did (the table deals its seats). Errors of a dealer propagate
    (the clock's transaction rolls back)."""
    return any(dealer(table, now=now) for dealer in _DEALERS.values())
