"""Admin for wallets: accounts with staff deposits and withdrawals, a read-only ledger."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from wallet import services
from wallet.errors import DomainError
from wallet.models import Account, AccountKind, Currency, LedgerEntry, Transfer
from wallet.money import format_minor, parse_minor


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic over several models
    """Rows only services write (the books, hands): staff with view permission read them,
    nobody adds, edits or deletes them here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class CashMovementForm(forms.Form):
    """A staff deposit or withdrawal: direction, amount in major units, mandatory reason."""

    direction = forms.ChoiceField(
        choices=[
            ("deposit", "Deposit (cashier -> player)"),
            ("withdrawal", "Withdrawal (player -> cashier)"),
        ]
    )
    amount = forms.CharField(help_text="In major units, e.g. 25.00")
    reason = forms.CharField(max_length=200, help_text="Why: shown in the player's statement and the audit trail.")

    def clean_amount(self) -> int:
        try:
            return parse_minor(self.cleaned_data["amount"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ("key", "kind", "currency", "user", "balance", "created_at")
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
        form = CashMovementForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            assert account.user_id is not None and request.user.pk is not None
            move = services.deposit_cash if form.cleaned_data["direction"] == "deposit" else services.withdraw_cash
            try:
                move(
                    user_id=account.user_id,
                    currency=account.currency,
                    amount_minor=form.cleaned_data["amount"],
                    reason=form.cleaned_data["reason"],
                    staff_user_id=request.user.pk,
                )
            except DomainError as error:
                form.add_error(None, f"{error} [{error.code}]")
            else:
                messages.success(request, f"{form.cleaned_data['direction'].title()} recorded for {account.key}.")
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


@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdmin):
    list_display = ("reference", "kind", "currency", "memo", "created_by", "created_at")
    list_filter = ("kind", "currency")
    search_fields = ("reference", "memo")
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Transfer]:
        return super().get_queryset(request).select_related("created_by")


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "transfer", "account", "delta_minor", "balance_after_minor")
    list_select_related = ("transfer", "account")
    search_fields = ("account__key", "transfer__reference")
