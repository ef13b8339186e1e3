"""The player's "Responsible gaming" page and the reality-check feed of the game screen:
parse, call one wallet.protection service or selector, render (issue #11)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods

from config.infra.errors import DomainError
from tables.clock import remove_from_tables
from wallet import protection
from wallet.models import Currency, ExclusionKind, LimitKind
from wallet.money import format_minor, parse_minor

CASH_CURRENCIES = [code for code in Currency.values if code != Currency.FUN]


class PlayerLoginForm(AuthenticationForm):
    """The site's login: a suspended account is refused with its own message."""

    def confirm_login_allowed(self, user: Any) -> None:
        super().confirm_login_allowed(user)
        if not protection.can_log_in(user_id=user.pk):
            raise forms.ValidationError(
                _("This account is suspended. Contact support to find out why."), code="suspended"
            )


class LimitForm(forms.Form):
    """One limit: an amount in major units (money limits) or minutes; blank removes it."""

    kind = forms.ChoiceField(choices=LimitKind.choices)
    currency = forms.ChoiceField(choices=[("", "—"), *[(c, c) for c in CASH_CURRENCIES]], required=False)
    value = forms.CharField(max_length=20, required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        raw = (data.get("value") or "").strip()
        if not raw:
            data["parsed"] = None
        elif data.get("kind") in protection.MONEY_LIMITS:
            try:
                data["parsed"] = parse_minor(raw)
            except ValueError as error:
                raise forms.ValidationError(_("Amount: %(reason)s.") % {"reason": error}) from error
        else:
            if not raw.isdigit() or int(raw) <= 0:
                raise forms.ValidationError(_("Minutes: a whole number above zero."))
            data["parsed"] = int(raw)
        return data


class BreakForm(forms.Form):
    kind = forms.ChoiceField(choices=ExclusionKind.choices)
    days = forms.TypedChoiceField(
        coerce=int, choices=[(d, d) for d in sorted({*protection.TIME_OUT_DAYS, *protection.SELF_EXCLUSION_DAYS})]
    )
    confirm = forms.BooleanField(required=True)


def _limit_rows(user_id: int) -> list[dict[str, Any]]:
    now = timezone.now()
    views = protection.list_limits(user_id=user_id, now=now)
    rows = []
    for kind in LimitKind.values:
        for currency in CASH_CURRENCIES if kind in protection.MONEY_LIMITS else [""]:
            view = views.get((kind, currency))
            money = kind in protection.MONEY_LIMITS

            def show(value: int | None, money: bool = money, currency: str = currency) -> str:
                if value is None:
                    return _("none")
                return format_minor(value, currency) if money else _("%(minutes)s minutes") % {"minutes": value}

            rows.append(
                {
                    "kind": kind,
                    "label": LimitKind(kind).label,
                    "currency": currency,
                    "money": money,
                    "current": show(view.value if view else None),
                    "input": ""
                    if view is None or view.value is None
                    else (format_minor(view.value, language="en").replace(",", "") if money else str(view.value)),
                    "pending": None
                    if view is None or view.pending_at is None
                    else {"value": show(view.pending_value), "at": view.pending_at},
                }
            )
    return rows


@login_required
@require_http_methods(["GET", "POST"])
def responsible_gaming(request: HttpRequest) -> HttpResponse:
    """Limits, reality checks, time-out and self-exclusion, set by the player himself."""
    user_id = request.user.pk
    assert user_id is not None
    now = timezone.now()
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "limit":
                form = LimitForm(request.POST)
                if not form.is_valid():
                    messages.error(request, " ".join(str(m) for errors in form.errors.values() for m in errors))
                    return redirect("responsible-gaming")
                view = protection.set_limit(
                    user_id=user_id,
                    kind=form.cleaned_data["kind"],
                    currency=form.cleaned_data["currency"],
                    value=form.cleaned_data["parsed"],
                    now=now,
                )
                if view.pending_at is not None:
                    messages.warning(
                        request,
                        _("%(limit)s: a higher limit takes effect after the cooling period, on %(when)s UTC.")
                        % {"limit": LimitKind(view.kind).label, "when": f"{view.pending_at:%Y-%m-%d %H:%M}"},
                    )
                else:
                    messages.success(
                        request, _("%(limit)s saved: in force now.") % {"limit": LimitKind(view.kind).label}
                    )
            elif action == "break":
                form_break = BreakForm(request.POST)
                if not form_break.is_valid():
                    messages.error(request, _("Choose a length and tick the box to confirm."))
                    return redirect("responsible-gaming")
                exclusion = protection.take_break(
                    user_id=user_id, kind=form_break.cleaned_data["kind"], days=form_break.cleaned_data["days"], now=now
                )
                # The break starts now: his seats are left and his game screens closed.
                remove_from_tables(
                    user_id=user_id,
                    reason=f"{exclusion.get_kind_display()} until {exclusion.ends_at:%Y-%m-%d %H:%M} UTC.",
                    now=now,
                )
                messages.success(
                    request,
                    _("%(kind)s until %(when)s UTC. Nobody can end it sooner, support included.")
                    % {"kind": exclusion.get_kind_display(), "when": f"{exclusion.ends_at:%Y-%m-%d %H:%M}"},
                )
            else:
                messages.error(request, _("Unknown request."))
        except DomainError as refusal:
            messages.error(request, f"{refusal.for_people()}".rstrip(".") + ".")
        return redirect("responsible-gaming")
    summary = protection.get_session_summary(user_id=user_id, now=now)
    return render(
        request,
        "lobby/responsible_gaming.html",
        {
            "limits": _limit_rows(user_id),
            "exclusion": protection.find_exclusion(user_id=user_id, now=now),
            "suspension": protection.find_suspension(user_id=user_id),
            "session": summary,
            "session_net": [
                format_minor(amount, code) for code, amount in (summary.net_minor if summary else {}).items()
            ],
            "time_out_days": protection.TIME_OUT_DAYS,
            "self_exclusion_days": protection.SELF_EXCLUSION_DAYS,
            "cooling_hours": settings.LIMIT_COOLING_HOURS,
            "break_minutes": settings.SESSION_BREAK_MINUTES,
        },
    )


@login_required
@require_GET
def session_json(request: HttpRequest) -> JsonResponse:
    """The reality check of the game screen: time played in the open session, net result
    per currency (formatted for people) and the seconds until the next check."""
    assert request.user.pk is not None
    summary = protection.get_session_summary(user_id=request.user.pk, now=timezone.now())
    if summary is None:
        return JsonResponse({"playing": False})
    return JsonResponse(
        {
            "playing": True,
            "started_at": summary.started_at.isoformat(),
            "minutes_played": summary.minutes_played,
            "net": {code: format_minor(amount, code) for code, amount in summary.net_minor.items()},
            "net_minor": summary.net_minor,
            "reality_check_minutes": summary.reality_check_minutes,
            "next_check_seconds": summary.next_check_seconds,
        }
    )
