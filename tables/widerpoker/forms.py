"""WiderPoker's staff forms: a table's conditions in the units a croupier reads (major
units, percent), to open a table and to change its conditions (tables/widerpoker/game.py
hands them to the table admin)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from config.infra.errors import DomainError
from tables.forms import ConditionsForm, creation_reason, from_hundredths, to_hundredths
from tables.models import TableMode
from wallet.models import Currency

# form field -> (config field, whether the value is in hundredths: money or percent)
CONDITION_FIELDS: dict[str, tuple[str, bool]] = {
    "ante": ("ante_minor", True),
    "draw_price_percent": ("draw_price_bps", True),
    "max_draws": ("max_draws", False),
    "redeal_price": ("redeal_price_minor", True),
    "max_redeals": ("max_redeals", False),
    "redeal_seconds": ("redeal_seconds", False),
    "change_seconds": ("change_seconds", False),
    "results_seconds": ("results_seconds", False),
    "rake_percent": ("rake_bps", True),
    "paid_percent": ("paid_fraction_bps", True),
    "min_prize": ("min_prize_minor", True),
}


def _money_field(label: str, help_text: str) -> forms.DecimalField:
    return forms.DecimalField(label=label, min_value=0, max_digits=14, decimal_places=2, help_text=help_text)


class TableConditionsForm(ConditionsForm):
    """A table's conditions: money in major units (1.00), rake and paid share in percent.
    The rules (rake at most 10%, 1-5 draws, ...) are checked by the table services."""

    ante = _money_field("Ante", "Paid by every player in each hand, e.g. 1.00.")
    draw_price_percent = forms.DecimalField(
        label="Draw price (% of the ante)",
        min_value=0,
        max_value=1000,
        decimal_places=2,
        help_text="Each draw after the first costs this share of the ante (seed 001, C.1), e.g. 50.",
    )
    max_draws = forms.IntegerField(label="Draws per hand", min_value=1, max_value=5)
    redeal_price = _money_field("Redeal price", "Price of one redeal.")
    max_redeals = forms.IntegerField(label="Redeals per hand", min_value=0, max_value=10)
    redeal_seconds = forms.IntegerField(
        label="Redeal time (s)", min_value=0, help_text="Redeals are sold in the first N seconds."
    )
    change_seconds = forms.IntegerField(label="Change phase (s)", min_value=5, max_value=600)
    results_seconds = forms.IntegerField(label="Results shown (s)", min_value=1, max_value=120)
    rake_percent = forms.DecimalField(
        label="Rake (%)", min_value=0, max_value=10, decimal_places=2, help_text="At most 10%."
    )
    paid_percent = forms.DecimalField(
        label="Paid entries (%)",
        min_value=Decimal("0.01"),
        max_value=100,
        decimal_places=2,
        help_text="Share of the entries that win a prize, e.g. 15.",
    )
    min_prize = _money_field("Minimum prize", "Smallest prize of a paid place (0 = none).")

    @staticmethod
    def initial_from(config: dict[str, int]) -> dict[str, Any]:
        """Form initial values from a configuration in minor units and basis points."""
        return {
            name: from_hundredths(config[field]) if hundredths else config[field]
            for name, (field, hundredths) in CONDITION_FIELDS.items()
        }

    def config(self) -> dict[str, int]:
        """The cleaned conditions as configuration fields (minor units, basis points)."""
        return {
            field: to_hundredths(self.cleaned_data[name]) if hundredths else self.cleaned_data[name]
            for name, (field, hundredths) in CONDITION_FIELDS.items()
        }

    def add_domain_error(self, error: DomainError) -> None:
        """Show a service's refusal on the field it names (or on the whole form)."""
        by_config = {field: name for name, (field, _) in CONDITION_FIELDS.items()}
        name = by_config.get(str(error.extra.get("field", "")), error.extra.get("field"))
        self.add_error(name if name in self.fields else None, f"{error} [{error.code}]")


class TableCreateForm(TableConditionsForm):
    """A new table: its name, mode and currency, then its conditions, and why (optional; the
    creation is audit-logged, tables.services.configuration.record_table_created)."""

    name = forms.CharField(max_length=60)
    mode = forms.ChoiceField(choices=TableMode.choices)
    currency = forms.ChoiceField(
        choices=Currency.choices, help_text="Fun tables play FUN chips; cash tables a cash currency."
    )
    reason = creation_reason()
    field_order = ["name", "mode", "currency"]


class ChangeConditionsForm(TableConditionsForm):
    """New conditions for a table and the mandatory reason for the audit log."""

    reason = forms.CharField(
        max_length=255,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why: kept in the audit log with your name and the time.",
    )

    def clean_reason(self) -> str:
        reason = str(self.cleaned_data["reason"]).strip()
        if not reason:
            raise forms.ValidationError("A reason is required.")
        return reason
