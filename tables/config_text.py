"""The configuration audit log (``TableConfigChange``) as staff read it: what changed named in
words and values in people's units (money in the currency with its decimals, shares in
percent, durations in seconds), never ``rake_bps -> 700`` (issue 20, item 2).

Pure formatting over a row's ``field``, ``old_value``, ``new_value`` and its table's
currency; the stored values stay in minor units and basis points (docs/auditing.md).
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from tables.models import Table
from wallet.money import format_minor

FIELD_NAMES = {
    "ante_minor": "Ante",
    "draw_price_bps": "Draw price (share of the ante)",
    "max_draws": "Draws per hand",
    "redeal_price_minor": "Redeal price",
    "max_redeals": "Redeals per hand",
    "redeal_seconds": "Redeal time",
    "change_seconds": "Change phase",
    "results_seconds": "Results shown",
    "rake_bps": "Rake",
    "rake_cap_minor": "Rake cap",
    "paid_fraction_bps": "Paid entries",
    "min_prize_minor": "Minimum prize",
    "is_open": "Open",
    "powerups": "Power-up rules",
    "created": "Table created",
}


def percent_text(bps: int) -> str:
    """Basis points as people write a percent: 700 -> ``"7 %"``, 1250 -> ``"12.5 %"``."""
    text = f"{(Decimal(int(bps)) / 100).quantize(Decimal('0.01')):f}"
    return (text.rstrip("0").rstrip(".") if "." in text else text) + " %"


def field_text(field: str) -> str:
    """What a log row's ``field`` names: ``rake_bps`` -> ``"Rake"``, ``jackpot:3`` ->
    ``"Jackpot #3"``, ``house:reserve:EUR`` -> ``"House funding: reserve (EUR)"``."""
    if field in FIELD_NAMES:
        return FIELD_NAMES[field]
    subject, _, rest = field.partition(":")
    if subject == "special_hand":
        return f"Special hand #{rest}"
    if subject == "jackpot":
        return f"Jackpot #{rest}"
    if subject == "house":
        kind, _, currency = rest.partition(":")
        return f"House funding: {kind} ({currency})"
    for suffix in ("_minor", "_bps", "_seconds"):
        field = field.removesuffix(suffix)
    return field.replace("_", " ").capitalize()


_VALUE_TEXTS: dict[str, Callable[[dict[str, Any], str | None], str]] = {}
"""A game's own record texts by subject (the part of ``field`` before ``:``), registered by
the registry of games (tables/games.py) at import: the house names no game."""


def register_value_text(subject: str, text: Callable[[dict[str, Any], str | None], str]) -> None:
    """Make ``text(value, currency) -> str`` the text of a log row's dict value whose field
    starts with ``subject:`` (WiderPoker's special hands: ``"special_hand"``); a second call
    for the same subject replaces the first."""
    _VALUE_TEXTS[subject] = text


def value_text(field: str, value: Any, currency: str | None) -> str:
    """One value of a log row in people's units (module docstring); ``{}`` (a schedule that
    did not exist yet, or was deleted) is ``"—"``."""
    if value is None or value == {} or value == "":
        return "—"
    subject = field.partition(":")[0]
    if isinstance(value, dict):
        if subject in _VALUE_TEXTS:
            return _VALUE_TEXTS[subject](value, currency)
        if subject == "jackpot":
            return _jackpot_text(value)
        if subject == "house":
            return _house_text(value, field.rpartition(":")[2])
        if subject == "created":
            return _created_text(value)
        return ", ".join(f"{key.replace('_', ' ')} {_scalar(key, item, currency)}" for key, item in value.items())
    return _scalar(field, value, currency)


def _scalar(key: str, value: Any, currency: str | None) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and key.endswith("_minor"):
        return format_minor(value, currency or "")
    if isinstance(value, int) and key.endswith("_bps"):
        return percent_text(value)
    if isinstance(value, int) and key.endswith("_seconds"):
        return f"{value} s"
    return str(value)


def _created_text(value: dict[str, Any]) -> str:
    """A table as it opened: ``Euro Rail (widerpoker, cash, EUR): Ante 2.50 EUR, Rake 5 %, ...``."""
    currency = str(value.get("currency") or "")
    # A record without ``game`` predates the second game: the house's own, ``Table.game``'s default.
    game = value.get("game") or Table._meta.get_field("game").default
    heading = f"{value.get('name')} ({game}, {value.get('mode')}, {currency})"
    rest = {key: item for key, item in value.items() if key not in {"name", "game", "mode", "currency"}}
    return f"{heading}: " + ", ".join(f"{field_text(key)} {_scalar(key, item, currency)}" for key, item in rest.items())


def _jackpot_text(value: dict[str, Any]) -> str:
    currency = str(value.get("currency") or "")
    parts = [
        f"{value.get('name')} ({value.get('kind')}, {currency})",
        f"{percent_text(int(value.get('contribution_bps') or 0))} of the gross",
        f"restarts from {format_minor(int(value.get('reset_minor') or 0), currency)}",
    ]
    if value.get("one_in"):
        parts.append(f"drawn 1 in {value['one_in']} hands")
    if "starting_minor" in value:
        parts.append(f"starts at {format_minor(int(value['starting_minor']), currency)}")
    parts.append("tables " + (", ".join(str(pk) for pk in value.get("tables") or []) or "none"))
    parts.append("active" if value.get("is_active") else "retired")
    return ", ".join(parts)


def _house_text(value: dict[str, Any], currency: str) -> str:
    text = f"balance {format_minor(int(value.get('balance_minor') or 0), currency)}"
    if "amount_minor" in value:
        text += f" (+{format_minor(int(value['amount_minor']), currency)}, transfer {value.get('transfer')})"
    return text
