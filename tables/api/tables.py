"""REST API of the lobby and a table's reads: list, public state, the player's own state."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.infra.rest import ERRORS, request_player_id
from tables import selectors
from tables.api.common import EntryStateSerializer, TableStateSerializer
from tables.services import seating
from tables.widerpoker import selectors as widerpoker_selectors


class LobbyJackpotSerializer(serializers.Serializer[Any]):
    """A jackpot a table feeds and can win, with its live balance (added in API 1.1)."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=["royal", "gold", "silver", "bronze"])
    balance_minor = serializers.IntegerField()
    one_in = serializers.IntegerField(allow_null=True, help_text="Spin jackpots: drawn once in this many hands.")
    contribution_bps = serializers.IntegerField()


class TableListApi(APIView):
    """The lobby: every table with its conditions, jackpots, players, phase and live pool."""

    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.IntegerField()
        name = serializers.CharField()
        mode = serializers.CharField()
        currency = serializers.CharField()
        ante_minor = serializers.IntegerField()
        change_seconds = serializers.IntegerField()
        speed = serializers.CharField()
        rake_bps = serializers.IntegerField()
        draw_price_minor = serializers.IntegerField()
        draw_price_bps = serializers.IntegerField(help_text="The draw price as a share of the ante (API 1.1).")
        redeal_price_minor = serializers.IntegerField()
        max_draws = serializers.IntegerField()
        max_redeals = serializers.IntegerField()
        redeal_seconds = serializers.IntegerField()
        paid_fraction_bps = serializers.IntegerField()
        min_prize_minor = serializers.IntegerField()
        jackpots = LobbyJackpotSerializer(many=True)
        next_special = serializers.CharField(allow_null=True, help_text="The next special hand, as players read it.")
        players = serializers.IntegerField()
        phase = serializers.CharField()
        deadline = serializers.DateTimeField(allow_null=True)
        hand_number = serializers.IntegerField(allow_null=True)
        pool_minor = serializers.IntegerField(allow_null=True)
        is_open = serializers.BooleanField()
        version = serializers.IntegerField()

        class Meta:
            ref_name = "LobbyTable"

    @extend_schema(operation_id="tables_list", responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(selectors.list_lobby_tables(), many=True).data)


class TableDetailApi(APIView):
    """A table's public state (the snapshot clients resync from); notes the viewer's
    presence when he is seated."""

    @extend_schema(operation_id="tables_retrieve", responses={200: TableStateSerializer, **ERRORS})
    def get(self, request: Request, table_id: int) -> Response:
        state = widerpoker_selectors.get_table_state(table_id=table_id)
        seating.touch_presence(table_id=table_id, user_id=request_player_id(request), now=timezone.now())
        return Response(TableStateSerializer(state).data)


class TableEntryStateApi(APIView):
    """The player's private state at a table: seat, balance, own entry in the current hand
    (cards, choices, probability panel, result). Notes the player's presence."""

    @extend_schema(operation_id="tables_me", responses={200: EntryStateSerializer, **ERRORS})
    def get(self, request: Request, table_id: int) -> Response:
        seating.touch_presence(table_id=table_id, user_id=request_player_id(request), now=timezone.now())
        state = widerpoker_selectors.get_entry_state(table_id=table_id, user_id=request_player_id(request))
        return Response(EntryStateSerializer(state).data)
