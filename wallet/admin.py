"""Admin for wallets: the read-only ledger (transfers, entries), the player protection records,
and the base admins of rows only services write (``ReadOnlyAdmin``, ``ServiceAdmin``). The pages
that reach the apps above the wallet (an account's cash movement form, the suspend-or-lift
form) live in the back office (``backoffice/admin_wallet.py``, issue 21), registered for the
wallet's models with the same URLs and templates."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from config.infra.errors import DomainError
from wallet.models import (
    Exclusion,
    LedgerEntry,
    PlayerLimit,
    ProtectionLog,
    Transfer,
)
from wallet.money import format_minor


class ReadOnlyAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic over several models
    """Rows only services write (the books, hands): staff with view permission read them,
    nobody adds, edits or deletes them here."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ServiceAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # generic over several models
    """An admin whose saves and deletes are entry-point services (``durable=True``, STYLE,
    Services and transactions): the service owns the transaction, so the admin does not
    open one around the form (Django's own would make every durable save answer 500).
    ``save_model``/``delete_model`` call the service; nothing else writes."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return self._changeform_view(request, object_id, form_url, extra_context)  # type: ignore[attr-defined,no-any-return]  # private in Django, absent from django-stubs
        except DomainError as error:
            # The form was valid, then the service refused (the books moved in between):
            # nothing was saved; say why, never a 500.
            messages.error(request, f"Nothing was saved: {error} [{error.code}]")
            return HttpResponseRedirect(request.get_full_path())

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        return self._delete_view(request, object_id, extra_context)  # type: ignore[attr-defined,no-any-return]  # private in Django, absent from django-stubs

    view_fields: tuple[str, ...] = ()
    """What staff who may only view (auditors) read on the change page: model fields and
    display methods (the form's own fields, in people's units, are for those who change)."""

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if obj is not None and self.view_fields and not self.has_change_permission(request, obj):
            return self.view_fields
        return super().get_fields(request, obj)

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        """Nothing: the service saved the related rows with the object."""


@admin.register(Transfer)
class TransferAdmin(ReadOnlyAdmin):
    list_display = ("reference", "kind", "currency", "memo", "created_by", "created_at")
    list_filter = ("kind", "currency")
    # A player's username finds the transfers that moved one of his accounts.
    search_fields = ("reference", "memo", "entries__account__user__username")
    date_hierarchy = "created_at"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Transfer]:
        return super().get_queryset(request).select_related("created_by")


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyAdmin):
    list_display = ("id", "transfer", "account", "change", "balance_after")
    list_select_related = ("transfer", "account")
    # Newest first by the partition key and id: the partitions' primary key (transfer_id, id)
    # gives the page (by id alone, PostgreSQL would sort every partition's rows).
    ordering = ("-transfer_id", "-id")

    @admin.display(description="Change", ordering="delta_minor")
    def change(self, obj: LedgerEntry) -> str:
        return format_minor(obj.delta_minor, obj.account.currency)

    @admin.display(description="Balance after", ordering="balance_after_minor")
    def balance_after(self, obj: LedgerEntry) -> str:
        return format_minor(obj.balance_after_minor, obj.account.currency)

    search_fields = ("account__key", "transfer__reference", "account__user__username")


# --- player protection (wallet/protection.py) -------------------------------------------------


@admin.register(Exclusion)
class ExclusionAdmin(ReadOnlyAdmin):
    """Time-outs and self-exclusions: staff read them and cannot end, edit or delete them."""

    list_display = ("user", "kind", "starts_at", "ends_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user",)


@admin.register(PlayerLimit)
class PlayerLimitAdmin(ReadOnlyAdmin):
    list_display = ("user", "kind", "currency", "value", "pending_value", "pending_at", "updated_at")
    list_filter = ("kind",)
    search_fields = ("user__username",)
    list_select_related = ("user",)


@admin.register(ProtectionLog)
class ProtectionLogAdmin(ReadOnlyAdmin):
    """The audit log of player protection: who did what to which account, and why."""

    list_display = ("created_at", "user", "actor", "action", "detail")
    list_filter = ("action",)
    search_fields = ("user__username", "detail")
    list_select_related = ("user", "actor")
    date_hierarchy = "created_at"
