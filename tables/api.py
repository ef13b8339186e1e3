"""The REST API: tables and play, wallet, and the player's hand history.

Every view is an adapter: parse the request, call one service or selector, answer. Money is
in integer minor units. Domain errors become ``{"code", "message", "extra"}`` bodies in the
project's exception handler (config.api); request validation errors answer 400 ``invalid``.
Play actions answer with the player's private state (``entry_state``), the same payload the
game socket pushes, so a client can render from either.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle
from rest_framework.views import APIView

from handhistory import selectors as history
from tables import selectors, services
from wallet import selectors as wallet_selectors
from wallet import services as wallet_services
from wallet.models import Currency

# --- shared output shapes -----------------------------------------------------------------


class ErrorSerializer(serializers.Serializer[Any]):
    """The body of every error answer (config.api.exception_handler)."""

    code = serializers.CharField(help_text="Stable machine-readable code, e.g. phase_closed.")
    message = serializers.CharField()
    extra = serializers.JSONField()


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
    max_redeals = serializers.IntegerField()
    redeal_price_minor = serializers.IntegerField()
    redeal_deadline = serializers.DateTimeField(allow_null=True)
    paid_minor = serializers.IntegerField()
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


class BalanceSerializer(serializers.Serializer[Any]):
    currency = serializers.CharField()
    balance_minor = serializers.IntegerField()


class WalletSerializer(serializers.Serializer[Any]):
    """The player's balances in every currency and the fun-chip top-up rule."""

    balances = BalanceSerializer(many=True)
    fun_top_up_below_minor = serializers.IntegerField()
    fun_top_up_to_minor = serializers.IntegerField()


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
    """One entry of a hand in the history (handhistory.selectors.EntryView)."""

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


def _player_id(request: Request) -> int:
    """The id of the authenticated player (every view requires authentication)."""
    user_id = request.user.pk
    if not isinstance(user_id, int):
        raise NotAuthenticated()
    return user_id


def _paginate(
    view: APIView,
    request: Request,
    items: QuerySet[Any] | Sequence[Any],
    serializer_class: type[serializers.Serializer[Any]],
    describe: Callable[[list[Any]], list[Any]] = list,
) -> Response:
    """One page of ``items`` (a queryset or list), each page's rows passed through
    ``describe`` before serialising, in the paginator's envelope."""
    paginator = ApiPagination()
    page: list[Any] | None = paginator.paginate_queryset(items, request, view=view)  # type: ignore[arg-type]  # querysets and lists both page
    assert page is not None
    return paginator.get_paginated_response(serializer_class(describe(page), many=True).data)


class ApiPagination(PageNumberPagination):
    """``?page=N&page_size=M`` (at most 200 a page)."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


ERRORS = {400: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer}


class ActionThrottle(UserRateThrottle):
    """Rate limit of play and wallet actions per player (``user`` rate of the settings)."""


# --- tables ------------------------------------------------------------------------------


class TableListApi(APIView):
    """The lobby: every table with its conditions, players, phase and live pool."""

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
        redeal_price_minor = serializers.IntegerField()
        max_draws = serializers.IntegerField()
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
        state = selectors.get_table_state(table_id=table_id)
        services.touch_presence(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        return Response(TableStateSerializer(state).data)


class TableEntryStateApi(APIView):
    """The player's private state at a table: seat, balance, own entry in the current hand
    (cards, choices, probability panel, result). Notes the player's presence."""

    @extend_schema(operation_id="tables_me", responses={200: EntryStateSerializer, **ERRORS})
    def get(self, request: Request, table_id: int) -> Response:
        services.touch_presence(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        state = selectors.get_entry_state(table_id=table_id, user_id=_player_id(request))
        return Response(EntryStateSerializer(state).data)


def _entry_state(table_id: int, user_id: int) -> Response:
    state = selectors.get_entry_state(table_id=table_id, user_id=user_id)
    return Response(EntryStateSerializer(state).data)


class TableJoinApi(APIView):
    """Take a seat; the player plays from the next hand (409 ``table_closed``)."""

    throttle_classes = [ActionThrottle]

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        services.join_table(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        return _entry_state(table_id, _player_id(request))


class TableLeaveApi(APIView):
    """Leave the table; an entry in the running hand stays in play (409 ``not_seated``)."""

    throttle_classes = [ActionThrottle]

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        services.leave_table(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        return _entry_state(table_id, _player_id(request))


class TableSitOutApi(APIView):
    """Watch without playing from the next hand on (no ante)."""

    throttle_classes = [ActionThrottle]

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        services.sit_out(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        return _entry_state(table_id, _player_id(request))


class TableSitInApi(APIView):
    """Play again from the next hand."""

    throttle_classes = [ActionThrottle]

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        services.sit_in(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        return _entry_state(table_id, _player_id(request))


class EntryHoldApi(APIView):
    """Choose the cards to hold, one boolean per column (rules B.2); the last hold received
    before the deadline is played. 409 ``phase_closed`` / ``not_in_hand``; 400 ``invalid``."""

    throttle_classes = [ActionThrottle]

    class InputSerializer(serializers.Serializer[Any]):
        hold = serializers.ListField(
            child=serializers.BooleanField(),
            min_length=5,
            max_length=5,
            help_text="Five booleans, column 0 first; true = hold the card.",
        )

        class Meta:
            ref_name = "HoldInput"

    @extend_schema(
        operation_id="tables_hold",
        request=InputSerializer,
        responses={200: EntryStateSerializer, **ERRORS},
    )
    def post(self, request: Request, table_id: int) -> Response:
        data = self.InputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.set_hold(
            table_id=table_id,
            user_id=_player_id(request),
            hold=data.validated_data["hold"],
            now=timezone.now(),
        )
        return _entry_state(table_id, _player_id(request))


class DrawBuyApi(APIView):
    """Buy one more draw (rules C.1). 409 ``phase_closed``, ``limit_reached``,
    ``insufficient_funds``; nothing is charged on error."""

    throttle_classes = [ActionThrottle]

    @extend_schema(
        operation_id="tables_draws_buy",
        request=None,
        responses={200: EntryStateSerializer, **ERRORS},
    )
    def post(self, request: Request, table_id: int) -> Response:
        services.buy_draw(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        return _entry_state(table_id, _player_id(request))


class RedealBuyApi(APIView):
    """Fold the initial combination and buy a new one (rules C.2). 409 ``phase_closed``,
    ``redeal_closed``, ``limit_reached``, ``insufficient_funds``."""

    throttle_classes = [ActionThrottle]

    @extend_schema(
        operation_id="tables_redeals_buy",
        request=None,
        responses={200: EntryStateSerializer, **ERRORS},
    )
    def post(self, request: Request, table_id: int) -> Response:
        services.buy_redeal(table_id=table_id, user_id=_player_id(request), now=timezone.now())
        return _entry_state(table_id, _player_id(request))


# --- wallet ------------------------------------------------------------------------------


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
        return _wallet(_player_id(request))


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
            user_id=_player_id(request), currency=filters.validated_data.get("currency")
        )
        return _paginate(self, request, entries, self.OutputSerializer)


class WalletTopUpApi(APIView):
    """Top the FUN chips back up when low (409 ``top_up_refused`` otherwise)."""

    throttle_classes = [ActionThrottle]

    @extend_schema(request=None, responses={200: WalletSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        wallet_services.top_up_fun_chips(user_id=_player_id(request))
        return _wallet(_player_id(request))


# --- hand history ------------------------------------------------------------------------


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
        entries = history.list_player_hands(user_id=_player_id(request))
        return _paginate(
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
        return _paginate(
            self,
            request,
            entries,
            HandEntrySerializer,
            lambda page: history.describe_entries(hand_id=hand_id, entries=page),
        )
