"""Admin of tables, seats, hands, entries and the configuration audit log.

The admin is an adapter: every change goes through a service. A table's conditions change
only on the "Change conditions" page, with a mandatory reason, through
``change_table_config`` (audit-logged; a running hand finishes under the old conditions).
Opening, closing and cancelling a running hand (malfunction, with full refunds) are list
actions that ask for a reason. Hands, entries, seats and the audit log are read-only.
Staff with only view permissions (auditors) see everything and change nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html

from tables import services
from tables.engine import HandCategory
from tables.models import (
    Entry,
    Hand,
    HandStatus,
    Seat,
    SeatStatus,
    Table,
    TableConfigChange,
    TableMode,
)
from wallet.errors import DomainError
from wallet.models import Currency
from wallet.money import format_minor

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
    "draw_price": ("draw_price_minor", True),
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
    draw_price = _money_field("Draw price", "Each draw after the first (included in the ante).")
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


class TableCreateForm(TableConditionsForm):
    """A new table: its name, mode and currency, then its conditions."""

    name = forms.CharField(max_length=60)
    mode = forms.ChoiceField(choices=TableMode.choices)
    currency = forms.ChoiceField(
        choices=Currency.choices, help_text="Fun tables play FUN chips; cash tables a cash currency."
    )
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


# --- admin classes ------------------------------------------------------------------------


class ReadOnlyModelAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic over several models
    """Rows written only by services: staff read them here, nobody edits them."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


def _staff_id(request: HttpRequest) -> int:
    """The id of the logged-in staff member (admin views require one)."""
    user_id = request.user.pk
    if not isinstance(user_id, int):
        raise PermissionDenied
    return user_id


def _money(amount_minor: int | None, currency: str) -> str:
    return "—" if amount_minor is None else format_minor(amount_minor, currency)


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    """Tables: read-only fields, conditions changed through the "Change conditions" page,
    open/close and malfunction cancel as list actions with a reason."""

    list_display = (
        "name",
        "mode",
        "currency",
        "ante",
        "rake",
        "phase",
        "players",
        "hands_dealt",
        "is_open",
        "pending",
    )
    list_filter = ("mode", "currency", "phase", "is_open")
    search_fields = ("name",)
    actions = ["open_tables", "close_tables", "cancel_running_hands"]
    change_form_template = "admin/tables/table/change_form.html"
    readonly_fields = (
        "name",
        "mode",
        "currency",
        "ante",
        "rake",
        "draw_price",
        "max_draws",
        "redeal_price",
        "max_redeals",
        "redeal_seconds",
        "change_seconds",
        "results_seconds",
        "paid_fraction",
        "min_prize",
        "is_open",
        "phase",
        "phase_deadline",
        "version",
        "current_hand_link",
        "hands_dealt",
        "pending",
        "created_at",
    )
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[Table]:
        tables: QuerySet[Table] = super().get_queryset(request)
        return tables.annotate(player_count=Count("seats", filter=~Q(seats__status=SeatStatus.LEFT)))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # hands keep their table for good

    @admin.display(description="Ante", ordering="ante_minor")
    def ante(self, table: Table) -> str:
        return format_minor(table.ante_minor, table.currency)

    @admin.display(description="Rake", ordering="rake_bps")
    def rake(self, table: Table) -> str:
        return f"{_from_hundredths(table.rake_bps)}%"

    @admin.display(description="Draw price")
    def draw_price(self, table: Table) -> str:
        return format_minor(table.draw_price_minor, table.currency)

    @admin.display(description="Redeal price")
    def redeal_price(self, table: Table) -> str:
        return format_minor(table.redeal_price_minor, table.currency)

    @admin.display(description="Paid entries")
    def paid_fraction(self, table: Table) -> str:
        return f"{_from_hundredths(table.paid_fraction_bps)}%"

    @admin.display(description="Minimum prize")
    def min_prize(self, table: Table) -> str:
        return format_minor(table.min_prize_minor, table.currency)

    @admin.display(description="Players", ordering="player_count")
    def players(self, table: Table) -> int:
        return int(table.player_count)  # type: ignore[attr-defined]  # annotated in get_queryset

    @admin.display(description="Pending changes")
    def pending(self, table: Table) -> str:
        return ", ".join(f"{field} → {value}" for field, value in table.pending_changes.items())

    @admin.display(description="Current hand")
    def current_hand_link(self, table: Table) -> str:
        if table.current_hand_id is None:
            return "—"
        return format_html(
            '<a href="{}">hand {}</a>',
            reverse("admin:tables_hand_change", args=[table.current_hand_id]),
            table.current_hand_id,
        )

    # --- pages ---

    def get_urls(self) -> list[URLPattern]:
        return [
            path(
                "<int:object_id>/conditions/",
                self.admin_site.admin_view(self.conditions_view),
                name="tables_table_conditions",
            ),
            *super().get_urls(),
        ]

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Create a table through ``create_table`` (which checks the rules)."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        defaults = Table(ante_minor=100, draw_price_minor=50, redeal_price_minor=80)
        form = TableCreateForm(
            request.POST or None,
            initial=TableConditionsForm.initial_from(defaults.config_snapshot()),
        )
        if request.method == "POST" and form.is_valid():
            try:
                table = services.create_table(
                    name=form.cleaned_data["name"],
                    mode=form.cleaned_data["mode"],
                    currency=form.cleaned_data["currency"],
                    **form.config(),
                )
            except DomainError as error:
                form.add_domain_error(error)
            else:
                self.log_addition(request, table, [{"added": {}}])
                messages.success(request, f"Table {table.name} created and open in the lobby.")
                return HttpResponseRedirect(reverse("admin:tables_table_change", args=[table.pk]))
        return self._form_page(request, title="Add table", form=form, submit="Create table")

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """The table's read-only page with a "Change conditions" link and its audit log."""
        extra_context = {
            **(extra_context or {}),
            "show_save": False,
            "show_save_and_continue": False,
            "show_save_and_add_another": False,
            "show_delete": False,
            "recent_changes": (
                TableConfigChange.objects.filter(table_id=int(object_id))
                .select_related("changed_by")
                .order_by("-changed_at", "-id")[:20]
                if object_id.isdigit()
                else []
            ),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def save_model(self, request: HttpRequest, obj: Table, form: Any, change: bool) -> None:
        """Nothing on the change page is editable; conditions change on their own page, so
        this never writes a table (a stale save would overwrite the clock's state)."""

    def conditions_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Change a table's conditions with a reason (``change_table_config``): each changed
        field is audit-logged; a running hand finishes first, then the table restarts."""
        table = get_object_or_404(Table, pk=object_id)
        if not self.has_change_permission(request, table):
            raise PermissionDenied
        effective = {field: getattr(table, field) for field, _ in _CONDITION_FIELDS.values()} | table.pending_changes
        form = ChangeConditionsForm(request.POST or None, initial=TableConditionsForm.initial_from(effective))
        if request.method == "POST" and form.is_valid():
            changes = {field: value for field, value in form.config().items() if effective[field] != value}
            if not changes:
                form.add_error(None, "Nothing changed.")
            else:
                try:
                    table = services.change_table_config(
                        table_id=table.pk,
                        changes=changes,
                        staff_user_id=_staff_id(request),
                        reason=form.cleaned_data["reason"],
                        now=timezone.now(),
                    )
                except DomainError as error:
                    form.add_domain_error(error)
                else:
                    self.log_change(
                        request, table, f"Conditions changed ({', '.join(changes)}): {form.cleaned_data['reason']}"
                    )
                    messages.success(request, _conditions_message(table, changes))
                    return HttpResponseRedirect(reverse("admin:tables_table_change", args=[table.pk]))
        return self._form_page(
            request,
            title=f"Change the conditions of {table.name}",
            form=form,
            submit="Record the change",
            table=table,
        )

    def _form_page(
        self, request: HttpRequest, *, title: str, form: forms.Form, submit: str, **context: Any
    ) -> TemplateResponse:
        return TemplateResponse(
            request,
            "admin/tables/table/form_page.html",
            {
                **self.admin_site.each_context(request),
                "title": title,
                "form": form,
                "submit": submit,
                "opts": self.model._meta,
                **context,
            },
        )

    # --- actions ---

    @admin.action(description="Open the selected tables", permissions=["change"])
    def open_tables(self, request: HttpRequest, queryset: QuerySet[Table]) -> HttpResponse | None:
        return self._with_reason(
            request,
            queryset,
            action="open_tables",
            title="Open tables",
            explanation="The tables appear in the lobby and deal as soon as two players sit.",
            apply=lambda table, reason, now: _set_open(request, table, reason, now, is_open=True),
        )

    @admin.action(description="Close the selected tables", permissions=["change"])
    def close_tables(self, request: HttpRequest, queryset: QuerySet[Table]) -> HttpResponse | None:
        return self._with_reason(
            request,
            queryset,
            action="close_tables",
            title="Close tables",
            explanation="A running hand finishes normally; then the table deals no more hands.",
            apply=lambda table, reason, now: _set_open(request, table, reason, now, is_open=False),
        )

    @admin.action(
        description="Cancel the running hand and refund every wager (malfunction)",
        permissions=["change"],
    )
    def cancel_running_hands(self, request: HttpRequest, queryset: QuerySet[Table]) -> HttpResponse | None:
        return self._with_reason(
            request,
            queryset,
            action="cancel_running_hands",
            title="Cancel running hands",
            explanation=(
                "For a malfunction only (rules, Notes 3): the hand in its change phase is "
                "cancelled, every ante, draw and redeal paid in it is refunded in full, and the "
                "table pauses a few seconds before dealing again."
            ),
            apply=lambda table, reason, now: _cancel_running_hand(request, table, reason, now),
        )

    def _with_reason(
        self,
        request: HttpRequest,
        queryset: QuerySet[Table],
        *,
        action: str,
        title: str,
        explanation: str,
        apply: Callable[[Table, str, datetime], str | None],
    ) -> HttpResponse | None:
        """Ask for a reason, then apply the action to each table. ``apply`` returns a
        message to log (None when there was nothing to do); domain errors are shown."""
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            reason = form.cleaned_data["reason"]
            for table in queryset:
                try:
                    done = apply(table, reason, timezone.now())
                except DomainError as error:
                    messages.error(request, f"{table.name}: {error} [{error.code}]")
                    continue
                if done is None:
                    messages.warning(request, f"{table.name}: nothing to do.")
                else:
                    self.log_change(request, table, f"{done}: {reason}")
                    messages.success(request, f"{table.name}: {done}.")
            return None
        return TemplateResponse(
            request,
            "admin/tables/table/action_reason.html",
            {
                **self.admin_site.each_context(request),
                "title": title,
                "explanation": explanation,
                "action": action,
                "tables": queryset,
                "form": form,
                "opts": self.model._meta,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )


def _conditions_message(table: Table, changes: dict[str, int]) -> str:
    if table.pending_changes:
        return (
            f"Recorded {len(changes)} change(s) to {table.name}. A hand is running: it finishes "
            "under the old conditions, then the table restarts with the new ones."
        )
    return f"Recorded {len(changes)} change(s) to {table.name}; the table restarted with them."


def _set_open(request: HttpRequest, table: Table, reason: str, now: datetime, *, is_open: bool) -> str | None:
    if table.is_open == is_open:
        return None
    services.set_table_open(
        table_id=table.pk, is_open=is_open, staff_user_id=_staff_id(request), reason=reason, now=now
    )
    return "opened" if is_open else "closed"


def _cancel_running_hand(request: HttpRequest, table: Table, reason: str, now: datetime) -> str | None:
    hand = table.current_hand
    if hand is None or hand.status != HandStatus.CHANGE:
        return None
    services.recover_table(
        table_id=table.pk,
        now=now,
        reason=f"Cancelled by {request.user.get_username()}: {reason}",
    )
    return f"hand #{hand.number} cancelled and refunded"


@admin.register(Seat)
class SeatAdmin(ReadOnlyModelAdmin):
    list_display = (
        "table",
        "user",
        "status",
        "status_reason",
        "joined_at",
        "last_seen_at",
        "ws_connections",
    )
    list_filter = ("status", "table")
    search_fields = ("user__username", "table__name")
    list_select_related = ("table", "user")


@admin.register(Hand)
class HandAdmin(ReadOnlyModelAdmin):
    """Hands, read-only. The server seed and change keys show only once the hand is over;
    the history page has the whole hand and its verification."""

    list_display = (
        "table",
        "number",
        "status",
        "started_at",
        "entry_count",
        "gross",
        "rake",
        "pool",
        "history_link",
    )
    list_filter = ("status", "table")
    list_select_related = ("table",)
    date_hierarchy = "started_at"
    search_fields = ("table__name", "commitment")
    fields = (
        "table",
        "number",
        "status",
        "history_link",
        "started_at",
        "change_deadline",
        "redeal_deadline",
        "settled_at",
        "config",
        "commitment",
        "revealed_seed",
        "revealed_change_keys",
        "board",
        "entry_count",
        "redeal_count",
        "antes_minor",
        "draws_minor",
        "redeals_minor",
        "gross_minor",
        "rake_minor",
        "carry_in_minor",
        "pool_minor",
        "breakage_minor",
        "cancel_reason",
    )
    readonly_fields = fields

    @admin.display(description="Gross", ordering="gross_minor")
    def gross(self, hand: Hand) -> str:
        return _money(hand.gross_minor, hand.currency)

    @admin.display(description="Rake", ordering="rake_minor")
    def rake(self, hand: Hand) -> str:
        return _money(hand.rake_minor if hand.status == HandStatus.SETTLED else None, hand.currency)

    @admin.display(description="Pool", ordering="pool_minor")
    def pool(self, hand: Hand) -> str:
        return _money(hand.pool_minor if hand.status == HandStatus.SETTLED else None, hand.currency)

    @admin.display(description="Server seed")
    def revealed_seed(self, hand: Hand) -> str:
        return hand.server_seed if hand.is_terminal else "secret until the hand is over"

    @admin.display(description="Change keys")
    def revealed_change_keys(self, hand: Hand) -> str:
        if not hand.is_terminal:
            return "secret until the hand is over"
        return " · ".join("".join(str(d) for d in key) for key in hand.change_keys or [])

    @admin.display(description="History")
    def history_link(self, hand: Hand) -> str:
        return format_html(
            '<a href="{}">whole hand and verification</a>',
            reverse("handhistory:hand", args=[hand.pk]),
        )


@admin.register(Entry)
class EntryAdmin(ReadOnlyModelAdmin):
    list_display = (
        "hand",
        "user",
        "join_order",
        "combination",
        "draws_bought",
        "paid",
        "final_hand",
        "place",
        "prize",
    )
    list_filter = ("hand__table", "hand__status")
    list_select_related = ("hand", "user")
    search_fields = ("user__username",)
    fields = (
        "hand_link",
        "user",
        "join_order",
        "initial_combination",
        "combination",
        "redeals",
        "hold_mask",
        "hold_used",
        "draws_bought",
        "paid_minor",
        "connected_at_end",
        "draw_strengths",
        "best_draw",
        "strength",
        "category",
        "place",
        "prize_minor",
    )
    readonly_fields = fields

    @admin.display(description="Hand")
    def hand_link(self, entry: Entry) -> str:
        return format_html('<a href="{}">{}</a>', reverse("handhistory:hand", args=[entry.hand_id]), entry.hand)

    @admin.display(description="Paid", ordering="paid_minor")
    def paid(self, entry: Entry) -> str:
        return format_minor(entry.paid_minor, entry.hand.currency)

    @admin.display(description="Prize", ordering="prize_minor")
    def prize(self, entry: Entry) -> str:
        return format_minor(entry.prize_minor, entry.hand.currency)

    @admin.display(description="Final hand", ordering="strength")
    def final_hand(self, entry: Entry) -> str:
        return "—" if entry.category is None else HandCategory(entry.category).label


@admin.register(TableConfigChange)
class TableConfigChangeAdmin(ReadOnlyModelAdmin):
    """The audit log of table configuration changes (who, when, old, new, why)."""

    list_display = (
        "changed_at",
        "table",
        "field",
        "old_value",
        "new_value",
        "changed_by",
        "reason",
        "applied_at",
    )
    list_filter = ("table", "field")
    list_select_related = ("table", "changed_by")
    search_fields = ("reason", "table__name", "changed_by__username")
    date_hierarchy = "changed_at"
