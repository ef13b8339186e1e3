"""Admin list filters that keep practice games apart from the operator's figures.

Practice games (BigHoldem practice, seed 004; ``PracticeGame``) are private tables of play
chips. Staff lists show them only when asked: the "Practice game" filter defaults to "No",
and the "Table" filters list real tables only (a practice table's rows are one click on
"Practice game: Yes" away).
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from tables.config_text import field_text
from tables.models import Table, TableConfigChange

PRACTICE_YES = "yes"
PRACTICE_ALL = "all"


def practice_filter(table_path: str) -> type[admin.SimpleListFilter]:
    """A "Practice game" filter for rows that reach their table through ``table_path``
    (``""`` for tables themselves, ``"table"``, ``"hand__table"``): No (the default: real
    tables only), Yes (practice games only), All."""
    lookup = f"{table_path}__practice__isnull" if table_path else "practice__isnull"

    class PracticeFilter(admin.SimpleListFilter):
        title = "practice game"
        parameter_name = "practice"

        def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
            return [(PRACTICE_YES, "Yes"), (PRACTICE_ALL, "All")]

        def choices(self, changelist: Any) -> Any:
            yield {
                "selected": self.value() is None,
                "query_string": changelist.get_query_string(remove=[self.parameter_name]),
                "display": "No",
            }
            for value, label in self.lookup_choices:
                yield {
                    "selected": self.value() == value,
                    "query_string": changelist.get_query_string({self.parameter_name: value}),
                    "display": label,
                }

        def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
            value = self.value()
            if value == PRACTICE_ALL:
                return queryset
            return queryset.filter(**{lookup: value != PRACTICE_YES})

    PracticeFilter.__name__ = f"PracticeFilter_{table_path or 'table'}"
    return PracticeFilter


class RealTableFilter(admin.RelatedFieldListFilter):
    """A table filter that lists the operator's tables only, not practice games."""

    def field_choices(self, field: Any, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        ordering = self.field_admin_ordering(field, request, model_admin) or ("name",)
        return [
            (str(table.pk), str(table))
            for table in Table.objects.filter(practice__isnull=True).order_by(*ordering).only("pk", "name")
        ]


class ChangedFieldFilter(admin.SimpleListFilter):
    """The configuration audit log filtered by what changed, named as staff read it ("Rake",
    not ``rake_bps``: tables.config_text.field_text)."""

    title = "what changed"
    parameter_name = "field"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        fields = TableConfigChange.objects.order_by("field").values_list("field", flat=True).distinct()
        return [(field, field_text(field)) for field in fields]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset.filter(field=value) if value else queryset
