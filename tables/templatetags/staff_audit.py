"""Template filters of the configuration audit log in people's units (``tables.config_text``)."""

from __future__ import annotations

from django import template

from tables.config_text import field_text, value_text
from tables.models import TableConfigChange

register = template.Library()


def _currency(change: TableConfigChange) -> str | None:
    return change.table.currency if change.table is not None else None


@register.filter
def change_field(change: TableConfigChange) -> str:
    """What the row changed, in words (``Rake``, ``Jackpot #3``)."""
    return field_text(change.field)


@register.filter
def change_old(change: TableConfigChange) -> str:
    """The value before, in people's units."""
    return value_text(change.field, change.old_value, _currency(change))


@register.filter
def change_new(change: TableConfigChange) -> str:
    """The value after, in people's units."""
    return value_text(change.field, change.new_value, _currency(change))
