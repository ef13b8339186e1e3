"""Admin of tournaments: staff (Croupiers) schedule one with the form below, in people's
units (money and chips as 12.50, shares in percent, antes as "hand: ante" levels), through
``schedule_tournament``; they cancel with a reason through ``cancel_tournament`` (every
buy-in and fee returned). A scheduled tournament's conditions are not edited: cancel it and
schedule another (players registered under the conditions they read). Entries and the
standings are read-only. docs/tournaments.md."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from config.infra.errors import DomainError
from tables.adminkit.forms import ReasonForm
from tables.tournaments.errors import InvalidTournamentError
from tables.tournaments.models import Entrant, Tournament, TournamentRound
from tables.tournaments.services import cancel_tournament, schedule_tournament, validate_tournament
from tables.widerpoker.admin import staff_id
from wallet.admin import ReadOnlyAdmin, ServiceAdmin
from wallet.models import Currency
from wallet.money import format_minor, parse_minor

_MONEY = {
    "buy_in": ("buy_in_minor", "Buy-in (into the prize pool)", "0"),
    "fee": ("fee_minor", "Fee (to the house)", "0"),
    "guaranteed": ("guaranteed_minor", "Guaranteed prize pool (0: none)", "0"),
    "min_prize": ("min_prize_minor", "Smallest prize of a paid place", "0"),
    "starting_chips": ("starting_chips_minor", "Starting chips", "1500"),
    "redeal_price": ("redeal_price_minor", "Redeal price (chips)", "10"),
}
_PERCENT = {
    "paid_percent": ("paid_fraction_bps", "Paid at the end (% of entries)", "15"),
    "hand_paid_percent": ("hand_paid_fraction_bps", "Paid in each hand (% of its entries)", "15"),
    "draw_percent": ("draw_price_bps", "Each extra draw (% of the ante)", "100"),
}


def _amount(text: str) -> int:
    """Major units to minor units; "0" is zero."""
    text = str(text or "").strip()
    if text in ("", "0", "0.0", "0.00"):
        return 0
    return parse_minor(text)


def _bps(text: str) -> int:
    """A percent with at most two decimals ("15", "2.5") in basis points. Raises ValueError."""
    try:
        value = Decimal(text.strip().replace(",", ".")) * 100
    except InvalidOperation as error:
        raise ValueError(f"{text!r} is not a percent") from error
    if value != value.to_integral_value():
        raise ValueError(f"{text!r}: at most two decimals")
    return int(value)


def parse_antes(text: str) -> list[dict[str, int]]:
    """``"1: 20, 5: 40"`` (from hand: ante in chips) -> ``[{"from_hand": 1, "ante_minor":
    2000}, {"from_hand": 5, "ante_minor": 4000}]``. Raises ValueError."""
    levels = []
    for part in text.replace(";", ",").split(","):
        if not part.strip():
            continue
        hand, _, ante = part.partition(":")
        if not ante:
            raise ValueError(f"{part.strip()!r}: write 'hand: ante', e.g. 1: 20")
        levels.append({"from_hand": int(hand.strip()), "ante_minor": parse_minor(ante.strip())})
    return levels


FORM_MODEL_FIELDS = (
    "name",
    "starts_at",
    "registration_opens_at",
    "mode",
    "currency",
    "hands",
    "duration_minutes",
    "change_seconds",
    "results_seconds",
    "max_draws",
    "max_redeals",
    "redeal_seconds",
    "min_entrants",
    "max_entrants",
    "late_registration_hands",
    "max_reentries",
)
"""The model's fields the scheduling form edits as they are (the others in people's units)."""


class TournamentForm(forms.ModelForm):  # type: ignore[type-arg]  # django-stubs generic
    """A new tournament in people's units. The service checks everything before saving and
    its refusals show on the field they name."""

    antes_text = forms.CharField(
        label="Antes by level",
        initial="1: 10, 6: 20, 11: 40",
        help_text="From hand: ante in chips, separated by commas; the first level from hand 1.",
    )

    class Meta:
        model = Tournament
        fields = FORM_MODEL_FIELDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name, (_, label, initial) in {**_MONEY, **_PERCENT}.items():
            self.fields[name] = forms.CharField(label=label, initial=initial)
        if "currency" in self.fields:
            self.fields["currency"] = forms.ChoiceField(choices=Currency.choices, initial=Currency.FUN)
            self.fields["hands"].initial = 20

    def values(self) -> dict[str, Any]:
        """The schedule's values for the service (money and chips in minor units)."""
        data = self.cleaned_data
        values = {field: data.get(field) for field in FORM_MODEL_FIELDS}
        for name, (field, _, _) in _MONEY.items():
            values[field] = _amount(data.get(name, "0"))
        for name, (field, _, _) in _PERCENT.items():
            values[field] = _bps(str(data.get(name) or "0"))
        values["antes"] = parse_antes(data.get("antes_text", ""))
        return values

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            values = self.values()
        except ValueError as error:
            self.add_error(None, str(error))
            return data
        try:
            validate_tournament(Tournament(**values))
        except InvalidTournamentError as error:
            field = str(error.extra.get("field", ""))
            names = {spec[0]: name for name, spec in {**_MONEY, **_PERCENT}.items()} | {"antes": "antes_text"}
            name = names.get(field, field)
            self.add_error(name if name in self.fields else None, f"{error} [{error.code}]")
        return data


class EntrantInline(admin.TabularInline):  # type: ignore[type-arg]  # django-stubs generic
    model = Entrant
    extra = 0
    can_delete = False
    max_num = 0
    fields = ("user", "entry_number", "status", "paid_minor", "chips_minor", "rank", "place", "prize_minor")
    readonly_fields = fields
    ordering = ("place", "rank", "pk")

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Tournament)
class TournamentAdmin(ServiceAdmin):
    """Schedule (add) and cancel (a list action with a reason)."""

    form = TournamentForm
    list_display = ("name", "starts_at", "state", "mode", "price", "entries", "hands_played", "prize_pool")
    list_filter = ("state", "mode")
    actions = ("cancel_tournaments",)
    view_fields = (
        "name",
        "state",
        "starts_at",
        "mode",
        "currency",
        "buy_in_minor",
        "fee_minor",
        "guaranteed_minor",
        "starting_chips_minor",
        "hands",
        "duration_minutes",
        "antes",
        "prize_pool_minor",
        "hands_played",
        "table",
        "cancel_reason",
        "results",
    )
    inlines = (EntrantInline,)

    @admin.display(description="Buy-in + fee")
    def price(self, row: Tournament) -> str:
        return f"{format_minor(row.buy_in_minor, row.currency)} + {format_minor(row.fee_minor, row.currency)}"

    @admin.display(description="Entries")
    def entries(self, row: Tournament) -> int:
        return row.entrants.exclude(status="withdrawn").count()

    @admin.display(description="Prize pool")
    def prize_pool(self, row: Tournament) -> str:
        return format_minor(row.prize_pool_minor, row.currency)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Only the list action (cancel) changes a tournament; its page is read-only.
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None:
            return self.view_fields
        return super().get_fields(request, obj)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.view_fields if obj is not None else ()

    def get_inlines(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.inlines if obj is not None else ()

    def save_model(self, request: HttpRequest, obj: Tournament, form: Any, change: bool) -> None:
        saved = schedule_tournament(staff_user_id=staff_id(request), now=timezone.now(), **form.values())
        obj.pk = saved.pk

    @admin.action(description="Cancel the selected tournaments (refund every entry)", permissions=["change"])
    def cancel_tournaments(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> HttpResponse | None:
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            for row in queryset:
                try:
                    cancel_tournament(
                        tournament_id=row.pk,
                        reason=form.cleaned_data["reason"],
                        staff_user_id=staff_id(request),
                        now=timezone.now(),
                    )
                except DomainError as error:
                    messages.error(request, f"{row.name}: {error} [{error.code}]")
                else:
                    messages.success(request, f"{row.name}: cancelled, every entry refunded.")
            return None
        return TemplateResponse(
            request,
            "admin/tables/table/action_reason.html",
            {
                **self.admin_site.each_context(request),
                "title": "Cancel tournaments",
                "explanation": "Every buy-in and fee is returned; a running hand is cancelled.",
                "action": "cancel_tournaments",
                "tables": queryset,
                "form": form,
                "opts": self.model._meta,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )


@admin.register(TournamentRound)
class TournamentRoundAdmin(ReadOnlyAdmin):
    list_display = ("tournament", "number", "hand", "ante_minor", "recorded_at")
    list_filter = ("tournament",)
