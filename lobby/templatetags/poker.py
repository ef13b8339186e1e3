"""Template filters for money and table conditions (money stays in minor units until here)."""

from __future__ import annotations

from django import template
from django.utils.translation import get_language

from wallet.memos import memo_for_people
from wallet.money import format_minor

register = template.Library()


@register.filter
def money(amount_minor: int | None, currency: str = "") -> str:
    """``{{ 12345|money:"FUN" }}`` -> ``123.45 FUN``; a missing amount (None, or a variable
    that does not resolve) shows as a dash."""
    if not isinstance(amount_minor, int):
        return "—"
    return format_minor(amount_minor, currency)


def _table_name(table_id: int) -> str | None:
    """A table's name by id, None if there is none (the hands a memo names)."""
    from tables.models import Table

    name = Table.objects.filter(pk=table_id).values_list("name", flat=True).first()
    return None if name is None else str(name)


@register.filter
def memo(stored: str) -> str:
    """``{{ transfer.memo|memo }}``: a stored English ledger memo in the active language
    (``wallet.memos.memo_for_people``), its hand named by number and table ("Prize of hand
    #1 at Speedway", not "Settlement of hand 1#1")."""
    return memo_for_people(stored, table_name=_table_name)


@register.filter
def bps_percent(bps: int) -> str:
    """Basis points as a percentage: ``500`` -> ``5%``, ``250`` -> ``2.5%``."""
    whole, rest = divmod(int(bps), 100)
    return f"{whole}%" if rest == 0 else f"{whole}{_decimal_separator()}{rest:02d}".rstrip("0") + "%"


def _decimal_separator() -> str:
    """The decimal separator of the active language (Italian writes "2,5%")."""
    return "," if (get_language() or "en").startswith("it") else "."
