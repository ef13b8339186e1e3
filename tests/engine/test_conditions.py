"""A table's conditions and prices, written once in the engine
(tables/engine/widerpoker/conditions.py): seed 001 C.1 and Notes 1, DESIGN items 12 and 16.

The platform reads these rules from four places (settlement, the verifier, the lobby's
simulator, the table model); the tests here pin the rules themselves.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tables.engine.widerpoker.conditions import (
    CONDITION_FIELDS,
    MAX_DRAW_PRICE_BPS,
    OVERRIDABLE,
    ConditionsError,
    TableConditions,
    apply_overrides,
    draw_price,
    gross_minor,
    hand_totals,
    paid_minor,
    validate,
    validate_overrides,
)

GOOD = TableConditions(ante_minor=100, draw_price_bps=5000, redeal_price_minor=80).as_dict()


def test_condition_fields_are_the_table_models_columns_in_order() -> None:
    assert CONDITION_FIELDS == (
        "ante_minor",
        "change_seconds",
        "results_seconds",
        "rake_bps",
        "paid_fraction_bps",
        "min_prize_minor",
        "draw_price_bps",
        "max_draws",
        "redeal_price_minor",
        "max_redeals",
        "redeal_seconds",
    )


def test_valid_conditions_come_back_frozen_with_their_draw_price() -> None:
    conditions = validate(GOOD | {"tips": True})
    assert conditions == TableConditions(ante_minor=100, draw_price_bps=5000, redeal_price_minor=80)
    assert conditions.draw_price_minor == 50
    with pytest.raises(AttributeError):
        conditions.ante_minor = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("ante_minor", 0, "the ante must be positive"),
        ("rake_bps", 1001, "the rake is at most 10% (1000 bps)"),
        ("max_draws", 0, "draws per hand are 1 to 5"),
        ("max_draws", 6, "draws per hand are 1 to 5"),
        ("paid_fraction_bps", 0, "the paid fraction is 0.01% to 100%"),
        ("paid_fraction_bps", 10_001, "the paid fraction is 0.01% to 100%"),
        ("change_seconds", 4, "the change phase lasts 5 to 600 seconds"),
        ("results_seconds", 121, "results show for 1 to 120 seconds"),
        ("draw_price_bps", MAX_DRAW_PRICE_BPS + 1, "a draw costs 0% to 1000% of the ante"),
        ("redeal_price_minor", -1, "prices cannot be negative"),
        ("min_prize_minor", -1, "the minimum prize cannot be negative"),
        ("max_redeals", 11, "0 to 10 redeals per hand"),
        ("redeal_seconds", -1, "the redeal time cannot be negative"),
        ("ante_minor", "100", "ante_minor is a whole number"),
        ("max_draws", True, "max_draws is a whole number"),
    ],
)
def test_each_rule_refuses_naming_its_field(field: str, value: Any, message: str) -> None:
    with pytest.raises(ConditionsError, match=re.escape(message)) as caught:
        validate(GOOD | {field: value})
    assert (caught.value.field, caught.value.value) == (field, value)


def test_the_bounds_themselves_are_allowed() -> None:
    validate(GOOD | {"rake_bps": 1000, "max_draws": 5, "draw_price_bps": MAX_DRAW_PRICE_BPS, "max_redeals": 10})
    validate(GOOD | {"rake_bps": 0, "max_draws": 1, "draw_price_bps": 0, "redeal_price_minor": 0, "max_redeals": 0})


def test_overrides_accept_known_rules_and_refuse_the_rest() -> None:
    assert validate_overrides({"tips": False, "max_draws": 3}) == {"tips": False, "max_draws": 3}
    with pytest.raises(ConditionsError) as caught:
        validate_overrides({"ante_minor": 5})
    assert caught.value.field == "ante_minor"
    assert "ante_minor" not in OVERRIDABLE
    with pytest.raises(ConditionsError, match="true or false"):
        validate_overrides({"panel": 1})
    with pytest.raises(ConditionsError, match="whole number"):
        validate_overrides({"max_draws": True})
    with pytest.raises(ConditionsError) as caught:
        validate_overrides([("tips", False)])
    assert caught.value.field == "overrides"


def test_apply_overrides_reprices_draws_and_records_what_it_changed() -> None:
    config = GOOD | {"draw_price_minor": 50, "tips": True}
    merged = apply_overrides(config, {"draw_price_bps": 2000, "tips": False}, source="special")
    assert merged["draw_price_minor"] == 20
    assert merged["overrides"] == {
        "draw_price_bps": {"value": 2000, "source": "special", "was": 5000},
        "tips": {"value": False, "source": "special", "was": True},
    }
    assert config["draw_price_minor"] == 50 and "overrides" not in config
    assert apply_overrides(config, {}, source="special") is config
    with pytest.raises(ConditionsError) as caught:
        apply_overrides(config, {"max_draws": 9}, source="spin:bonus")
    assert caught.value.field == "max_draws"


def test_prices_of_a_worked_hand() -> None:
    # Three players at a 1.05 ante, half-ante draws (52 cents, floored), 0.80 redeals.
    price = draw_price(105, 5000)
    assert price == 52
    paid = [
        paid_minor(ante_minor=105, draw_price_minor=price, redeal_price_minor=80, draws_bought=d, redeals=r)
        for d, r in ((1, 0), (3, 1), (5, 2))
    ]
    assert paid == [105, 105 + 104 + 80, 105 + 208 + 160]
    totals = hand_totals(antes_minor=315, draw_price_minor=price, redeal_price_minor=80, extra_draws=6, redeals=3)
    assert totals == (315, 312, 240, 867)
    assert totals.gross_minor == sum(paid)


@given(
    ante=st.integers(1, 10**9),
    bps=st.integers(0, MAX_DRAW_PRICE_BPS),
    redeal=st.integers(0, 10**9),
    entries=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 10)), min_size=1, max_size=30),
)
def test_the_hand_totals_are_what_its_entries_paid(
    ante: int, bps: int, redeal: int, entries: list[tuple[int, int]]
) -> None:
    price = draw_price(ante, bps)
    assert 0 <= price <= 10 * ante
    paid = sum(
        paid_minor(ante_minor=ante, draw_price_minor=price, redeal_price_minor=redeal, draws_bought=d, redeals=r)
        for d, r in entries
    )
    totals = hand_totals(
        antes_minor=ante * len(entries),
        draw_price_minor=price,
        redeal_price_minor=redeal,
        extra_draws=sum(d - 1 for d, _ in entries),
        redeals=sum(r for _, r in entries),
    )
    assert totals.gross_minor == paid
    assert totals.gross_minor == gross_minor(totals.antes_minor, totals.draws_minor, totals.redeals_minor)
