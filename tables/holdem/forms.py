"""Texas Hold'em's staff forms: a table's conditions in the units a croupier reads, to open
a table and to change its conditions (tables/holdem/game.py hands them to the table admin)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from config.infra.errors import DomainError
from tables.forms import ConditionsForm, creation_reason, from_hundredths, to_hundredths
from tables.models import HOLDEM_CONFIG_FIELDS, HoldemBetting, TableMode
from wallet.models import Currency

_HOLDEM_HUNDREDTHS = frozenset(
    {"small_blind_minor", "big_blind_minor", "big_bet_minor", "min_buy_in_minor", "max_buy_in_minor"}
    | {"rake_bps", "rake_cap_minor", "ante_minor"}
)
"""The Hold'em conditions typed in hundredths: money in major units, the rake in percent."""


def _holdem_money(label: str, *, required: bool = True, minimum: str = "0.01") -> forms.DecimalField:
    return forms.DecimalField(
        label=label, required=required, min_value=Decimal(minimum), max_digits=14, decimal_places=2
    )


class HoldemConditionsForm(ConditionsForm):
    """A Hold'em table's conditions (tables.models.HOLDEM_CONFIG_FIELDS) as a croupier reads
    them: amounts in the table's currency with its decimals (0.05), the rake in percent;
    ``config()`` gives minor units and basis points. The rules are checked by the Hold'em
    services. The fields keep the configuration's names, so a refusal shows on its field."""

    betting = forms.ChoiceField(choices=HoldemBetting.choices)
    small_blind_minor = _holdem_money("Small blind", minimum="0")
    big_blind_minor = _holdem_money("Big blind = lower stake")
    big_bet_minor = _holdem_money("Upper stake (limit's big bet)")
    seats = forms.IntegerField(min_value=2, max_value=10)
    min_buy_in_minor = _holdem_money("Minimum buy-in")
    max_buy_in_minor = _holdem_money("Maximum buy-in")
    rake_bps = forms.DecimalField(
        label="Rake (%)", min_value=0, max_value=10, decimal_places=2, help_text="At most 10 %, e.g. 5."
    )
    rake_cap_minor = _holdem_money("Rake cap per hand (empty: none)", required=False, minimum="0")
    time_bank_seconds = forms.IntegerField(label="Time bank (s)", min_value=0, max_value=120)
    bot_seats = forms.IntegerField(label="House bots (fun tables only)", min_value=0, max_value=9)
    show_probabilities = forms.BooleanField(required=False)
    ante_minor = _holdem_money("Ante (empty: none)", required=False, minimum="0")
    max_raises = forms.IntegerField(
        label="Raises per betting round (empty: the structure's own)", min_value=1, max_value=9, required=False
    )

    @staticmethod
    def initial_from(config: dict[str, Any]) -> dict[str, Any]:
        """Form initial values from a configuration in minor units and basis points."""
        return {
            name: from_hundredths(value) if name in _HOLDEM_HUNDREDTHS and value is not None else value
            for name, value in config.items()
        }

    def config(self) -> dict[str, Any]:
        """The cleaned conditions, keyed by HOLDEM_CONFIG_FIELDS (minor units, basis points)."""
        values = {field: self.cleaned_data[field] for field in HOLDEM_CONFIG_FIELDS}
        for name in _HOLDEM_HUNDREDTHS:
            if values.get(name) is not None:
                values[name] = to_hundredths(values[name])
        values["ante_minor"] = values["ante_minor"] or 0
        return values

    def add_domain_error(self, error: DomainError) -> None:
        """Show a service's refusal on the field it names (or on the whole form)."""
        name = str(error.extra.get("field", ""))
        self.add_error(name if name in self.fields else None, f"{error} [{error.code}]")


class HoldemCreateForm(HoldemConditionsForm):
    """A new Hold'em table: name, mode and currency, then its conditions, and why (optional;
    the creation is audit-logged)."""

    name = forms.CharField(max_length=60)
    mode = forms.ChoiceField(choices=TableMode.choices)
    currency = forms.ChoiceField(choices=Currency.choices)
    reason = creation_reason()
    field_order = ["name", "mode", "currency"]


class ChangeHoldemConditionsForm(HoldemConditionsForm):
    """New Hold'em conditions and the mandatory reason for the audit log."""

    reason = forms.CharField(max_length=255, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}))

    def clean_reason(self) -> str:
        reason = str(self.cleaned_data["reason"]).strip()
        if not reason:
            raise forms.ValidationError("A reason is required.")
        return reason
