"""Admin of jackpots: kind, currency, contribution, reset, spin odds, the tables they feed,
their live balance and their history of wins and resets. Money only moves through
``jackpots.services``; this page configures, and every save is in the admin's log."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db import transaction
from django.http import HttpRequest

from jackpots import services
from jackpots.errors import InvalidJackpotError
from jackpots.models import Jackpot, JackpotEvent, JackpotKind
from tables.models import Table
from wallet.errors import DomainError
from wallet.money import format_minor


class JackpotForm(forms.ModelForm):  # type: ignore[type-arg]  # django-stubs generic
    """A jackpot and the tables it feeds, checked as a whole: the jackpot's own ranges, and
    for every table its currency, one jackpot per kind, at most 10% together."""

    tables = forms.ModelMultipleChoiceField(
        # Practice games (private play-chip tables, seed 004) feed no jackpot.
        queryset=Table.objects.filter(practice__isnull=True),
        required=False,
        help_text="Tables that feed this jackpot and can win it.",
    )

    class Meta:
        model = Jackpot
        fields = (
            "name",
            "kind",
            "currency",
            "contribution_bps",
            "reset_minor",
            "one_in",
            "spin_overrides",
            "is_active",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["tables"].initial = list(self.instance.tables.all())

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        kind = data.get("kind") or self.instance.kind
        currency = data.get("currency") or self.instance.currency
        one_in = data.get("one_in")
        if kind and kind != JackpotKind.ROYAL and one_in is None:
            one_in = {"gold": 6000, "silver": 300, "bronze": 30}[kind]
            data["one_in"] = one_in
        try:
            services.validate_jackpot(
                kind=kind,
                currency=currency,
                contribution_bps=int(data.get("contribution_bps") or 0),
                reset_minor=int(data.get("reset_minor") or 0),
                one_in=one_in,
            )
            from tables.services.conditions import validate_overrides

            data["spin_overrides"] = validate_overrides(data.get("spin_overrides") or {})
            if kind == JackpotKind.ROYAL and data["spin_overrides"]:
                raise InvalidJackpotError(
                    "only spin jackpots change the rules of the hand they are drawn in", field="spin_overrides"
                )
            candidate = Jackpot(
                pk=self.instance.pk,
                name=data.get("name") or self.instance.name,
                kind=kind,
                currency=currency,
                contribution_bps=int(data.get("contribution_bps") or 0),
                one_in=one_in,
            )
            for table in data.get("tables") or []:
                others = [j for j in table.jackpots.filter(is_active=True) if j.pk != self.instance.pk]
                services.validate_table_jackpots(table_currency=table.currency, jackpots=[*others, candidate])
        except InvalidJackpotError as error:
            field = error.extra.get("field")
            self.add_error(field if field in self.fields else None, str(error))
        except DomainError as error:  # the overrides' own validation
            self.add_error("spin_overrides", str(error))
        return data


@admin.register(Jackpot)
class JackpotAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    form = JackpotForm
    list_display = ("name", "kind", "currency", "contribution", "odds", "balance", "reset", "table_count", "is_active")
    list_filter = ("kind", "currency", "is_active")
    search_fields = ("name",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        """Kind and currency are fixed once the jackpot exists: its balance is in that currency."""
        return ("kind", "currency") if obj is not None else ()

    @admin.display(description="Contribution")
    def contribution(self, jackpot: Jackpot) -> str:
        return f"{jackpot.contribution_bps / 100:g}% of the gross"

    @admin.display(description="Drawn")
    def odds(self, jackpot: Jackpot) -> str:
        return "by a royal flush" if jackpot.kind == JackpotKind.ROYAL else f"1 in {jackpot.one_in:,} hands"

    @admin.display(description="Balance")
    def balance(self, jackpot: Jackpot) -> str:
        return format_minor(services.jackpot_balances([jackpot.pk]).get(jackpot.pk, 0), jackpot.currency)

    @admin.display(description="Reset to")
    def reset(self, jackpot: Jackpot) -> str:
        return format_minor(jackpot.reset_minor, jackpot.currency)

    @admin.display(description="Tables")
    def table_count(self, jackpot: Jackpot) -> int:
        return jackpot.tables.count()

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        with transaction.atomic():
            form.instance.tables.set(form.cleaned_data.get("tables") or [])


@admin.register(JackpotEvent)
class JackpotEventAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    """Wins, resets and house funding: read-only, as the ledger recorded them."""

    list_display = ("created_at", "jackpot", "kind", "amount", "hand_id", "transfer_reference")
    list_filter = ("kind", "jackpot")

    @admin.display(description="Amount")
    def amount(self, event: JackpotEvent) -> str:
        return format_minor(event.amount_minor, event.jackpot.currency)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
