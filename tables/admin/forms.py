"""Admin forms of a table's conditions, in the units a croupier reads (major units, percent)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from config.infra.errors import DomainError
from tables.engine.widerpoker.conditions import OVERRIDABLE
from tables.models import HOLDEM_CONFIG_FIELDS, HoldemBetting, TableMode
from wallet.models import Currency

# --- forms: conditions in the units a croupier reads -------------------------------------

_CENTS = Decimal(100)


def _to_hundredths(value: Decimal) -> int:
    """2-decimal major units (or percent) -> minor units (or basis points), exactly."""
    return int(value * _CENTS)


def _from_hundredths(value: int) -> Decimal:
    return (Decimal(value) / _CENTS).quantize(Decimal("0.01"))


# form field -> (config field, whether the value is in hundredths: money or percent)
_CONDITION_FIELDS: dict[str, tuple[str, bool]] = {
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


class TableConditionsForm(forms.Form):
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
            name: _from_hundredths(config[field]) if hundredths else config[field]
            for name, (field, hundredths) in _CONDITION_FIELDS.items()
        }

    def config(self) -> dict[str, int]:
        """The cleaned conditions as configuration fields (minor units, basis points)."""
        return {
            field: _to_hundredths(self.cleaned_data[name]) if hundredths else self.cleaned_data[name]
            for name, (field, hundredths) in _CONDITION_FIELDS.items()
        }

    def add_domain_error(self, error: DomainError) -> None:
        """Show a service's refusal on the field it names (or on the whole form)."""
        by_config = {field: name for name, (field, _) in _CONDITION_FIELDS.items()}
        name = by_config.get(str(error.extra.get("field", "")), error.extra.get("field"))
        self.add_error(name if name in self.fields else None, f"{error} [{error.code}]")


def _creation_reason() -> forms.CharField:
    return forms.CharField(
        max_length=255,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why the table opens (optional): kept in the audit log with your name, the time and the conditions.",
    )


class TableCreateForm(TableConditionsForm):
    """A new table: its name, mode and currency, then its conditions, and why (optional; the
    creation is audit-logged, tables.services.configuration.record_table_created)."""

    name = forms.CharField(max_length=60)
    mode = forms.ChoiceField(choices=TableMode.choices)
    currency = forms.ChoiceField(
        choices=Currency.choices, help_text="Fun tables play FUN chips; cash tables a cash currency."
    )
    reason = _creation_reason()
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


class ReasonForm(forms.Form):
    """The reason a staff action asks for (kept in the audit trail)."""

    reason = forms.CharField(max_length=180, widget=forms.TextInput(attrs={"size": 60}))


# --- Hold'em conditions ------------------------------------------------------------------


_HOLDEM_HUNDREDTHS = frozenset(
    {"small_blind_minor", "big_blind_minor", "big_bet_minor", "min_buy_in_minor", "max_buy_in_minor"}
    | {"rake_bps", "rake_cap_minor", "ante_minor"}
)
"""The Hold'em conditions typed in hundredths: money in major units, the rake in percent."""


def _holdem_money(label: str, *, required: bool = True, minimum: str = "0.01") -> forms.DecimalField:
    return forms.DecimalField(
        label=label, required=required, min_value=Decimal(minimum), max_digits=14, decimal_places=2
    )


class HoldemConditionsForm(forms.Form):
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
            name: _from_hundredths(value) if name in _HOLDEM_HUNDREDTHS and value is not None else value
            for name, value in config.items()
        }

    def config(self) -> dict[str, Any]:
        """The cleaned conditions, keyed by HOLDEM_CONFIG_FIELDS (minor units, basis points)."""
        values = {field: self.cleaned_data[field] for field in HOLDEM_CONFIG_FIELDS}
        for name in _HOLDEM_HUNDREDTHS:
            if values.get(name) is not None:
                values[name] = _to_hundredths(values[name])
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
    reason = _creation_reason()
    field_order = ["name", "mode", "currency"]


class ChangeHoldemConditionsForm(HoldemConditionsForm):
    """New Hold'em conditions and the mandatory reason for the audit log."""

    reason = forms.CharField(max_length=255, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}))

    def clean_reason(self) -> str:
        reason = str(self.cleaned_data["reason"]).strip()
        if not reason:
            raise forms.ValidationError("A reason is required.")
        return reason


# --- rules a special hand or a spin jackpot changes, as form fields -----------------------

_SWITCH = [("", "unchanged"), ("on", "shown"), ("off", "hidden")]


def override_fields() -> dict[str, forms.Field]:
    """One optional form field per rule a special hand or a spin jackpot may change
    (``tables.engine.widerpoker.conditions.OVERRIDABLE``), named after the rule, in people's units:
    shares in percent, money in the currency's major units, durations in seconds; tips and
    the probability panel as shown / hidden / unchanged. Empty means unchanged."""
    fields: dict[str, forms.Field] = {}
    for key, label in OVERRIDABLE.items():
        text = label[0].upper() + label[1:]
        if key in ("tips", "panel"):
            fields[key] = forms.ChoiceField(label=text, choices=_SWITCH, required=False)
        elif key.endswith("_bps"):
            fields[key] = forms.DecimalField(
                label=text, required=False, min_value=0, max_digits=7, decimal_places=2, help_text="e.g. 50 for half"
            )
        elif key.endswith("_minor"):
            fields[key] = forms.DecimalField(
                label=text, required=False, min_value=0, max_digits=14, decimal_places=2, help_text="e.g. 2.00"
            )
        else:
            fields[key] = forms.IntegerField(label=text, required=False, min_value=0)
    return fields


def add_override_fields(form_class: type[forms.BaseForm], *, label_prefix: str = "") -> None:
    """Declare ``override_fields()`` on ``form_class`` (before its ``reason``), so the admin,
    which lays out a form's declared fields, shows them."""
    fields = {}
    for name, field in override_fields().items():
        field.label = f"{label_prefix}{field.label}"
        fields[name] = field
    for attribute in ("base_fields", "declared_fields"):
        current = dict(getattr(form_class, attribute))
        reason = current.pop("reason", None)
        merged = {**current, **fields, **({"reason": reason} if reason is not None else {})}
        setattr(form_class, attribute, merged)


def overrides_from(cleaned: dict[str, Any]) -> dict[str, Any]:
    """The overrides mapping (basis points, minor units, seconds) of the filled-in fields."""
    overrides: dict[str, Any] = {}
    for key in OVERRIDABLE:
        value = cleaned.get(key)
        if value is None or value == "":
            continue
        if key in ("tips", "panel"):
            overrides[key] = value == "on"
        elif key.endswith(("_bps", "_minor")):
            overrides[key] = _to_hundredths(Decimal(value))
        else:
            overrides[key] = int(value)
    return overrides


def initial_from_overrides(overrides: dict[str, Any]) -> dict[str, Any]:
    """Form initial values of stored overrides (the reverse of ``overrides_from``)."""
    initial: dict[str, Any] = {}
    for key, value in (overrides or {}).items():
        if key in ("tips", "panel"):
            initial[key] = "on" if value else "off"
        elif key.endswith(("_bps", "_minor")):
            initial[key] = _from_hundredths(int(value))
        else:
            initial[key] = value
    return initial


def add_domain_error(form: forms.BaseForm, error: DomainError, *, aliases: dict[str, str] | None = None) -> None:
    """Show a service's refusal on the form field it names (``extra["field"]``, through
    ``aliases`` when the form names it otherwise), or on the whole form; with its code."""
    name = str(error.extra.get("field", ""))
    name = (aliases or {}).get(name, name)
    form.add_error(name if name in form.fields else None, f"{error} [{error.code}]")
