"""The conditions of a hand: the table's configuration, plus the rules a special hand or a
spin jackpot changes (seed 001, D and Jackpots 2; DESIGN items 12 and 16).

A hand's conditions are frozen in ``Hand.config`` when it is dealt; everything that prices
or limits a player's action reads them from there, so an override applies to exactly the
hand it was drawn or scheduled for.
"""

from __future__ import annotations

from typing import Any

from tables.errors import InvalidTableConfigError
from tables.models import MAX_DRAW_PRICE_BPS, draw_price

OVERRIDABLE: dict[str, str] = {
    "change_seconds": "change phase length (seconds)",
    "redeal_seconds": "redeals on sale for (seconds)",
    "paid_fraction_bps": "share of entries paid (%)",
    "min_prize_minor": "minimum prize (amount)",
    "tips": "tips shown",
    "panel": "probability panel shown",
    "draw_price_bps": "price of each draw after the first (% of the ante)",
    "max_draws": "draws per hand",
    "redeal_price_minor": "price of a redeal (amount)",
    "max_redeals": "redeals per hand",
}
"""What a special hand or a spin jackpot may change, and how the screens name it."""

BOOLEAN_OVERRIDES = frozenset({"tips", "panel"})


def validate_overrides(overrides: Any) -> dict[str, Any]:
    """Check an overrides mapping: known keys only, booleans for tips/panel, integers otherwise
    (ranges are checked on the merged conditions by ``apply_overrides``). Returns a clean copy.
    Raises InvalidTableConfigError naming the key at fault."""
    if not isinstance(overrides, dict):
        raise InvalidTableConfigError("overrides must be a mapping of rule to value", field="overrides")
    clean: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in OVERRIDABLE:
            raise InvalidTableConfigError(
                f"{key!r} cannot be changed by a special hand; allowed: {', '.join(sorted(OVERRIDABLE))}", field=key
            )
        if key in BOOLEAN_OVERRIDES:
            if not isinstance(value, bool):
                raise InvalidTableConfigError(f"{key} is true or false", field=key, value=value)
        elif isinstance(value, bool) or not isinstance(value, int):
            raise InvalidTableConfigError(f"{key} is a whole number", field=key, value=value)
        clean[key] = value
    return clean


def validate_table_config(config: dict[str, Any]) -> None:
    """Check a table configuration against the rules; raise InvalidTableConfigError naming
    the field. Rake at most 10% (rules, Notes 1); at most 5 draws (rules C.1)."""
    checks: list[tuple[str, bool, str]] = [
        ("ante_minor", config["ante_minor"] > 0, "the ante must be positive"),
        ("rake_bps", 0 <= config["rake_bps"] <= 1000, "the rake is at most 10% (1000 bps)"),
        ("max_draws", 1 <= config["max_draws"] <= 5, "draws per hand are 1 to 5"),
        (
            "paid_fraction_bps",
            1 <= config["paid_fraction_bps"] <= 10000,
            "the paid fraction is 0.01% to 100%",
        ),
        (
            "change_seconds",
            5 <= config["change_seconds"] <= 600,
            "the change phase lasts 5 to 600 seconds",
        ),
        (
            "results_seconds",
            1 <= config["results_seconds"] <= 120,
            "results show for 1 to 120 seconds",
        ),
        (
            "draw_price_bps",
            0 <= config["draw_price_bps"] <= MAX_DRAW_PRICE_BPS,
            "a draw costs 0% to 1000% of the ante",
        ),
        ("redeal_price_minor", config["redeal_price_minor"] >= 0, "prices cannot be negative"),
        ("min_prize_minor", config["min_prize_minor"] >= 0, "the minimum prize cannot be negative"),
        ("max_redeals", 0 <= config["max_redeals"] <= 10, "0 to 10 redeals per hand"),
        ("redeal_seconds", config["redeal_seconds"] >= 0, "the redeal time cannot be negative"),
    ]
    for field, ok, message in checks:
        if not ok:
            raise InvalidTableConfigError(message, field=field, value=config[field])


def apply_overrides(config: dict[str, Any], overrides: dict[str, Any], *, source: str) -> dict[str, Any]:
    """The conditions ``config`` with ``overrides`` applied, recording them under
    ``config["overrides"]`` with their ``source`` (``"special"`` or ``"spin:<kind>"``).
    Raises InvalidTableConfigError when the merged conditions break the table rules."""
    clean = validate_overrides(overrides)
    if not clean:
        return config
    merged = config | clean
    validate_table_config(merged)
    merged["draw_price_minor"] = draw_price(merged["ante_minor"], merged["draw_price_bps"])
    recorded = dict(config.get("overrides", {}))
    recorded.update({key: {"value": value, "source": source, "was": config.get(key)} for key, value in clean.items()})
    merged["overrides"] = recorded
    return merged
