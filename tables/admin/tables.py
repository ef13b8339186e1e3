"""Admin of tables: read-only page, "Change conditions" and add pages, reasoned list actions."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html

from config.infra.errors import DomainError
from tables.adminkit.filters import practice_filter
from tables.adminkit.forms import ReasonForm
from tables.clock import recover_table
from tables.config_text import field_text, value_text
from tables.forms import ConditionsForm
from tables.games import GAMES, UnknownGameError, change_table_config, game_of
from tables.games import get as get_game
from tables.models import SeatStatus, Table, TableConfigChange
from tables.services.configuration import set_table_open


def pending_text(table: Table) -> str:
    """The changes waiting for the running hand to end, in people's units (``Rake → 10 %``,
    tables/config_text.py), as the audit log reads them."""
    return ", ".join(
        f"{field_text(field)} → {value_text(field, value, table.currency)}"
        for field, value in table.pending_changes.items()
    )


def _condition_text(table: Table, field: str) -> str:
    """One of the table's conditions in people's units (its game's ``ConditionsSpec.current``),
    "—" when its game has no such condition."""
    current = game_of(table).conditions.current(table)
    return value_text(field, current[field], table.currency) if field in current else "—"


def _staff_id(request: HttpRequest) -> int:
    """The id of the logged-in staff member (admin views require one)."""
    user_id = request.user.pk
    if not isinstance(user_id, int):
        raise PermissionDenied
    return user_id


@admin.register(Table)
class TableAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    """Tables: read-only fields, conditions changed through the "Change conditions" page,
    open/close and malfunction cancel as list actions with a reason."""

    list_display = (
        "name",
        "game",
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
    list_filter = (practice_filter(""), "game", "mode", "currency", "phase", "is_open")
    search_fields = ("name",)
    actions = ["open_tables", "close_tables", "cancel_running_hands"]
    change_form_template = "admin/tables/table/change_form.html"
    readonly_fields = (
        "name",
        "game",
        "conditions",
        "mode",
        "currency",
        "ante",
        "rake",
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

    @admin.display(description="Conditions")
    def conditions(self, table: Table) -> str:
        """The conditions in force, as its game keeps them (``ConditionsSpec.current``)."""
        current = game_of(table).conditions.current(table)
        return ", ".join(
            f"{field_text(field)} {value_text(field, value, table.currency)}" for field, value in current.items()
        )

    @admin.display(description="Ante")
    def ante(self, table: Table) -> str:
        """The game's ``ante_minor`` condition (every game has one; 0 at a Hold'em table without
        antes)."""
        return _condition_text(table, "ante_minor")

    @admin.display(description="Rake")
    def rake(self, table: Table) -> str:
        return _condition_text(table, "rake_bps")

    @admin.display(description="Players", ordering="player_count")
    def players(self, table: Table) -> int:
        return int(table.player_count)  # type: ignore[attr-defined]  # annotated in get_queryset

    @admin.display(description="Pending changes")
    def pending(self, table: Table) -> str:
        return pending_text(table)

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
            path("add-<slug:game>/", self.admin_site.admin_view(self.add_game_view), name="tables_table_add_game"),
            *super().get_urls(),
        ]

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Create a table of the house's first game (``add-<game>/`` for the others)."""
        return self.add_game_view(request, next(iter(GAMES)))

    def add_game_view(self, request: HttpRequest, game: str) -> HttpResponse:
        """Create a table of ``game`` through its ``Game.create`` (which checks the rules),
        with its add form (``GameAdmin.create_form``). An unknown game is a 404."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        try:
            spec = get_game(game)
        except UnknownGameError as unknown:
            raise Http404(str(unknown)) from unknown
        pages = spec.admin
        form: ConditionsForm = pages.create_form(
            request.POST or None, initial=pages.create_form.initial_from(dict(pages.create_initial))
        )
        if request.method == "POST" and form.is_valid():
            try:
                table = spec.create(
                    name=form.cleaned_data["name"],
                    mode=form.cleaned_data["mode"],
                    currency=form.cleaned_data["currency"],
                    staff_user_id=_staff_id(request),
                    reason=form.cleaned_data["reason"],
                    **form.config(),
                )
            except DomainError as error:
                form.add_domain_error(error)
            else:
                self.log_addition(request, table, [{"added": {}}])
                messages.success(request, f"{spec.label} table {table.name} created and open in the lobby.")
                return HttpResponseRedirect(reverse("admin:tables_table_change", args=[table.pk]))
        return self._form_page(request, title=pages.add_title, form=form, submit="Create table")

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
                .select_related("changed_by", "table")
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
        """Change a table's conditions with a reason, on its game's form
        (``GameAdmin.conditions_form``), through ``change_table_config``: each changed field
        is audit-logged; the game applies the change between hands."""
        table = get_object_or_404(Table, pk=object_id)
        if not self.has_change_permission(request, table):
            raise PermissionDenied
        spec = game_of(table)
        effective = spec.conditions.current(table) | table.pending_changes
        form_class = spec.admin.conditions_form
        form: ConditionsForm = form_class(request.POST or None, initial=form_class.initial_from(effective))
        if request.method == "POST" and form.is_valid():
            changes = {field: value for field, value in form.config().items() if effective[field] != value}
            if not changes:
                form.add_error(None, "Nothing changed.")
            else:
                try:
                    table = change_table_config(
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
                    messages.success(request, spec.admin.changed(table, changes))
                    return HttpResponseRedirect(reverse("admin:tables_table_change", args=[table.pk]))
        return self._form_page(
            request,
            title=f"Change the conditions of {table.name}",
            form=form,
            submit="Record the change",
            table=table,
            pending=pending_text(table),
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


def _set_open(request: HttpRequest, table: Table, reason: str, now: datetime, *, is_open: bool) -> str | None:
    if table.is_open == is_open:
        return None
    set_table_open(table_id=table.pk, is_open=is_open, staff_user_id=_staff_id(request), reason=reason, now=now)
    return "opened" if is_open else "closed"


def _cancel_running_hand(request: HttpRequest, table: Table, reason: str, now: datetime) -> str | None:
    """A croupier's malfunction cancel: the table's game cancels its running hand with every
    wager back (``recover_table``); None when no hand runs."""
    pages = game_of(table).admin
    running = pages.running_hand(table)
    if running is None:
        return None
    recover_table(table_id=table.pk, now=now, reason=f"Cancelled by {request.user.get_username()}: {reason}")
    return f"{running} {pages.cancelled}"
