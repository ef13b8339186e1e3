"""The house's pieces of staff forms, in the units a croupier reads: money in major units
and shares in percent (two decimals, "hundredths" of minor units and basis points), and the
reasons the audit log keeps. Each game's conditions forms (``tables/<game>/forms.py``) and
the admin's own forms (tables/adminkit/forms.py) are built from them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from config.infra.errors import DomainError

_CENTS = Decimal(100)


def to_hundredths(value: Decimal) -> int:
    """2-decimal major units (or percent) -> minor units (or basis points), exactly."""
    return int(value * _CENTS)


def from_hundredths(value: int) -> Decimal:
    """Minor units (or basis points) -> 2-decimal major units (or percent)."""
    return (Decimal(value) / _CENTS).quantize(Decimal("0.01"))


def creation_reason() -> forms.CharField:
    """The optional "why the table opens" field of an add form (audit-logged)."""
    return forms.CharField(
        max_length=255,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 60}),
        help_text="Why the table opens (optional): kept in the audit log with your name, the time and the conditions.",
    )


def change_reason(help_text: str = "") -> forms.CharField:
    """The mandatory reason of a change of conditions (audit-logged); see ``clean_change_reason``."""
    return forms.CharField(max_length=255, widget=forms.Textarea(attrs={"rows": 2, "cols": 60}), help_text=help_text)


def clean_change_reason(value: object) -> str:
    """A change's reason stripped; raises ValidationError when it is blank."""
    reason = str(value).strip()
    if not reason:
        raise forms.ValidationError("A reason is required.")
    return reason


class ConditionsForm(forms.Form):
    """The shape of every game's conditions form (``GameAdmin.create_form`` and
    ``conditions_form``): values in, values out, refusals shown on their field."""

    @staticmethod
    def initial_from(config: dict[str, Any]) -> dict[str, Any]:
        """Form initial values from conditions in minor units and basis points."""
        raise NotImplementedError

    def config(self) -> dict[str, Any]:
        """The cleaned conditions (minor units, basis points), keyed by the game's fields."""
        raise NotImplementedError

    def add_domain_error(self, error: DomainError) -> None:
        """Show a service's refusal on the field it names (``extra["field"]``), or on the
        whole form; with its code."""
        name = str(error.extra.get("field", ""))
        self.add_error(name if name in self.fields else None, f"{error} [{error.code}]")
