"""REST API of the player's hand history: hands played, one hand, a hand's entries."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.infra.rest import ERRORS, ApiPagination, ErrorSerializer, paginate, request_player_id
from handhistory import widerpoker as history
from tables.api.common import BoardSerializer


class DrawSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    key = serializers.ListField(child=serializers.IntegerField())
    cards = serializers.ListField(child=serializers.CharField())
    strength = serializers.IntegerField()
    category = serializers.IntegerField()
    category_label = serializers.CharField()
    bought = serializers.BooleanField()
    best = serializers.BooleanField()


class RedealSerializer(serializers.Serializer[Any]):
    number = serializers.IntegerField()
    combination = serializers.ListField(child=serializers.IntegerField())
    cards = serializers.ListField(child=serializers.CharField())


class HandEntrySerializer(serializers.Serializer[Any]):
    """One entry of a hand in the history (handhistory.widerpoker.EntryView)."""

    id = serializers.IntegerField()
    player = serializers.CharField()
    join_order = serializers.IntegerField()
    initial_combination = serializers.ListField(child=serializers.IntegerField())
    initial_cards = serializers.ListField(child=serializers.CharField())
    redeals = RedealSerializer(many=True)
    combination = serializers.ListField(child=serializers.IntegerField())
    cards = serializers.ListField(child=serializers.CharField())
    hold_chosen = serializers.CharField(allow_null=True, help_text="H = held, D = discarded.")
    hold_used = serializers.CharField(allow_null=True)
    connected_at_end = serializers.BooleanField(allow_null=True)
    draws_bought = serializers.IntegerField()
    draws = DrawSerializer(many=True)
    best_draw = serializers.IntegerField(allow_null=True)
    final_cards = serializers.ListField(child=serializers.CharField())
    strength = serializers.IntegerField(allow_null=True)
    category = serializers.IntegerField(allow_null=True)
    category_label = serializers.CharField(allow_blank=True)
    place = serializers.IntegerField(allow_null=True)
    prize_minor = serializers.IntegerField()
    paid_minor = serializers.IntegerField()
    net_minor = serializers.IntegerField(allow_null=True)


class HandListApi(APIView):
    """The hands the player played, most recent first, paginated."""

    pagination_class = ApiPagination

    class OutputSerializer(serializers.Serializer[Any]):
        hand_id = serializers.IntegerField()
        table_id = serializers.IntegerField()
        table_name = serializers.CharField()
        number = serializers.IntegerField()
        status = serializers.CharField()
        started_at = serializers.DateTimeField()
        currency = serializers.CharField()
        category = serializers.IntegerField(allow_null=True)
        category_label = serializers.CharField(allow_blank=True)
        place = serializers.IntegerField(allow_null=True)
        entry_count = serializers.IntegerField()
        paid_minor = serializers.IntegerField()
        prize_minor = serializers.IntegerField()
        net_minor = serializers.IntegerField(allow_null=True)

        class Meta:
            ref_name = "PlayerHand"

    @extend_schema(operation_id="hands_list", responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        entries = history.list_player_hands(user_id=request_player_id(request))
        return paginate(
            self,
            request,
            entries,
            self.OutputSerializer,
            lambda page: [history.summarize_player_hand(entry) for entry in page],
        )


class HandDetailApi(APIView):
    """A hand the player played (auditors: any hand). The seed and the change keys appear
    only once the hand is settled or cancelled. 404 ``hand_not_found`` otherwise."""

    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.IntegerField()
        table_id = serializers.IntegerField()
        table_name = serializers.CharField()
        number = serializers.IntegerField()
        status = serializers.CharField()
        is_terminal = serializers.BooleanField()
        started_at = serializers.DateTimeField()
        change_deadline = serializers.DateTimeField()
        settled_at = serializers.DateTimeField(allow_null=True)
        config = serializers.JSONField()
        currency = serializers.CharField()
        commitment = serializers.CharField()
        board = BoardSerializer()
        server_seed = serializers.CharField(allow_null=True)
        change_keys = serializers.ListField(
            child=serializers.ListField(child=serializers.IntegerField()), allow_null=True
        )
        entry_count = serializers.IntegerField()
        antes_minor = serializers.IntegerField()
        draws_minor = serializers.IntegerField()
        redeals_minor = serializers.IntegerField()
        gross_minor = serializers.IntegerField()
        rake_minor = serializers.IntegerField(allow_null=True)
        carry_in_minor = serializers.IntegerField(allow_null=True)
        pool_minor = serializers.IntegerField(allow_null=True)
        breakage_minor = serializers.IntegerField(allow_null=True)
        leaderboard = serializers.JSONField()
        cancel_reason = serializers.CharField(allow_blank=True)
        viewer_entry = HandEntrySerializer(allow_null=True)
        entries_visible = serializers.BooleanField()

        class Meta:
            ref_name = "HandHistory"

    @extend_schema(operation_id="hands_retrieve", responses={200: OutputSerializer, **ERRORS})
    def get(self, request: Request, hand_id: int) -> Response:
        hand = history.get_hand_history(hand_id=hand_id, viewer=request.user)
        return Response(self.OutputSerializer(hand).data)


class HandEntryListApi(APIView):
    """Every entry of a hand, best place first, paginated: once the hand is over for its
    players, always for auditors; before that a player gets only his own entry."""

    pagination_class = ApiPagination

    @extend_schema(
        operation_id="hands_entries_list",
        responses={200: HandEntrySerializer(many=True), 404: ErrorSerializer},
    )
    def get(self, request: Request, hand_id: int) -> Response:
        entries = history.list_hand_entries(hand_id=hand_id, viewer=request.user)
        return paginate(
            self,
            request,
            entries,
            HandEntrySerializer,
            lambda page: history.describe_entries(hand_id=hand_id, entries=page),
        )
