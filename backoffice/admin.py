"""Admin-site customisations: the back-office name and a "Reports" box on the admin home; the
review of automated play (``PlayPatternAdmin``); and, registered by importing them, the wallet's
and the jackpots' pages that reach the apps above them (``admin_wallet``, ``admin_jackpots``)."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from backoffice import admin_jackpots, admin_wallet, services
from backoffice.automation import FLAGS, REACTION_BUCKETS_MS
from backoffice.models import PlayPattern
from config.infra.errors import DomainError
from wallet.models import Suspension

admin.site.site_header = "WiderPoker back-office"
admin.site.site_title = "WiderPoker back-office"
admin.site.index_title = "Tables, wallets and reports"
admin.site.index_template = "backoffice/admin_index.html"

# The other apps' admin pages that reach above their app (issue 21), registered on import.
REGISTERED_HERE = (admin_wallet.AccountAdmin, admin_wallet.SuspensionAdmin, admin_jackpots.JackpotAdmin)


# --- automated play review (seed 001, Notes 4; docs/platform.md, "Automated play") -----------


def _seconds(milliseconds: int | None) -> str:
    """``1234`` -> ``"1.23 s"`` (``"—"`` when unknown)."""
    return "—" if milliseconds is None else f"{milliseconds / 1000:.2f} s"


def _duration(seconds: int) -> str:
    """``29100`` -> ``"8 h 05 min"``; under an hour ``"12 min"``."""
    hours, minutes = divmod(seconds // 60, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"


class SuspendReasonForm(forms.Form):
    """The reason a suspension or a reinstatement asks for (kept in the protection log)."""

    reason = forms.CharField(max_length=200, widget=forms.TextInput(attrs={"size": 60}))


@admin.register(PlayPattern)
class PlayPatternAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    """The review of automated play: every player who played in the window with his figures
    (backoffice.services.record_play_patterns, hourly), flagged ones first. Staff who may
    view it read it (auditors, croupiers); those who may suspend (``wallet.add_suspension``:
    croupiers) suspend or reinstate the selected players with a reason, through
    backoffice.services.suspend_account / reinstate_account: recorded in the player
    protection log (who, when, why) and the admin's history, as a rake change is recorded
    in the table's audit log and the admin's history."""

    list_display = (
        "user",
        "flag_list",
        "hands",
        "reaction_median",
        "reaction_p10",
        "reaction_spread",
        "actions_per_hour",
        "longest_session",
        "doors",
        "suspended",
        "computed_at",
    )
    list_filter = ("flagged",)
    search_fields = ("user__username",)
    list_select_related = ("user",)
    actions = ["suspend_players", "reinstate_players"]
    fields = (
        "user",
        "flag_list",
        "window_start",
        "computed_at",
        "hands",
        "actions",
        "decisions",
        "reaction_median",
        "reaction_p10",
        "reaction_mean",
        "reaction_spread",
        "reaction_histogram",
        "actions_per_hour",
        "sessions",
        "play_time",
        "longest_session",
        "doors",
        "suspended",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[PlayPattern]:
        open_suspension = Suspension.objects.filter(user_id=OuterRef("user_id"), lifted_at__isnull=True)
        patterns: QuerySet[PlayPattern] = super().get_queryset(request)
        return patterns.annotate(is_suspended=Exists(open_suspension))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_suspend_permission(self, request: HttpRequest) -> bool:
        """Suspending and reinstating need ``wallet.add_suspension`` (croupiers)."""
        return request.user.has_perm("wallet.add_suspension")

    @admin.display(description="Signs of automation")
    def flag_list(self, obj: PlayPattern) -> str:
        return ", ".join(FLAGS.get(code, code) for code in obj.flags) or "—"

    @admin.display(description="Median reaction", ordering="reaction_median_ms")
    def reaction_median(self, obj: PlayPattern) -> str:
        return _seconds(obj.reaction_median_ms)

    @admin.display(description="Fastest 10% under")
    def reaction_p10(self, obj: PlayPattern) -> str:
        return _seconds(obj.reaction_p10_ms)

    @admin.display(description="Mean reaction")
    def reaction_mean(self, obj: PlayPattern) -> str:
        return _seconds(obj.reaction_mean_ms)

    @admin.display(description="Spread (std. dev.)")
    def reaction_spread(self, obj: PlayPattern) -> str:
        if obj.reaction_stdev_ms is None:
            return "—"
        ratio = f" (CV {obj.reaction_stdev_ms / obj.reaction_mean_ms:.2f})" if obj.reaction_mean_ms else ""
        return f"± {_seconds(obj.reaction_stdev_ms)}{ratio}"

    @admin.display(description="Reaction times")
    def reaction_histogram(self, obj: PlayPattern) -> str:
        bounds = [_seconds(ms).removesuffix(" s") for ms in REACTION_BUCKETS_MS]
        labels = [f"< {bounds[0]} s", *(f"{a}-{b} s" for a, b in pairwise(bounds))]
        labels.append(f"≥ {bounds[-1]} s")
        return " · ".join(f"{label}: {count}" for label, count in zip(labels, obj.reaction_buckets, strict=False))

    @admin.display(description="Actions per hour")
    def actions_per_hour(self, obj: PlayPattern) -> str:
        return f"{obj.actions * 3600 / obj.play_seconds:,.0f}" if obj.play_seconds else "—"

    @admin.display(description="Play time")
    def play_time(self, obj: PlayPattern) -> str:
        return _duration(obj.play_seconds)

    @admin.display(description="Longest session", ordering="longest_session_seconds")
    def longest_session(self, obj: PlayPattern) -> str:
        return _duration(obj.longest_session_seconds)

    @admin.display(description="Tables: game screen / API · logins: API / browser")
    def doors(self, obj: PlayPattern) -> str:
        token = ", holds an API token" if obj.has_api_token else ""
        return f"{obj.socket_tables} / {obj.rest_tables} · {obj.api_logins} / {obj.browser_logins}{token}"

    @admin.display(description="Suspended", boolean=True)
    def suspended(self, obj: PlayPattern) -> bool:
        return bool(getattr(obj, "is_suspended", False))

    @admin.action(description="Suspend the selected players (with a reason)", permissions=["suspend"])
    def suspend_players(self, request: HttpRequest, queryset: QuerySet[PlayPattern]) -> HttpResponse | None:
        return self._with_reason(request, queryset, action="suspend_players", title="Suspend players")

    @admin.action(description="Reinstate the selected players (with a reason)", permissions=["suspend"])
    def reinstate_players(self, request: HttpRequest, queryset: QuerySet[PlayPattern]) -> HttpResponse | None:
        return self._with_reason(request, queryset, action="reinstate_players", title="Reinstate players")

    def _with_reason(
        self, request: HttpRequest, queryset: QuerySet[PlayPattern], *, action: str, title: str
    ) -> HttpResponse | None:
        """Ask for the reason, then suspend or reinstate each selected player."""
        if not self.has_suspend_permission(request):
            raise PermissionDenied("suspending players needs the wallet.add_suspension permission")
        form = SuspendReasonForm(request.POST if "apply" in request.POST else None)
        if not (form.is_bound and form.is_valid()):
            return TemplateResponse(
                request,
                "admin/backoffice/playpattern/action_reason.html",
                {
                    **self.admin_site.each_context(request),
                    "title": title,
                    "action": action,
                    "patterns": queryset.select_related("user"),
                    "form": form,
                    "opts": self.model._meta,
                    "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                },
            )
        reason, staff_id = form.cleaned_data["reason"], request.user.pk
        assert staff_id is not None
        for pattern in queryset.select_related("user"):
            user = pattern.user
            try:
                if action == "suspend_players":
                    ended = services.suspend_account(
                        user_id=user.pk, reason=reason, staff_user_id=staff_id, now=timezone.now()
                    )
                    done = (
                        f"suspended: {ended.sessions} session(s) ended, {ended.tokens} API token(s) revoked, "
                        f"{len(ended.tables)} table(s) left"
                    )
                elif services.reinstate_account(
                    user_id=user.pk, reason=reason, staff_user_id=staff_id, now=timezone.now()
                ):
                    done = "reinstated"
                else:
                    messages.warning(request, f"{user}: not suspended, nothing changed.")
                    continue
            except DomainError as error:
                messages.error(request, f"{user}: {error} [{error.code}]")
                continue
            verb = "Suspended" if action == "suspend_players" else "Reinstated"
            self.log_change(request, user, f"{verb} from the automated play review: {reason}")
            messages.success(request, f"{user}: {done}.")
        return None
