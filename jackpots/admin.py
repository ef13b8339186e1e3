"""Admin of jackpots: the history of wins, resets and house funding, read-only. A jackpot's
own page (the tables it feeds, its starting amount, the house funding form) reaches the tables
and lives in the back office (``backoffice/admin_jackpots.py``, issue 21)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from jackpots.models import JackpotEvent
from wallet.money import format_minor


@admin.register(JackpotEvent)
class JackpotEventAdmin(admin.ModelAdmin):  # type: ignore[type-arg]  # django-stubs generic
    """Wins, resets and house funding: read-only, as the ledger recorded them."""

    list_display = ("created_at", "jackpot", "kind", "amount", "hand_id", "transfer_reference")
    list_filter = ("kind", "jackpot")

    @admin.display(description="Amount")
    def amount(self, event: JackpotEvent) -> str:
        return format_minor(event.amount_minor, event.jackpot.currency)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
