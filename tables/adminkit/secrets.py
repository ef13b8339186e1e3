"""Secrets in the admin: no lookup, search, ordering or page reveals a running hand's secrets.

Audit finding F2 (security audit 2026-11-23): the admin accepted lookups on a model's own
fields, so ``?server_seed__startswith=<prefix>`` on the hand changelist told a read-only
auditor, one hex digit at a time, the seed of a hand still in its change phase, and from the
seed all five change keys. DESIGN "Fair without trust": secrets are hidden from staff as
much as from players until the hand is over.

What is secret, and until when:

- ``Hand.server_seed`` and ``Hand.change_keys`` (and everything derived from them) until the
  hand is terminal (settled or cancelled);
- a player's cards, that is ``Entry.initial_combination``, ``combination``, ``redeals`` and
  the choice ``hold_mask``, until the hand's change phase has ended;
- a Hold'em hand's ``server_seed`` and ``chain_seed`` (they give every hole card and the
  board) until the hand is over. ``HoldemHandAdmin`` (tables/holdem/admin.py) shows them
  through ``reveal_*`` methods only, and lookups through a relation are checked alike.

The admin never filters, searches or orders by these fields, whatever the hand's state:
a filter is an oracle even when its column is masked. ``SecretFieldsAdmin`` refuses such
lookups (Django answers 400), the ``secret_fields_admin`` system check refuses an admin
that lists one in ``search_fields``, ``list_filter``, ``ordering``, ``sortable_by`` or
``date_hierarchy``, and pages show the values only through ``reveal_*`` display methods.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.contrib import admin
from django.core.checks import CheckMessage, Error, register
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model
from django.http import HttpRequest

from tables.models import Entry, Hand, HoldemHand, SeedChain

SECRET_FIELDS: dict[type[Model], frozenset[str]] = {
    Hand: frozenset({"server_seed", "chain_seed", "change_keys"}),
    SeedChain: frozenset({"terminal_seed"}),
    Entry: frozenset({"initial_combination", "combination", "redeals", "hold_mask"}),
    HoldemHand: frozenset({"server_seed", "chain_seed"}),
}
"""Per model, the fields that must never be a lookup, a search, an ordering or a raw column."""

HIDDEN_UNTIL_OVER = "secret until the hand is over"
HIDDEN_UNTIL_CHANGE_ENDS = "hidden until the change phase ends"


def lookup_touches_secret(model: type[Model], lookup: str) -> bool:
    """Whether a lookup path (``"hand__server_seed__startswith"``, ``"-combination"``) reads a
    secret field of ``model`` or of a model it reaches through relations.

    >>> lookup_touches_secret(Hand, "server_seed__lt")
    True
    >>> lookup_touches_secret(Entry, "hand__table__name__icontains")
    False
    """
    current: type[Model] | None = model
    for part in lookup.lstrip("-").split("__"):
        if current is None:
            return False
        if part in SECRET_FIELDS.get(current, frozenset()):
            return True
        try:
            field = current._meta.get_field(part)
        except FieldDoesNotExist:
            return False
        related = getattr(field, "related_model", None)
        current = related if isinstance(related, type) and issubclass(related, Model) else None
    return False


def cards_visible_to_staff(hand: Hand, now: datetime | None = None) -> bool:
    """Whether staff may see players' cards and choices in ``hand``: once its change phase has
    ended (the deadline passed, or the hand is settled or cancelled)."""
    return hand.change_phase_over(now)


class SecretFieldsAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic over Hand and Entry
    """A ModelAdmin that refuses lookups and orderings on secret fields (module docstring).

    Django turns a refused lookup into ``DisallowedModelAdminLookup``: a 400 response.
    """

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        if lookup_touches_secret(self.model, lookup):
            return False
        return bool(super().lookup_allowed(lookup, value, request))

    def get_sortable_by(self, request: HttpRequest) -> Any:
        sortable = super().get_sortable_by(request)
        return [name for name in sortable if not (isinstance(name, str) and lookup_touches_secret(self.model, name))]


def _named_lookups(model_admin: admin.ModelAdmin) -> Iterable[tuple[str, str]]:  # type: ignore[type-arg]
    for name in model_admin.search_fields or ():
        yield "search_fields", str(name).lstrip("^=@")
    for item in model_admin.list_filter or ():
        if isinstance(item, str):
            yield "list_filter", item
        elif isinstance(item, tuple | list) and item and isinstance(item[0], str):
            yield "list_filter", item[0]
    for name in model_admin.ordering or ():
        if isinstance(name, str):
            yield "ordering", name
    for sortable in model_admin.sortable_by or ():
        if isinstance(sortable, str):
            yield "sortable_by", sortable
    if model_admin.date_hierarchy:
        yield "date_hierarchy", model_admin.date_hierarchy
    for column in model_admin.list_display:
        if isinstance(column, str) and column in SECRET_FIELDS.get(model_admin.model, frozenset()):
            yield "list_display", column


@register()
def secret_fields_admin(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """System check: no registered ModelAdmin searches, filters, orders or lists a secret field."""
    errors: list[CheckMessage] = []
    for model, model_admin in admin.site._registry.items():
        for option, lookup in _named_lookups(model_admin):
            if lookup_touches_secret(model, lookup):
                errors.append(
                    Error(
                        f"{type(model_admin).__name__}.{option} uses the secret field path {lookup!r}",
                        hint="Secrets stay out of admin lookups (tables/adminkit/secrets.py).",
                        obj=model_admin,
                        id="tables.E001",
                    )
                )
        secret_here = SECRET_FIELDS.get(model, frozenset())
        if secret_here and not isinstance(model_admin, SecretFieldsAdmin):
            errors.append(
                Error(
                    f"{type(model_admin).__name__} administers {model.__name__}, which has secret fields, "
                    "without SecretFieldsAdmin",
                    obj=model_admin,
                    id="tables.E002",
                )
            )
        for name in model_admin.fields or ():
            if isinstance(name, str) and name in secret_here:
                errors.append(
                    Error(
                        f"{type(model_admin).__name__}.fields shows the secret field {name!r} raw",
                        hint="Show it through a reveal_* display method that masks it while secret.",
                        obj=model_admin,
                        id="tables.E003",
                    )
                )
    return errors
