"""Admin of special-hand schedules (seed 001, D; DESIGN item 16): staff edit them here with a
reason; every save goes through ``tables.services.special.save_schedule`` (validated, audit-
logged in TableConfigChange) and applies from the next hand dealt."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest
from django.utils import timezone

from tables.admin.filters import RealTableFilter
from tables.errors import InvalidTableConfigError
from tables.models import PowerUpRules, SpecialHandSchedule
from tables.services.conditions import OVERRIDABLE
from tables.services.powerups import validate_rules
from tables.services.special import ScheduleInput, describe_overrides, save_schedule, validate_schedule

OVERRIDES_HELP = 'A JSON object of the rules changed, e.g. {"tips": false, "max_draws": 3}. Allowed: ' + ", ".join(
    f"{key} ({label})" for key, label in OVERRIDABLE.items()
)


class SpecialHandForm(forms.ModelForm):  # type: ignore[type-arg]  # django-stubs generic
    """A schedule and the reason for the change; checked by the service before saving."""

    reason = forms.CharField(max_length=255, help_text="Why the special hands change (kept in the audit log).")

    class Meta:
        model = SpecialHandSchedule
        fields = ("table", "name", "kind", "every_n", "times", "one_in", "overrides", "is_active")
        help_texts = {"overrides": OVERRIDES_HELP}

    def as_input(self) -> ScheduleInput:
        data = self.cleaned_data
        times = data.get("times") or []
        if isinstance(times, str):
            times = json.loads(times)
        return ScheduleInput(
            name=data.get("name") or "",
            kind=data.get("kind") or "",
            every_n=data.get("every_n"),
            times=tuple(times) if isinstance(times, list) else (),
            one_in=data.get("one_in"),
            overrides=data.get("overrides") if isinstance(data.get("overrides"), dict) else {},
            is_active=bool(data.get("is_active")),
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors or data.get("table") is None:
            return data
        try:
            if not isinstance(data.get("times") or [], list):
                raise InvalidTableConfigError('times of day are a JSON list, e.g. ["12:00"]', field="times")
            validate_schedule(data["table"], self.as_input(), exclude_id=self.instance.pk)
        except InvalidTableConfigError as error:
            field = error.extra.get("field")
            self.add_error(field if field in self.fields else None, str(error))
        return data


@admin.register(SpecialHandSchedule)
class SpecialHandScheduleAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    form = SpecialHandForm
    list_display = ("name", "table", "kind", "when", "changes", "is_active")
    list_filter = ("kind", "is_active", ("table", RealTableFilter))

    @admin.display(description="When")
    def when(self, row: SpecialHandSchedule) -> str:
        if row.kind == "every_n":
            return f"every {row.every_n} hands"
        if row.kind == "times":
            return "at " + ", ".join(row.times)
        return f"1 hand in {row.one_in}"

    @admin.display(description="Changes")
    def changes(self, row: SpecialHandSchedule) -> str:
        return describe_overrides(row.overrides)

    def save_model(self, request: HttpRequest, obj: SpecialHandSchedule, form: Any, change: bool) -> None:
        saved = save_schedule(
            table_id=form.cleaned_data["table"].pk,
            schedule=form.as_input(),
            staff_user_id=int(request.user.pk or 0),
            reason=form.cleaned_data["reason"],
            now=timezone.now(),
            schedule_id=obj.pk if change else None,
        )
        obj.pk = saved.pk

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # switch a schedule off instead: its history stays readable


class PowerUpRulesForm(forms.ModelForm):  # type: ignore[type-arg]  # django-stubs generic
    class Meta:
        model = PowerUpRules
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            try:
                validate_rules({field: data[field] for field in data if field != "is_active"} | {"is_active": True})
            except InvalidTableConfigError as error:
                field = error.extra.get("field")
                self.add_error(field if field in self.fields else None, str(error))
        return data


@admin.register(PowerUpRules)
class PowerUpRulesAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    """The power-up rules (seed 001, E): one row; changes apply from the next hand dealt."""

    form = PowerUpRulesForm
    list_display = ("__str__", "is_active", "points_per_level", "max_level", "draw_every_hands", "redeal_every_hands")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not PowerUpRules.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
