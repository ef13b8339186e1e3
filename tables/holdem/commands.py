"""Texas Hold'em's player actions (docs/protocol.md, "Texas Hold'em"): the fields each
takes, how they are parsed and the service that runs it (tables/holdem/services/player.py).
The transports find them through the game registry (``tables.games``) and run them through
the house's one way in (tables/commands.py); the wire does not change.

``join`` (``seat``, ``buy_in_minor`` required, ``blind``), ``add_chips`` (``amount_minor``
required), ``leave``, ``sit_out``, ``sit_in``, the betting actions ``fold``, ``check``,
``call``, ``all_in``, ``bet`` and ``raise`` (``amount``: the total to, in minor units;
absent = the minimum) and at the showdown ``show`` and ``muck``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Final

from tables.commands import Command, InvalidFieldError
from tables.holdem.services import player


def parse_chips(value: object) -> int:
    """An amount of chips in minor units: a positive JSON integer below 10^15 (not a
    boolean, not a string: ``"300"`` is refused over JSON and the socket; an HTML form's
    digits arrive as an integer through ``form_value``). Raises InvalidFieldError.

    >>> parse_chips(300)
    300
    """
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 10**15:
        raise InvalidFieldError("an amount is a positive whole number of minor units", amount=repr(value)[:30])
    return value


def parse_seat(value: object) -> int:
    """A Hold'em seat number 0..9, a JSON integer (a form's digits arrive as one through
    ``form_value``; the table's own range is the service's check). Raises
    InvalidFieldError."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 9:
        raise InvalidFieldError("a seat is a number 0 to 9", field="seat")
    return value


def parse_blind(value: object) -> str:
    """How a new Hold'em player enters: ``"wait"`` for the big blind or ``"post"`` one now.
    Raises InvalidFieldError."""
    if value not in ("wait", "post"):
        raise InvalidFieldError('blind is "wait" or "post"', field="blind")
    return str(value)


def _bet(kind: str) -> Callable[..., int]:
    """The betting action ``kind``: ``act_in_hand(kind=kind, amount=...)``; returns what it
    returns (the chips the player put in, minor units)."""

    def run(*, table_id: int, user_id: int, now: datetime, amount: int | None = None) -> int:
        return player.act_in_hand(table_id=table_id, user_id=user_id, kind=kind, amount=amount, now=now)

    run.__name__ = f"holdem_{kind}"
    return run


COMMANDS: Final[Mapping[str, Command]] = {
    "join": Command(
        frozenset({"seat", "buy_in_minor", "blind"}),
        player.join_holdem,
        {"seat": parse_seat, "buy_in_minor": parse_chips, "blind": parse_blind},
        seats=True,
        required=frozenset({"seat", "buy_in_minor"}),
    ),
    "add_chips": Command(
        frozenset({"amount_minor"}),
        player.add_chips,
        {"amount_minor": parse_chips},
        required=frozenset({"amount_minor"}),
    ),
    "leave": Command(frozenset(), player.leave_holdem_table),
    "sit_out": Command(frozenset(), player.sit_out_holdem),
    "sit_in": Command(frozenset(), player.sit_in_holdem, seats=True),
    **{kind: Command(frozenset(), _bet(kind)) for kind in ("fold", "check", "call", "all_in", "show", "muck")},
    "bet": Command(frozenset({"amount"}), _bet("bet"), {"amount": parse_chips}),
    "raise": Command(frozenset({"amount"}), _bet("raise"), {"amount": parse_chips}),
}
"""Hold'em's actions by name (``Game.commands``)."""
