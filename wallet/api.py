"""REST API of the player's wallet: balances, statement and the fun-chip top-up."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.infra.jsonwire import parse_empty_body
from config.infra.rest import ACTION_THROTTLES, ERRORS, ApiPagination, paginate, request_player_id
from wallet import selectors as wallet_selectors
from wallet import services as wallet_services
from wallet.models import Currency


class BalanceSerializer(serializers.Serializer[Any]):
    currency = serializers.CharField()
    balance_minor = serializers.IntegerField()


class WalletSerializer(serializers.Serializer[Any]):
    """The player's balances in every currency and the fun-chip top-up rule."""

    balances = BalanceSerializer(many=True)
    fun_top_up_below_minor = serializers.IntegerField()
    fun_top_up_to_minor = serializers.IntegerField()


def _wallet(user_id: int) -> Response:
    balances = wallet_selectors.list_player_balances(user_id=user_id)
    return Response(
        WalletSerializer(
            {
                "balances": [{"currency": currency, "balance_minor": amount} for currency, amount in balances.items()],
                "fun_top_up_below_minor": settings.FUN_TOP_UP_BELOW_MINOR,
                "fun_top_up_to_minor": settings.FUN_TOP_UP_TO_MINOR,
            }
        ).data
    )


class WalletDetailApi(APIView):
    """The player's balance in every currency (minor units)."""

    @extend_schema(operation_id="wallet_retrieve", responses=WalletSerializer)
    def get(self, request: Request) -> Response:
        return _wallet(request_player_id(request))


class WalletTransactionListApi(APIView):
    """The player's statement, newest first, paginated; ``?currency=`` filters."""

    pagination_class = ApiPagination

    class FilterSerializer(serializers.Serializer[Any]):
        currency = serializers.ChoiceField(choices=Currency.choices, required=False)

        class Meta:
            ref_name = "TransactionFilter"

    class OutputSerializer(serializers.Serializer[Any]):
        id = serializers.IntegerField()
        created_at = serializers.DateTimeField(source="transfer.created_at")
        kind = serializers.CharField(source="transfer.kind")
        reference = serializers.CharField(source="transfer.reference")
        memo = serializers.CharField(source="transfer.memo")
        currency = serializers.CharField(source="account.currency")
        delta_minor = serializers.IntegerField()
        balance_after_minor = serializers.IntegerField()

        class Meta:
            ref_name = "WalletTransaction"

    @extend_schema(parameters=[FilterSerializer], responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        entries = wallet_selectors.list_account_entries(
            user_id=request_player_id(request), currency=filters.validated_data.get("currency")
        )
        return paginate(self, request, entries, self.OutputSerializer)


class WalletTopUpApi(APIView):
    """Top the FUN chips back up when low (409 ``top_up_refused`` otherwise)."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(request=None, responses={200: WalletSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        parse_empty_body(request.data)
        wallet_services.top_up_fun_chips(user_id=request_player_id(request))
        return _wallet(request_player_id(request))
