"""A WiderPoker table's conditions: the rules they must keep and the prices they set.

Written once here, read by the platform wherever a price or a condition is checked: the
table and special-hand services (validation), settlement (a hand's totals), the hand
verifier (what each entry paid) and the lobby's simulator (seed 001, C.1 and Notes 1;
DESIGN items 12 and 16). Amounts are integers in minor units, shares in basis points
(1 bps = 0.01 %), times in whole seconds. Pure: no Django, no clock, no randomness.

>>> conditions = TableConditions(ante_minor=100, draw_price_bps=5000, redeal_price_minor=80)
>>> validate(conditions.as_dict()).draw_price_minor
50
>>> paid_minor(ante_minor=100, draw_price_minor=50, redeal_price_minor=80, draws_bought=3, redeals=1)
280
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any, Final, NamedTuple

from ..allocation import MAX_RAKE_BPS
from .change import MAX_DRAWS

__all__ = [
    "BOOLEAN_OVERRIDES",
    "CONDITION_FIELDS",
    "MAX_DRAW_PRICE_BPS",
    "MAX_REDEALS",
    "OVERRIDABLE",
    "ConditionsError",
    "HandTotals",
    "TableConditions",
    "apply_overrides",
    "draw_price",
    "gross_minor",
    "hand_totals",
    "paid_minor",
    "validate",
    "validate_overrides",
]

MAX_DRAW_PRICE_BPS: Final = 100_000
"""A draw costs at most ten antes (1000 % of the ante)."""
MAX_REDEALS: Final = 10
"""Redeals a table may sell per hand."""

OVERRIDABLE: Final[Mapping[str, str]] = {
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

BOOLEAN_OVERRIDES: Final = frozenset({"tips", "panel"})
"""The overridable switches (``True``/``False``); every other overridable rule is an int."""


class ConditionsError(ValueError):
    """Conditions that break the table rules. ``field`` names the condition at fault (a key
    of ``CONDITION_FIELDS`` or ``OVERRIDABLE``, or ``"overrides"``), ``value`` is what was
    given (``None`` when the fault is not one value's)."""

    def __init__(self, message: str, *, field: str, value: Any = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


def draw_price(ante_minor: int, draw_price_bps: int) -> int:
    """The price of a draw after the first, in minor units: ``floor(ante x bps / 10000)``
    (seed 001, C.1: "an amount proportional to the ante").

    >>> draw_price(105, 5000)
    52
    """
    return int(ante_minor) * int(draw_price_bps) // 10_000


@dataclass(frozen=True, slots=True)
class TableConditions:
    """A WiderPoker table's conditions, the fields staff set (``CONDITION_FIELDS``, in the
    model's order). Defaults are the model's. Not validated on construction: call
    ``validate``."""

    ante_minor: int
    change_seconds: int = 30
    results_seconds: int = 8
    rake_bps: int = 500
    paid_fraction_bps: int = 1500
    min_prize_minor: int = 0
    draw_price_bps: int = 5000
    max_draws: int = MAX_DRAWS
    redeal_price_minor: int = 0
    max_redeals: int = 2
    redeal_seconds: int = 20

    @property
    def draw_price_minor(self) -> int:
        """The price of each draw after the first (``draw_price``), minor units."""
        return draw_price(self.ante_minor, self.draw_price_bps)

    def as_dict(self) -> dict[str, int]:
        """The conditions as ``{field: int}`` in ``CONDITION_FIELDS`` order."""
        return asdict(self)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> TableConditions:
        """The conditions named in ``values`` (extra keys are ignored, missing ones take the
        defaults; ``ante_minor`` is required). Raises ConditionsError naming a value that
        is not a whole number."""
        if "ante_minor" not in values:
            raise ConditionsError("the ante is required", field="ante_minor")
        return cls(**{name: _whole(name, values[name]) for name in CONDITION_FIELDS if name in values})


CONDITION_FIELDS: Final[tuple[str, ...]] = tuple(field.name for field in fields(TableConditions))
"""The condition names, in the order the ``Table`` model declares its columns."""


def _whole(name: str, value: Any) -> int:
    """``value`` as an int; ConditionsError if it is a bool or no integer."""
    if isinstance(value, bool):
        raise ConditionsError(f"{name} is a whole number", field=name, value=value)
    try:
        return operator.index(value)
    except TypeError:
        raise ConditionsError(f"{name} is a whole number", field=name, value=value) from None


_RULES: Final[tuple[tuple[str, int | None, int | None, str], ...]] = (
    # (field, lowest, highest, what the rule says): both bounds included, None = unbounded.
    ("ante_minor", 1, None, "the ante must be positive"),
    ("rake_bps", 0, MAX_RAKE_BPS, "the rake is at most 10% (1000 bps)"),
    ("max_draws", 1, MAX_DRAWS, "draws per hand are 1 to 5"),
    ("paid_fraction_bps", 1, 10_000, "the paid fraction is 0.01% to 100%"),
    ("change_seconds", 5, 600, "the change phase lasts 5 to 600 seconds"),
    ("results_seconds", 1, 120, "results show for 1 to 120 seconds"),
    ("draw_price_bps", 0, MAX_DRAW_PRICE_BPS, "a draw costs 0% to 1000% of the ante"),
    ("redeal_price_minor", 0, None, "prices cannot be negative"),
    ("min_prize_minor", 0, None, "the minimum prize cannot be negative"),
    ("max_redeals", 0, MAX_REDEALS, "0 to 10 redeals per hand"),
    ("redeal_seconds", 0, None, "the redeal time cannot be negative"),
)


def validate(values: Mapping[str, Any]) -> TableConditions:
    """Check a table's conditions (a mapping with every name of ``CONDITION_FIELDS``; other
    keys, such as a hand's ``tips``, are ignored) against the rules: rake at most 10 %
    (rules, Notes 1), 1 to 5 draws (rules C.1), prices and times not negative. Returns them
    as ``TableConditions``. Raises ConditionsError naming the first field at fault, in the
    order of the rules above; KeyError if a field is missing."""
    for field, lowest, highest, message in _RULES:
        value = _whole(field, values[field])
        if (lowest is not None and value < lowest) or (highest is not None and value > highest):
            raise ConditionsError(message, field=field, value=values[field])
    return TableConditions.from_mapping(values)


def validate_overrides(overrides: Any) -> dict[str, Any]:
    """Check an overrides mapping (a special hand's or a spin jackpot's): known keys only
    (``OVERRIDABLE``), booleans for ``BOOLEAN_OVERRIDES``, integers otherwise. Ranges are
    checked on the merged conditions by ``apply_overrides``. Returns a clean copy. Raises
    ConditionsError naming the key at fault (``"overrides"`` if it is no mapping)."""
    if not isinstance(overrides, dict):
        raise ConditionsError("overrides must be a mapping of rule to value", field="overrides")
    clean: dict[str, Any] = {}
    for key, value in overrides.items():
        if key not in OVERRIDABLE:
            raise ConditionsError(
                f"{key!r} cannot be changed by a special hand; allowed: {', '.join(sorted(OVERRIDABLE))}", field=key
            )
        if key in BOOLEAN_OVERRIDES:
            if not isinstance(value, bool):
                raise ConditionsError(f"{key} is true or false", field=key, value=value)
        elif isinstance(value, bool) or not isinstance(value, int):
            raise ConditionsError(f"{key} is a whole number", field=key, value=value)
        clean[key] = value
    return clean


def apply_overrides(config: dict[str, Any], overrides: Any, *, source: str) -> dict[str, Any]:
    """A hand's conditions ``config`` (``CONDITION_FIELDS`` plus ``draw_price_minor``, tips,
    panel...) with ``overrides`` applied and its draw price recomputed, each override
    recorded under ``config["overrides"]`` as ``{"value", "source", "was"}``. ``source`` is
    ``"special"`` or ``"spin:<kind>"``. ``config`` is not changed; with no overrides it is
    returned as is. Raises ConditionsError when the overrides or the merged conditions
    break the rules."""
    clean = validate_overrides(overrides)
    if not clean:
        return config
    merged = config | clean
    validate(merged)
    merged["draw_price_minor"] = draw_price(merged["ante_minor"], merged["draw_price_bps"])
    recorded = dict(config.get("overrides", {}))
    recorded.update({key: {"value": value, "source": source, "was": config.get(key)} for key, value in clean.items()})
    merged["overrides"] = recorded
    return merged


def paid_minor(
    *, ante_minor: int, draw_price_minor: int, redeal_price_minor: int, draws_bought: int, redeals: int
) -> int:
    """What one entry pays, in minor units: its ante (the first draw included), each draw
    after the first and each redeal at the hand's frozen prices (seed 001, C.1).
    ``draws_bought`` counts the first draw (1..5); free items count at their price (the
    promotion pays them)."""
    return int(ante_minor) + (int(draws_bought) - 1) * int(draw_price_minor) + int(redeals) * int(redeal_price_minor)


class HandTotals(NamedTuple):
    """A hand's takings in minor units: antes, draws after the first, redeals, and their sum."""

    antes_minor: int
    draws_minor: int
    redeals_minor: int
    gross_minor: int


def gross_minor(antes_minor: int, draws_minor: int, redeals_minor: int) -> int:
    """A hand's gross takings: ``antes + draws + redeals`` (minor units)."""
    return int(antes_minor) + int(draws_minor) + int(redeals_minor)


def hand_totals(
    *, antes_minor: int, draw_price_minor: int, redeal_price_minor: int, extra_draws: int, redeals: int
) -> HandTotals:
    """A hand's totals from its antes, the draws bought after the first (``extra_draws``,
    all entries together) and the redeals sold, at the hand's frozen prices (minor units).

    >>> hand_totals(antes_minor=300, draw_price_minor=50, redeal_price_minor=80, extra_draws=4, redeals=1)
    HandTotals(antes_minor=300, draws_minor=200, redeals_minor=80, gross_minor=580)
    """
    draws = int(draw_price_minor) * int(extra_draws)
    redeals_minor = int(redeal_price_minor) * int(redeals)
    return HandTotals(int(antes_minor), draws, redeals_minor, gross_minor(antes_minor, draws, redeals_minor))
