"""The configuration audit log in people's units (tables.config_text; issue 20, item 2)."""

from __future__ import annotations

from tables.config_text import field_text, percent_text, value_text


def test_a_rake_change_reads_in_percent_not_basis_points() -> None:
    assert field_text("rake_bps") == "Rake"
    assert value_text("rake_bps", 700, "EUR") == "7 %"
    assert percent_text(1250) == "12.5 %"


def test_money_reads_in_the_currency_with_its_decimals_and_times_in_seconds() -> None:
    assert value_text("ante_minor", 150, "EUR") == "1.50 EUR"
    assert value_text("change_seconds", 30, "FUN") == "30 s"
    assert value_text("is_open", False, "FUN") == "no"


def test_a_special_hand_a_jackpot_and_house_funding_read_as_sentences() -> None:
    special = {
        "name": "Happy hour",
        "kind": "every_n",
        "every_n": 10,
        "times": [],
        "one_in": None,
        "overrides": {"paid_fraction_bps": 5000, "tips": False},
        "is_active": True,
    }
    assert value_text("special_hand:4", special, "FUN") == (
        "Happy hour: every 10 hands: share of entries paid 50 %, no tips (active)"
    )
    assert value_text("special_hand:4", {}, "FUN") == "—"
    jackpot = {
        "name": "Bronze EUR",
        "kind": "bronze",
        "currency": "EUR",
        "contribution_bps": 50,
        "reset_minor": 1000,
        "one_in": 30,
        "spin_overrides": {},
        "is_active": True,
        "tables": [3],
        "starting_minor": 5000,
    }
    assert field_text("jackpot:2") == "Jackpot #2"
    text = value_text("jackpot:2", jackpot, None)
    assert "0.5 % of the gross" in text and "restarts from 10.00 EUR" in text and "starts at 50.00 EUR" in text
    house = value_text("house:reserve:EUR", {"balance_minor": 80000, "amount_minor": 50000, "transfer": "t-1"}, None)
    assert field_text("house:reserve:EUR") == "House funding: reserve (EUR)"
    assert house == "balance 800.00 EUR (+500.00 EUR, transfer t-1)"
