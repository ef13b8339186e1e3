"""Shared pieces of the REST API: state and error serializers, pagination, throttle, helpers."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

# --- shared output shapes -----------------------------------------------------------------


class BoardSerializer(serializers.Serializer[Any]):
    """The board: five columns of ten card codes (top to bottom) and the two cards out."""

    columns = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))
    out = serializers.ListField(child=serializers.CharField())


class TableConfigSerializer(serializers.Serializer[Any]):
    """A table's conditions (money in minor units, rake and paid fraction in basis points)."""

    name = serializers.CharField()
    is_open = serializers.BooleanField()
    mode = serializers.CharField()
    currency = serializers.CharField()
    ante_minor = serializers.IntegerField()
    change_seconds = serializers.IntegerField()
    results_seconds = serializers.IntegerField()
    rake_bps = serializers.IntegerField()
    paid_fraction_bps = serializers.IntegerField()
    min_prize_minor = serializers.IntegerField()
    draw_price_minor = serializers.IntegerField()
    max_draws = serializers.IntegerField()
    redeal_price_minor = serializers.IntegerField()
    max_redeals = serializers.IntegerField()
    redeal_seconds = serializers.IntegerField()
    draw_price_bps = serializers.IntegerField(help_text="The draw price as a share of the ante.")
    tips = serializers.BooleanField()
    panel = serializers.BooleanField()
    next_special = serializers.CharField(allow_null=True)


class HandPublicSerializer(serializers.Serializer[Any]):
    """The running or last hand as every watcher sees it. ``server_seed``, ``change_keys``
    and the settlement fields are present only once the hand is settled or cancelled."""

    id = serializers.IntegerField()
    number = serializers.IntegerField()
    status = serializers.CharField()
    commitment = serializers.CharField(help_text="SHA-256 of the server seed, hex.")
    board = BoardSerializer()
    achievable = serializers.ListField(child=serializers.IntegerField())
    started_at = serializers.DateTimeField()
    change_deadline = serializers.DateTimeField()
    redeal_deadline = serializers.DateTimeField()
    entries = serializers.IntegerField()
    gross_minor = serializers.IntegerField()
    rake_minor = serializers.IntegerField()
    pool_minor = serializers.IntegerField()
    carry_in_minor = serializers.IntegerField(required=False)
    breakage_minor = serializers.IntegerField(required=False)
    server_seed = serializers.CharField(required=False)
    change_keys = serializers.ListField(child=serializers.ListField(child=serializers.IntegerField()), required=False)
    leaderboard = serializers.JSONField(required=False)
    cancel_reason = serializers.CharField(required=False, allow_blank=True)
    conditions = serializers.JSONField(
        help_text="The hand's own conditions (a special hand may differ from the table's)."
    )
    overrides = serializers.JSONField(help_text="Rules changed in this hand: {rule: {value, source, was}}.")
    special = serializers.ListField(child=serializers.CharField(), help_text="Names of the special hands it is.")
    spin = serializers.JSONField(
        allow_null=True, help_text="The spin jackpot drawn at the deal: kind, name, award_minor."
    )


class TableStateSerializer(serializers.Serializer[Any]):
    """The public state of a table with its version (the ``table_state`` push)."""

    type = serializers.CharField()
    table_id = serializers.IntegerField()
    version = serializers.IntegerField()
    phase = serializers.CharField()
    deadline = serializers.DateTimeField(allow_null=True)
    server_time = serializers.DateTimeField()
    players = serializers.IntegerField()
    hand = HandPublicSerializer(allow_null=True)
    config = TableConfigSerializer()
    jackpots = serializers.JSONField(help_text="The table's jackpots with live balances (as in the lobby).")
    frozen = serializers.JSONField(
        allow_null=True,
        required=False,
        help_text="Algorithm 3: the next hand's frozen inputs waiting for their deal round (docs/protocol.md).",
    )


class SeatStateSerializer(serializers.Serializer[Any]):
    status = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)


class PrivateEntrySerializer(serializers.Serializer[Any]):
    """The player's own entry in the current hand: cards, choices, purchases, the
    probability panel during the change phase and the result once the hand is over."""

    combination = serializers.ListField(child=serializers.IntegerField())
    cards = serializers.ListField(child=serializers.CharField())
    hold = serializers.ListField(child=serializers.BooleanField(), allow_null=True)
    draws_bought = serializers.IntegerField()
    max_draws = serializers.IntegerField()
    draw_price_minor = serializers.IntegerField()
    redeals_used = serializers.IntegerField()
    redeal_pending = serializers.JSONField(
        allow_null=True,
        required=False,
        help_text="Algorithm 3: a redeal bought and waiting for its beacon round (number, round, round_at).",
    )
    max_redeals = serializers.IntegerField()
    redeal_price_minor = serializers.IntegerField()
    redeal_deadline = serializers.DateTimeField(allow_null=True)
    paid_minor = serializers.IntegerField()
    promo_minor = serializers.IntegerField(help_text="Part of paid_minor paid by house promotions (free items).")
    panel = serializers.JSONField(allow_null=True)
    result = serializers.JSONField(allow_null=True)


class EntryStateSerializer(serializers.Serializer[Any]):
    """The player's private view of a table (the ``entry_state`` push)."""

    type = serializers.CharField()
    table_id = serializers.IntegerField()
    version = serializers.IntegerField()
    seat = SeatStateSerializer(allow_null=True)
    balance_minor = serializers.IntegerField()
    currency = serializers.CharField()
    hand_id = serializers.IntegerField(allow_null=True)
    entry = PrivateEntrySerializer(allow_null=True)
    powerups = serializers.JSONField(
        allow_null=True,
        help_text="The player's gaming session (seed 001, E): level, max_level, points, next_level_points, "
        "hands_played, free_draws, free_redeals, hands_to_free_draw, hands_to_free_redeal.",
    )
