"""The lobby's lines of Hold'em tables (reads only): game, stakes as poker rooms write them,
seats taken of the seats, the buy-in range and the rake (issue 9, Tables; seed 003)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from django.db.models import Count, Q

from tables.gamespec import GameLobby
from tables.models import HoldemConditions, SeatStatus, Table, TableGame


def stakes_label(config: Mapping[str, Any]) -> str:
    """The stakes as poker rooms write them: ``"NL 1/2"`` (no-limit: small/big blind),
    ``"PL 0.50/1"`` (pot-limit), ``"FL 1/2"`` (fixed-limit: the lower and upper stakes,
    seed 003, "Limit"). Amounts in the currency's major units, whole amounts without
    decimals.

    >>> stakes_label({"betting": "no-limit", "small_blind_minor": 100, "big_blind_minor": 200, "big_bet_minor": 400})
    'NL 1/2'
    >>> stakes_label({"betting": "fixed-limit", "small_blind_minor": 50, "big_blind_minor": 100, "big_bet_minor": 200})
    'FL 1/2'
    """
    prefix = {"no-limit": "NL", "pot-limit": "PL", "fixed-limit": "FL"}[str(config["betting"])]
    if config["betting"] == "fixed-limit":
        low, high = config["big_blind_minor"], config["big_bet_minor"]
    else:
        low, high = config["small_blind_minor"], config["big_blind_minor"]
    return f"{prefix} {_major(int(low))}/{_major(int(high))}"


def _major(amount_minor: int) -> str:
    whole, cents = divmod(amount_minor, 100)
    return str(whole) if cents == 0 else f"{whole}.{cents:02d}"


@dataclass(frozen=True, slots=True)
class HoldemLobbyRow:
    """One Hold'em table in the lobby. Money in minor units of ``currency``."""

    id: int
    name: str
    mode: str
    currency: str
    betting: str
    stakes: str
    small_blind_minor: int
    big_blind_minor: int
    seats_taken: int
    seats: int
    min_buy_in_minor: int
    max_buy_in_minor: int
    rake_bps: int
    bots: int
    is_open: bool

    def as_json(self) -> dict[str, Any]:
        """The row as the lobby's JSON carries it."""
        return {field: getattr(self, field) for field in self.__slots__}


def list_holdem_lobby_rows() -> list[HoldemLobbyRow]:
    """Every open Hold'em table's lobby line, smallest big blind first."""
    conditions = {c.table_id: c for c in HoldemConditions.objects.all()}
    taken = Q(seats__position__isnull=False) & ~Q(seats__status=SeatStatus.LEFT)
    tables = (
        Table.objects.filter(game=TableGame.HOLDEM, practice__isnull=True)  # practice games are private
        .annotate(taken=Count("seats", filter=taken), bots=Count("seats", filter=taken & Q(seats__is_bot=True)))
        .order_by("holdem__big_blind_minor", "name")
    )
    rows = []
    for table in tables:
        c = conditions.get(table.pk)
        if c is None:
            continue
        rows.append(
            HoldemLobbyRow(
                id=table.pk,
                name=table.name,
                mode=table.mode,
                currency=table.currency,
                betting=c.betting,
                stakes=stakes_label(c.snapshot()),
                small_blind_minor=c.small_blind_minor,
                big_blind_minor=c.big_blind_minor,
                seats_taken=int(getattr(table, "taken", 0)),
                seats=c.seats,
                min_buy_in_minor=c.min_buy_in_minor,
                max_buy_in_minor=c.max_buy_in_minor,
                rake_bps=c.rake_bps,
                bots=int(getattr(table, "bots", 0)),
                is_open=table.is_open,
            )
        )
    return rows


def lobby_rows() -> list[dict[str, Any]]:
    """Every open Hold'em table's lobby line as JSON (``HoldemLobbyRow.as_json``)."""
    return [row.as_json() for row in list_holdem_lobby_rows()]


def lobby_row(table: Table) -> dict[str, Any]:
    """Hold'em's side of a table's line in ``GET /api/tables/`` and the ``lobby_table`` frame
    (``Game.lobby_row``): that line's shape (API 1.x) was WiderPoker's conditions, and a
    Hold'em table keeps the values it showed there before its table had conditions of its
    own: the big blind as ``ante_minor`` (what the list sorts by), its rake, no redeals and
    the shape's other defaults. Minor units, bps, seconds. One read of ``table.holdem``."""
    conditions = table.holdem
    return {
        "ante_minor": conditions.big_blind_minor,
        "change_seconds": API_LINE_CHANGE_SECONDS,
        "speed": "fast",
        "rake_bps": conditions.rake_bps,
        "draw_price_minor": conditions.big_blind_minor // 2,
        "draw_price_bps": 5000,
        "redeal_price_minor": 0,
        "max_draws": 5,
        "max_redeals": 0,
        "redeal_seconds": 20,
        "paid_fraction_bps": 1500,
        "min_prize_minor": 0,
        "next_special": None,
        "pool_minor": None,
    }


API_LINE_CHANGE_SECONDS: Final = 30
"""The change phase a Hold'em table's API line has always shown (it has none)."""


LOBBY: Final = GameLobby(rows=lobby_rows, template="lobby/_holdem_tables.html", json_key="holdem_tables")
"""Hold'em's lobby section; its rows under ``holdem_tables`` in lobby/tables.json."""
