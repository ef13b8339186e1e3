"""Admin of special-hand schedules (seed 001, D; DESIGN item 16): staff edit them here with a
reason; every save goes through ``tables.widerpoker.services.special.save_schedule`` (validated, audit-
logged in TableConfigChange) and applies from the next hand dealt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from config.infra.errors import DomainError
from tables.adminkit.filters import RealTableFilter
from tables.adminkit.forms import (
    ReasonForm,
    add_domain_error,
    add_override_fields,
    initial_from_overrides,
    overrides_from,
)
from tables.errors import InvalidTableConfigError
from tables.models import PowerUpRules, SpecialHandSchedule
from tables.widerpoker.services.powerups import validate_rules
from tables.widerpoker.services.special import (
    ScheduleInput,
    delete_schedule,
    describe_overrides,
    save_schedule,
    set_schedule_active,
    validate_schedule,
)
from tables.widerpoker.services.staff import POWER_UP_FIELDS, save_power_up_rules
from wallet.admin import ServiceAdmin


def staff_id(request: HttpRequest) -> int:
    """The id of the logged-in staff member (admin views require one)."""
    user_id = request.user.pk
    if not isinstance(user_id, int):
        raise PermissionDenied
    return user_id


class SpecialHandForm(forms.ModelForm):  # type: ignore[type-arg]  # django-stubs generic
    """A schedule and the reason for the change, in people's units: times of day as
    ``12:00, 18:30``, each rule the special hand changes as a field of its own (shares in
    percent, money in the table's currency, durations in seconds). The service checks it
    all before saving and its refusals show on the field they name."""

    times = forms.CharField(
        required=False,
        label="Times of day",
        help_text='For "at times of day": HH:MM in the platform\'s time zone, separated by commas, e.g. 12:00, 18:30.',
    )
    reason = forms.CharField(max_length=255, help_text="Why the special hands change (kept in the audit log).")

    class Meta:
        model = SpecialHandSchedule
        fields = ("table", "name", "kind", "every_n", "one_in", "is_active")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if "every_n" in self.fields:  # the view-only page has none of the form's fields
            self.fields["every_n"].help_text = 'For "every N hands": N, 2 or more.'
            self.fields["one_in"].help_text = 'For "1 in N hands": N, from 2.'
        if self.instance.pk:
            self.initial.update(initial_from_overrides(self.instance.overrides))
            self.initial["times"] = ", ".join(self.instance.times)

    def clean_times(self) -> list[str]:
        text = str(self.cleaned_data.get("times") or "")
        return [part.strip() for part in text.replace(";", ",").split(",") if part.strip()]

    def as_input(self) -> ScheduleInput:
        """The submitted schedule for the service (overrides in basis points, minor units)."""
        data = self.cleaned_data
        return ScheduleInput(
            name=data.get("name") or "",
            kind=data.get("kind") or "",
            every_n=data.get("every_n"),
            times=tuple(data.get("times") or ()),
            one_in=data.get("one_in"),
            overrides=overrides_from(data),
            is_active=bool(data.get("is_active")),
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors or data.get("table") is None:
            return data
        try:
            validate_schedule(data["table"], self.as_input(), exclude_id=self.instance.pk)
        except DomainError as error:
            add_domain_error(self, error)
        return data


add_override_fields(SpecialHandForm)


@admin.register(SpecialHandSchedule)
class SpecialHandScheduleAdmin(ServiceAdmin):
    """Schedules are created and changed with a reason through ``save_schedule``; paused,
    resumed and deleted with a reason by list actions (all audit-logged)."""

    form = SpecialHandForm
    list_display = ("name", "table", "kind", "when", "changes", "is_active")
    list_filter = ("kind", "is_active", ("table", RealTableFilter))
    view_fields = ("table", "name", "kind", "when", "changes", "is_active")
    actions = ("pause_schedules", "resume_schedules", "delete_schedules")

    @admin.display(description="When")
    def when(self, row: SpecialHandSchedule) -> str:
        if row.kind == "every_n":
            return f"every {row.every_n} hands"
        if row.kind == "times":
            return "at " + ", ".join(row.times)
        return f"1 hand in {row.one_in}"

    @admin.display(description="Changes")
    def changes(self, row: SpecialHandSchedule) -> str:
        return describe_overrides(row.overrides, row.table.currency)

    def get_queryset(self, request: HttpRequest) -> QuerySet[SpecialHandSchedule]:
        return super().get_queryset(request).select_related("table")

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # deleting asks for a reason: "Delete ..." below
        return actions

    def save_model(self, request: HttpRequest, obj: SpecialHandSchedule, form: Any, change: bool) -> None:
        saved = save_schedule(
            table_id=form.cleaned_data["table"].pk,
            schedule=form.as_input(),
            staff_user_id=staff_id(request),
            reason=form.cleaned_data["reason"],
            now=timezone.now(),
            schedule_id=obj.pk if change else None,
        )
        obj.pk = saved.pk

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Deleting goes through the "Delete ..." action (with a reason), never the bare page.
        return obj is None and super().has_delete_permission(request, obj)

    @admin.action(description="Pause the selected special hands", permissions=["change"])
    def pause_schedules(self, request: HttpRequest, queryset: QuerySet[SpecialHandSchedule]) -> HttpResponse | None:
        return self._with_reason(request, queryset, "pause_schedules", "Pause special hands", self._pause)

    @admin.action(description="Resume the selected special hands", permissions=["change"])
    def resume_schedules(self, request: HttpRequest, queryset: QuerySet[SpecialHandSchedule]) -> HttpResponse | None:
        return self._with_reason(request, queryset, "resume_schedules", "Resume special hands", self._resume)

    @admin.action(description="Delete the selected special hands", permissions=["delete"])
    def delete_schedules(self, request: HttpRequest, queryset: QuerySet[SpecialHandSchedule]) -> HttpResponse | None:
        return self._with_reason(request, queryset, "delete_schedules", "Delete special hands", self._delete)

    @staticmethod
    def _pause(request: HttpRequest, row: SpecialHandSchedule, reason: str) -> str | None:
        done = set_schedule_active(
            schedule_id=row.pk, is_active=False, staff_user_id=staff_id(request), reason=reason, now=timezone.now()
        )
        return "paused" if done else None

    @staticmethod
    def _resume(request: HttpRequest, row: SpecialHandSchedule, reason: str) -> str | None:
        done = set_schedule_active(
            schedule_id=row.pk, is_active=True, staff_user_id=staff_id(request), reason=reason, now=timezone.now()
        )
        return "resumed" if done else None

    @staticmethod
    def _delete(request: HttpRequest, row: SpecialHandSchedule, reason: str) -> str | None:
        delete_schedule(schedule_id=row.pk, staff_user_id=staff_id(request), reason=reason, now=timezone.now())
        return "deleted"

    def _with_reason(
        self,
        request: HttpRequest,
        queryset: QuerySet[SpecialHandSchedule],
        action: str,
        title: str,
        apply: Callable[[HttpRequest, SpecialHandSchedule, str], str | None],
    ) -> HttpResponse | None:
        """Ask for a reason, then apply the action to each schedule (the audit log keeps it)."""
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_bound and form.is_valid():
            for row in queryset:
                try:
                    done = apply(request, row, form.cleaned_data["reason"])
                except DomainError as error:
                    messages.error(request, f"{row.name}: {error} [{error.code}]")
                    continue
                if done is None:
                    messages.warning(request, f"{row.name}: nothing to do.")
                else:
                    messages.success(request, f"{row.name}: {done}.")
            return None
        return TemplateResponse(
            request,
            "admin/tables/table/action_reason.html",
            {
                **self.admin_site.each_context(request),
                "title": title,
                "explanation": "From the next hand dealt; the audit log keeps who, when, why and what it was.",
                "action": action,
                "tables": queryset,
                "form": form,
                "opts": self.model._meta,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            },
        )


class PowerUpRulesForm(forms.ModelForm):  # type: ignore[type-arg]  # django-stubs generic
    """The power-up rules and the reason for the change (kept in the audit log)."""

    reason = forms.CharField(max_length=255, help_text="Why the power-up rules change (kept in the audit log).")

    class Meta:
        model = PowerUpRules
        fields = POWER_UP_FIELDS
        labels = {"idle_minutes": "Session ends after idle (minutes)"}

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            try:
                validate_rules({field: data[field] for field in POWER_UP_FIELDS if field != "is_active"})
            except InvalidTableConfigError as error:
                add_domain_error(self, error)
        return data


@admin.register(PowerUpRules)
class PowerUpRulesAdmin(ServiceAdmin):
    """The power-up rules (seed 001, E): one row; changes apply from the next hand dealt and
    go through ``save_power_up_rules`` with a reason (audit-logged as ``powerups``)."""

    form = PowerUpRulesForm
    list_display = ("__str__", "is_active", "points_per_level", "max_level", "draw_every_hands", "redeal_every_hands")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not PowerUpRules.objects.exists() and super().has_add_permission(request)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: PowerUpRules, form: Any, change: bool) -> None:
        row = save_power_up_rules(
            values={field: form.cleaned_data[field] for field in POWER_UP_FIELDS},
            staff_user_id=staff_id(request),
            reason=form.cleaned_data["reason"],
            now=timezone.now(),
        )
        obj.pk = row.pk
