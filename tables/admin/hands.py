"""Read-only admin of the rows services write: seats, hands, entries, the conditions audit log.
Hands are searchable by a player's username; table filters list real tables, not practice
games (tables/adminkit/filters.py)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from tables.adminkit.filters import ChangedFieldFilter, RealTableFilter, practice_filter
from tables.adminkit.secrets import (
    HIDDEN_UNTIL_CHANGE_ENDS,
    HIDDEN_UNTIL_OVER,
    SecretFieldsAdmin,
    cards_visible_to_staff,
)
from tables.config_text import field_text, value_text
from tables.engine.widerpoker import HandCategory, combination_from_index
from tables.models import Entry, Hand, HandStatus, Seat, TableConfigChange
from tables.widerpoker.records import ENTRY_RESULTS
from wallet.admin import ReadOnlyAdmin
from wallet.money import format_minor


def _describe_combination(hand: Hand, index: int) -> str:
    """``"3-0-7-2-9 (As Kd 7h 2c 9s)"``: positions p0..p4 and the cards they give on the board."""
    positions = combination_from_index(int(index))
    cards = " ".join(str(hand.board["columns"][column][position]) for column, position in enumerate(positions))
    return "-".join(str(position) for position in positions) + f" ({cards})"


def _money(amount_minor: int | None, currency: str) -> str:
    return "—" if amount_minor is None else format_minor(amount_minor, currency)


@admin.register(Seat)
class SeatAdmin(ReadOnlyAdmin):
    list_display = (
        "table",
        "user",
        "status",
        "status_reason",
        "joined_at",
        "last_seen_at",
        "ws_connections",
    )
    list_filter = (practice_filter("table"), "status", ("table", RealTableFilter))
    search_fields = ("user__username", "table__name")
    list_select_related = ("table", "user")


@admin.register(Hand)
class HandAdmin(SecretFieldsAdmin, ReadOnlyAdmin):
    """Hands, read-only. The server seed and change keys show only once the hand is over and
    are never a filter, search or ordering (tables/adminkit/secrets.py); the history page has the
    whole hand and its verification."""

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
    list_filter = ("status", ("table", RealTableFilter))
    list_select_related = ("table",)
    date_hierarchy = "started_at"
    search_fields = ("table__name", "commitment", "entries__user__username")
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
        return hand.server_seed if hand.is_terminal else HIDDEN_UNTIL_OVER

    @admin.display(description="Change keys")
    def revealed_change_keys(self, hand: Hand) -> str:
        if not hand.is_terminal:
            return HIDDEN_UNTIL_OVER
        return " · ".join("".join(str(d) for d in key) for key in hand.change_keys or [])

    @admin.display(description="History")
    def history_link(self, hand: Hand) -> str:
        return format_html(
            '<a href="{}">whole hand and verification</a>',
            reverse("handhistory:hand", args=[hand.pk]),
        )


# An entry's page: who, its choices and purchases, then its results as settlement writes them.
_ENTRY_FIELDS: tuple[str, ...] = (
    "hand_link",
    "user",
    "join_order",
    "reveal_initial_combination",
    "reveal_cards",
    "reveal_redeals",
    "reveal_hold_mask",
    "draws_bought",
    "paid_minor",
    *ENTRY_RESULTS,
)


@admin.register(Entry)
class EntryAdmin(SecretFieldsAdmin, ReadOnlyAdmin):
    """Entries, read-only. A player's cards and hold show only once the change phase has ended
    and are never a filter, search or ordering (tables/adminkit/secrets.py)."""

    list_display = (
        "hand",
        "user",
        "join_order",
        "reveal_cards",
        "draws_bought",
        "paid",
        "final_hand",
        "place",
        "prize",
    )
    list_filter = (("hand__table", RealTableFilter), "hand__status")
    list_select_related = ("hand", "user")
    # Newest first by the partition key and id: the partitions' primary key (hand_id, id)
    # gives the page (by id alone, PostgreSQL would sort every partition's rows).
    ordering = ("-hand_id", "-id")
    search_fields = ("user__username",)
    fields = _ENTRY_FIELDS
    readonly_fields = _ENTRY_FIELDS

    @admin.display(description="Hand")
    def hand_link(self, entry: Entry) -> str:
        return format_html('<a href="{}">{}</a>', reverse("handhistory:hand", args=[entry.hand_id]), entry.hand)

    @admin.display(description="Initial combination")
    def reveal_initial_combination(self, entry: Entry) -> str:
        if not cards_visible_to_staff(entry.hand):
            return HIDDEN_UNTIL_CHANGE_ENDS
        return _describe_combination(entry.hand, entry.initial_combination)

    @admin.display(description="Cards")
    def reveal_cards(self, entry: Entry) -> str:
        if not cards_visible_to_staff(entry.hand):
            return HIDDEN_UNTIL_CHANGE_ENDS
        return _describe_combination(entry.hand, entry.combination)

    @admin.display(description="Redeals")
    def reveal_redeals(self, entry: Entry) -> str:
        if not cards_visible_to_staff(entry.hand):
            return HIDDEN_UNTIL_CHANGE_ENDS
        return (
            " · ".join(
                f"redeal {number}: {_describe_combination(entry.hand, index)}" for number, index in entry.redeals or []
            )
            or "none"
        )

    @admin.display(description="Hold mask")
    def reveal_hold_mask(self, entry: Entry) -> str:
        if not cards_visible_to_staff(entry.hand):
            return HIDDEN_UNTIL_CHANGE_ENDS
        if entry.hold_mask is None:
            return "no choice received"
        return " ".join("hold" if entry.hold_mask >> column & 1 else "change" for column in range(5))

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
class TableConfigChangeAdmin(ReadOnlyAdmin):
    """The audit log of staff changes (who, when, before, after, why), in people's units
    (``tables.config_text``); the stored values stay in minor units and basis points."""

    list_display = (
        "changed_at",
        "table",
        "what",
        "before",
        "after",
        "changed_by",
        "reason",
        "applied_at",
    )
    list_filter = (("table", RealTableFilter), ChangedFieldFilter)
    list_select_related = ("table", "changed_by")
    search_fields = ("reason", "table__name", "changed_by__username", "field")
    date_hierarchy = "changed_at"

    @admin.display(description="What", ordering="field")
    def what(self, change: TableConfigChange) -> str:
        return field_text(change.field)

    @admin.display(description="Before")
    def before(self, change: TableConfigChange) -> str:
        return value_text(change.field, change.old_value, change.table.currency if change.table else None)

    @admin.display(description="After")
    def after(self, change: TableConfigChange) -> str:
        return value_text(change.field, change.new_value, change.table.currency if change.table else None)
