"""The admin's own forms: the reason a staff action asks for, and the rules a special hand or a
spin jackpot changes as form fields (in people's units). Each game's conditions forms are
its own (``tables/<game>/forms.py``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from config.infra.errors import DomainError
from tables.engine.widerpoker.conditions import OVERRIDABLE
from tables.forms import from_hundredths, to_hundredths


class ReasonForm(forms.Form):
    """The reason a staff action asks for (kept in the audit trail)."""

    reason = forms.CharField(max_length=180, widget=forms.TextInput(attrs={"size": 60}))


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
            overrides[key] = to_hundredths(Decimal(value))
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
            initial[key] = from_hundredths(int(value))
        else:
            initial[key] = value
    return initial


def add_domain_error(form: forms.BaseForm, error: DomainError, *, aliases: dict[str, str] | None = None) -> None:
    """Show a service's refusal on the form field it names (``extra["field"]``, through
    ``aliases`` when the form names it otherwise), or on the whole form; with its code."""
    name = str(error.extra.get("field", ""))
    name = (aliases or {}).get(name, name)
    form.add_error(name if name in form.fields else None, f"{error} [{error.code}]")
