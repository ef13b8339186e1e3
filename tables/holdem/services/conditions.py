"""Hold'em tables and their conditions: creation, validation, the engine's Structure.

Conditions are the fields of ``tables.models.HOLDEM_CONFIG_FIELDS`` (chips are minor units
of the table's currency). Staff change them through
``tables.games.change_table_config`` like WiderPoker conditions: audit-logged in
TableConfigChange, applied between hands (``apply_pending_holdem_changes``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from tables.engine.holdem import MAX_PLAYERS, MAX_RAKE_BPS, MIN_PLAYERS
from tables.errors import InvalidTableConfigError
from tables.holdem.records import structure_of
from tables.models import (
    HOLDEM_CONFIG_FIELDS,
    HoldemBetting,
    HoldemConditions,
    Table,
    TableGame,
    TableMode,
)
from tables.services.configuration import check_mode_currency, record_table_created
from tables.services.fairness import new_chain

MAX_RAISES = 9
"""The most raises per betting round a table may allow when it sets a cap."""

DEFAULTS: dict[str, Any] = {
    "betting": HoldemBetting.NO_LIMIT.value,
    "seats": 6,
    "rake_bps": 500,
    "rake_cap_minor": None,
    "time_bank_seconds": 20,
    "bot_seats": 0,
    "show_probabilities": False,
    "ante_minor": 0,
    "max_raises": None,
}


def validate_holdem_config(config: Mapping[str, Any], *, mode: str) -> None:
    """Check Hold'em conditions; raise InvalidTableConfigError naming the field.

    Seats 2..10; blinds and stakes positive with the small blind at most the big blind and
    the upper stake at least the lower; buy-in 0 < min <= max; rake at most 10%
    (``MAX_RAKE_BPS``), cap >= 0; time bank 0..120 s; bots only at fun tables (seed 001
    Notes 4) and fewer than the seats."""
    if config["betting"] not in HoldemBetting.values:
        raise InvalidTableConfigError("betting is fixed-limit, pot-limit or no-limit", field="betting")
    checks: list[tuple[str, bool, str]] = [
        ("seats", MIN_PLAYERS <= config["seats"] <= MAX_PLAYERS, "a table has 2 to 10 seats"),
        ("big_blind_minor", config["big_blind_minor"] > 0, "the big blind must be positive"),
        (
            "small_blind_minor",
            0 <= config["small_blind_minor"] <= config["big_blind_minor"],
            "the small blind is 0 to the big blind",
        ),
        ("big_bet_minor", config["big_bet_minor"] >= config["big_blind_minor"], "the upper stake is >= the lower"),
        ("min_buy_in_minor", config["min_buy_in_minor"] >= config["big_blind_minor"], "a buy-in is >= a big blind"),
        ("max_buy_in_minor", config["max_buy_in_minor"] >= config["min_buy_in_minor"], "maximum buy-in < minimum"),
        ("rake_bps", 0 <= config["rake_bps"] <= MAX_RAKE_BPS, "the rake is at most 10% (1000 bps)"),
        (
            "rake_cap_minor",
            config["rake_cap_minor"] is None or config["rake_cap_minor"] >= 0,
            "the rake cap cannot be negative",
        ),
        ("time_bank_seconds", 0 <= config["time_bank_seconds"] <= 120, "the time bank is 0 to 120 seconds"),
        ("bot_seats", 0 <= config["bot_seats"] < config["seats"], "bots leave at least one seat free"),
        ("bot_seats", config["bot_seats"] == 0 or mode == TableMode.FUN, "bots play at fun tables only"),
        (
            "ante_minor",
            0 <= config.get("ante_minor", 0) <= config["big_blind_minor"],
            "the ante is 0 to the big blind",
        ),
        (
            "max_raises",
            config.get("max_raises") is None or 1 <= config["max_raises"] <= MAX_RAISES,
            f"raises per round are 1 to {MAX_RAISES} (empty: the structure's own)",
        ),
    ]
    for field, ok, message in checks:
        if not ok:
            raise InvalidTableConfigError(message, field=field, value=config.get(field))
    try:
        structure_of(config)
    except ValueError as error:
        raise InvalidTableConfigError(str(error), field="betting") from error


@transaction.atomic(durable=True)
def create_holdem_table(
    *, name: str, mode: str, currency: str, staff_user_id: int | None = None, reason: str = "", **config: Any
) -> Table:
    """Open a Hold'em table in the lobby with its conditions (``HOLDEM_CONFIG_FIELDS``;
    ``small_blind_minor``, ``big_blind_minor``, ``min_buy_in_minor`` and
    ``max_buy_in_minor`` are required; ``big_bet_minor`` defaults to twice the big blind).
    The table's seed chain is published at once (docs/provably-fair.md, "Algorithm 2").
    Opened by staff (``staff_user_id``), the creation is audit-logged with ``reason``
    (tables.services.configuration.record_table_created). Raises InvalidTableConfigError."""
    table = open_holdem_table(name=name, mode=mode, currency=currency, **config)
    if staff_user_id is not None:
        conditions = HoldemConditions.objects.get(table=table).snapshot()
        record_table_created(
            table=table, conditions=conditions, staff_user_id=staff_user_id, reason=reason, now=timezone.now()
        )
    return table


@transaction.atomic
def open_holdem_table(*, name: str, mode: str, currency: str, **config: Any) -> Table:
    """``create_holdem_table`` as a building block inside the caller's transaction (a
    practice game opens its table this way)."""
    check_mode_currency(mode, currency)
    unknown = set(config) - set(HOLDEM_CONFIG_FIELDS)
    if unknown:
        raise InvalidTableConfigError(f"unknown fields {sorted(unknown)}", field=sorted(unknown)[0])
    missing = {"small_blind_minor", "big_blind_minor", "min_buy_in_minor", "max_buy_in_minor"} - set(config)
    if missing:
        raise InvalidTableConfigError(f"missing fields {sorted(missing)}", field=sorted(missing)[0])
    values = DEFAULTS | {"big_bet_minor": 2 * int(config["big_blind_minor"])} | config
    validate_holdem_config(values, mode=mode)
    table = Table.objects.create(name=name, game=TableGame.HOLDEM, mode=mode, currency=currency)
    HoldemConditions.objects.create(table=table, **values)
    new_chain(table_id=table.pk, now=timezone.now())
    return table


def apply_pending_holdem_changes(table: Table, conditions: HoldemConditions, *, now: datetime) -> bool:
    """Apply the staff changes waiting for the hand to end to ``conditions`` (the caller
    holds the table's lock and no hand is running). Returns whether anything changed."""
    from tables.models import TableConfigChange

    pending = {field: value for field, value in table.pending_changes.items() if field in HOLDEM_CONFIG_FIELDS}
    if not table.pending_changes:
        return False
    for field, value in pending.items():
        setattr(conditions, field, value)
    conditions.save()
    table.pending_changes = {}
    TableConfigChange.objects.filter(table=table, applied_at__isnull=True).update(applied_at=now)
    return True
