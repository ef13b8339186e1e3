"""The wallet's admin pages that reach the apps above the wallet (issue 21: the wallet imports
no other app): a player account's page with the staff cash movement form, whose deposit
refreshes the player's game screens (``tables.realtime.push``), and the suspend-or-lift form,
whose suspension ends the player's sessions and seats (``lobby.services``). Registered for the
wallet's models, so their URLs (``admin:wallet_account_cash``, ``admin:wallet_account_change``,
``admin:wallet_suspension_add``) and templates (``admin/wallet/...``) are the wallet's as before.
The read-only wallet pages stay in ``wallet/admin.py``."""

from __future__ import annotations

import uuid
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone

from config.infra.errors import DomainError
from lobby.services import end_player_sessions
from tables.realtime.push import push_player_on_commit
from wallet import protection, services
from wallet.admin import ReadOnlyAdmin
from wallet.models import Account, AccountKind, Currency, LedgerEntry, Suspension, Transfer
from wallet.money import format_minor, parse_minor


class CashMovementForm(forms.Form):
    """A staff deposit or withdrawal: direction, amount in major units, mandatory reason.

    ``token`` is a one-off key made when the form is shown; the transfer's reference is built
    from it, so submitting the same form twice (a double click, a reload) records one
    movement (security audit F9). Amounts are bounded by ``POKER_CASH_MOVEMENT_MAX_MINOR``.
    """

    direction = forms.ChoiceField(
        choices=[
            ("deposit", "Deposit (cashier -> player)"),
            ("withdrawal", "Withdrawal (player -> cashier)"),
        ]
    )
    amount = forms.CharField(max_length=20, help_text="In major units, e.g. 25.00")
    reason = forms.CharField(max_length=200, help_text="Why: shown in the player's statement and the audit trail.")
    token = forms.UUIDField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, currency: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.currency = currency
        self.fields["token"].initial = uuid.uuid4()
        self.fields[
            "amount"
        ].help_text = (
            f"In {currency}, e.g. 25.00; at most {format_minor(settings.POKER_CASH_MOVEMENT_MAX_MINOR, currency)}."
        )

    def clean_amount(self) -> int:
        try:
            amount = parse_minor(self.cleaned_data["amount"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error
        limit = settings.POKER_CASH_MOVEMENT_MAX_MINOR
        if amount > limit:
            raise forms.ValidationError(
                f"{format_minor(amount, self.currency)} is more than one movement may be: "
                f"at most {format_minor(limit, self.currency)}"
            )
        return amount

    def reference(self) -> str:
        """The transfer reference of this submission (the same for every resubmission)."""
        return f"{self.cleaned_data['direction']}:form:{self.cleaned_data['token']}"


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ("key", "kind", "currency", "user", "balance", "created_at")
    fields = ("key", "kind", "currency", "user", "balance", "created_at")
    readonly_fields = ("balance",)
    list_filter = ("kind", "currency")
    search_fields = ("key", "user__username", "user__email")
    list_select_related = ("user",)

    @admin.display(description="Balance", ordering="balance_minor")
    def balance(self, obj: Account) -> str:
        return format_minor(obj.balance_minor, obj.currency)

    def get_urls(self) -> list[URLPattern]:
        return [
            path(
                "<int:account_id>/cash/",
                self.admin_site.admin_view(self.cash_view),
                name="wallet_account_cash",
            ),
            *super().get_urls(),
        ]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra_context = extra_context or {}
        account = Account.objects.filter(pk=object_id).first()
        if (
            account is not None
            and account.kind == AccountKind.PLAYER
            and account.currency != Currency.FUN
            and request.user.has_perm("wallet.change_account")
        ):
            extra_context["cash_url"] = reverse("admin:wallet_account_cash", args=[account.pk])
        extra_context["recent_entries"] = (
            LedgerEntry.objects.filter(account_id=object_id).select_related("transfer").order_by("-id")[:50]
        )
        return super().change_view(request, object_id, form_url, extra_context)

    def cash_view(self, request: HttpRequest, account_id: int) -> HttpResponse:
        """Record a staff deposit or withdrawal; only staff allowed to change accounts
        (croupiers), never read-only auditors."""
        if not request.user.has_perm("wallet.change_account"):
            raise PermissionDenied("recording cash needs the wallet.change_account permission")
        account = get_object_or_404(Account, pk=account_id, kind=AccountKind.PLAYER)
        form = CashMovementForm(request.POST or None, currency=account.currency)
        if request.method == "POST" and form.is_valid():
            assert account.user_id is not None and request.user.pk is not None
            move = services.deposit_cash if form.cleaned_data["direction"] == "deposit" else services.withdraw_cash
            repeated = Transfer.objects.filter(reference=form.reference()).exists()
            try:
                transfer = move(
                    user_id=account.user_id,
                    currency=account.currency,
                    amount_minor=form.cleaned_data["amount"],
                    reason=form.cleaned_data["reason"],
                    staff_user_id=request.user.pk,
                    reference=form.reference(),
                )
            except DomainError as error:
                form.add_error(None, f"{error} [{error.code}]")
            else:
                # The player's game screens show his balance: refresh them now.
                push_player_on_commit(account.user_id)
                amount = format_minor(form.cleaned_data["amount"], account.currency)
                if repeated:
                    messages.warning(
                        request, f"This form was already submitted: {transfer.reference} was recorded once, not twice."
                    )
                else:
                    messages.success(
                        request, f"{form.cleaned_data['direction'].title()} of {amount} recorded for {account.user}."
                    )
                return HttpResponseRedirect(reverse("admin:wallet_account_change", args=[account.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Cash movement for {account.key}",
            "account": account,
            "balance": format_minor(account.balance_minor, account.currency),
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/wallet/cash_movement.html", context)


# --- player protection (wallet/protection.py) -------------------------------------------------


class SuspensionForm(forms.Form):
    """Suspend or lift: the player's username, what to do, and why (mandatory)."""

    username = forms.CharField(max_length=150)
    action = forms.ChoiceField(choices=[("suspend", "Suspend the account"), ("lift", "Lift the suspension")])
    reason = forms.CharField(max_length=255, help_text="Why: recorded in the player protection audit log.")

    def clean_username(self) -> Any:
        user = get_user_model().objects.filter(username__iexact=self.cleaned_data["username"].strip()).first()
        if user is None:
            raise forms.ValidationError("No player of that name.")
        return user


@admin.register(Suspension)
class SuspensionAdmin(ReadOnlyAdmin):
    """Suspensions, read-only; "Add" opens the suspend-or-lift form, which calls the services
    (wallet.protection.suspend_player / lift_suspension) and needs ``wallet.add_suspension``."""

    list_display = ("user", "reason", "suspended_by", "suspended_at", "lifted_by", "lifted_at", "lift_reason")
    list_filter = ("lifted_at",)
    search_fields = ("user__username", "reason")
    list_select_related = ("user", "suspended_by", "lifted_by")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("wallet.add_suspension")

    def add_view(self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None) -> Any:
        if not self.has_add_permission(request):
            raise PermissionDenied("suspending players needs the wallet.add_suspension permission")
        form = SuspensionForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            user, staff_id = form.cleaned_data["username"], request.user.pk
            assert staff_id is not None
            try:
                if form.cleaned_data["action"] == "suspend":
                    protection.suspend_player(
                        user_id=user.pk, reason=form.cleaned_data["reason"], staff_user_id=staff_id, now=timezone.now()
                    )
                    # Logged out everywhere, seats left, game sockets closed.
                    ended = end_player_sessions(
                        user_id=user.pk, reason="This account is suspended: contact support.", now=timezone.now()
                    )
                    # The admin's history as well, as a rake change (tables/admin/tables.py).
                    self.log_change(request, user, f"Suspended: {form.cleaned_data['reason']}")
                    messages.success(
                        request,
                        f"{user} is suspended: {ended.sessions} session(s) ended, {ended.tokens} API token(s) revoked, "
                        f"{len(ended.tables)} table(s) left.",
                    )
                elif protection.lift_suspension(
                    user_id=user.pk, reason=form.cleaned_data["reason"], staff_user_id=staff_id, now=timezone.now()
                ):
                    self.log_change(request, user, f"Reinstated: {form.cleaned_data['reason']}")
                    messages.success(request, f"The suspension of {user} is lifted.")
                else:
                    messages.warning(request, f"{user} was not suspended: nothing changed.")
            except DomainError as error:
                form.add_error(None, f"{error} [{error.code}]")
            else:
                return HttpResponseRedirect(reverse("admin:wallet_suspension_changelist"))
        context = {
            **self.admin_site.each_context(request),
            "title": "Suspend or unsuspend a player",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/wallet/suspension_form.html", context)
