"""Read-only admin of Hold'em hands and the players dealt into them, beside WiderPoker's
Hands and Entries (issue 20: auditors see both games).

A Hold'em hand's ``server_seed`` and ``chain_seed`` give every hole card and the board: they
show only once the hand is over, and are never a filter, search or ordering
(tables/adminkit/secrets.py). Hole cards are not shown here at all: the hand's history page
shows them to staff once the hand is over, and its JSON export
(``widerpoker-holdem-hand/1``, docs/holdem-export.md) carries them for auditors.
Practice games are listed only under "Practice game: Yes" (tables/adminkit/filters.py).
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from tables.adminkit.filters import RealTableFilter, practice_filter
from tables.adminkit.secrets import HIDDEN_UNTIL_OVER, SecretFieldsAdmin
from tables.models import HoldemHand, HoldemHandPlayer, HoldemHandStatus
from wallet.admin import ReadOnlyAdmin
from wallet.money import format_minor


def _links(hand: HoldemHand) -> str:
    if not hand.is_terminal:
        return "—"
    return format_html(
        '<a href="{}">whole hand and verification</a> · <a href="{}">JSON</a>',
        reverse("handhistory:holdem-hand", args=[hand.pk]),
        reverse("handhistory:holdem-export", args=[hand.pk]),
    )


@admin.register(HoldemHand)
class HoldemHandAdmin(SecretFieldsAdmin, ReadOnlyAdmin):
    """Hold'em hands, read-only, searchable by table, commitment and player's username."""

    list_display = ("table", "number", "status", "started_at", "players_dealt", "pot", "rake", "history_link")
    list_filter = (practice_filter("table"), "status", ("table", RealTableFilter))
    list_select_related = ("table",)
    date_hierarchy = "started_at"
    search_fields = ("table__name", "commitment", "seat_rows__user__username")
    ordering = ("-started_at", "-id")
    fields = (
        "table",
        "number",
        "status",
        "history_link",
        "started_at",
        "settled_at",
        "config",
        "commitment",
        "chain",
        "chain_index",
        "revealed_chain_seed",
        "revealed_seed",
        "client_seeds",
        "players",
        "board",
        "pot_minor",
        "rake_minor",
        "results",
        "phh_error",
        "cancel_reason",
    )
    readonly_fields = fields

    @admin.display(description="Players")
    def players_dealt(self, hand: HoldemHand) -> int:
        return len(hand.players or [])

    @admin.display(description="Pot", ordering="pot_minor")
    def pot(self, hand: HoldemHand) -> str:
        if hand.status != HoldemHandStatus.SETTLED:
            return "—"
        return format_minor(hand.pot_minor, hand.table.currency)

    @admin.display(description="Rake", ordering="rake_minor")
    def rake(self, hand: HoldemHand) -> str:
        if hand.status != HoldemHandStatus.SETTLED:
            return "—"
        return format_minor(hand.rake_minor, hand.table.currency)

    @admin.display(description="Server seed")
    def revealed_seed(self, hand: HoldemHand) -> str:
        return hand.server_seed if hand.is_terminal else HIDDEN_UNTIL_OVER

    @admin.display(description="Chain seed")
    def revealed_chain_seed(self, hand: HoldemHand) -> str:
        return hand.chain_seed if hand.is_terminal else HIDDEN_UNTIL_OVER

    @admin.display(description="History")
    def history_link(self, hand: HoldemHand) -> str:
        return _links(hand)


@admin.register(HoldemHandPlayer)
class HoldemHandPlayerAdmin(ReadOnlyAdmin):
    """Players dealt into Hold'em hands (stack before and after, net), searchable by player."""

    list_display = ("hand_link", "user", "seat", "is_bot", "starting", "finishing", "net")
    list_filter = (practice_filter("hand__table"), "is_bot", ("hand__table", RealTableFilter))
    list_select_related = ("hand", "hand__table", "user")
    search_fields = ("user__username",)
    ordering = ("-hand_id", "seat")
    fields = ("hand_link", "user", "seat", "is_bot", "starting_minor", "finishing_minor")
    readonly_fields = fields

    @admin.display(description="Hand")
    def hand_link(self, row: HoldemHandPlayer) -> str:
        if not row.hand.is_terminal:
            return str(row.hand)
        return format_html('<a href="{}">{}</a>', reverse("handhistory:holdem-hand", args=[row.hand_id]), row.hand)

    @admin.display(description="Start", ordering="starting_minor")
    def starting(self, row: HoldemHandPlayer) -> str:
        return format_minor(row.starting_minor, row.hand.table.currency)

    @admin.display(description="End", ordering="finishing_minor")
    def finishing(self, row: HoldemHandPlayer) -> str:
        return "—" if row.finishing_minor is None else format_minor(row.finishing_minor, row.hand.table.currency)

    @admin.display(description="Net")
    def net(self, row: HoldemHandPlayer) -> str:
        net = row.net_minor
        return "—" if net is None else format_minor(net, row.hand.table.currency)
