"""REST API of tournaments (docs/tournaments.md, docs/protocol.md "Tournaments"): the list,
one tournament's state with the live standing, register (or re-enter) and unregister, and
the auditors' export. Money and chips in minor units; times ISO 8601."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.infra.rest import ACTION_THROTTLES, ERRORS, ErrorSerializer, request_player_id
from tables.tournaments import selectors, services


def _viewer(request: Request) -> int | None:
    user_id = request.user.pk if request.user and request.user.is_authenticated else None
    return int(user_id) if isinstance(user_id, int) else None


class TournamentSummarySerializer(serializers.Serializer[Any]):
    """A tournament's lobby line."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    state = serializers.ChoiceField(choices=["scheduled", "registering", "running", "finished", "cancelled"])
    mode = serializers.CharField()
    currency = serializers.CharField(help_text="The currency of the buy-in, fee and prizes (EUR, FUN).")
    starts_at = serializers.DateTimeField()
    seconds_to_start = serializers.IntegerField()
    buy_in_minor = serializers.IntegerField()
    fee_minor = serializers.IntegerField()
    guaranteed_minor = serializers.IntegerField()
    starting_chips_minor = serializers.IntegerField(help_text="In hundredths of a chip.")
    hands = serializers.IntegerField(allow_null=True)
    duration_minutes = serializers.IntegerField(allow_null=True)
    change_seconds = serializers.IntegerField()
    entries = serializers.IntegerField()
    max_entrants = serializers.IntegerField()
    registration_open = serializers.BooleanField()
    table_id = serializers.IntegerField(allow_null=True, help_text="The table its hands are played at.")
    registered = serializers.BooleanField(required=False, help_text="The caller holds an entry (list only).")


class StandingSerializer(serializers.Serializer[Any]):
    rank = serializers.IntegerField()
    player = serializers.CharField()
    chips_minor = serializers.IntegerField()


class ResultSerializer(serializers.Serializer[Any]):
    place = serializers.IntegerField()
    player = serializers.CharField()
    prize_minor = serializers.IntegerField()
    chips_minor = serializers.IntegerField()


class MyEntrySerializer(serializers.Serializer[Any]):
    entrant_id = serializers.IntegerField()
    entry_number = serializers.IntegerField()
    status = serializers.ChoiceField(
        choices=["registered", "withdrawn", "playing", "eliminated", "finished", "refunded"]
    )
    chips_minor = serializers.IntegerField()
    rank = serializers.IntegerField(allow_null=True)
    place = serializers.IntegerField(allow_null=True)
    prize_minor = serializers.IntegerField()
    eliminated_at_hand = serializers.IntegerField(allow_null=True)
    can_reenter = serializers.BooleanField()


class TournamentSerializer(TournamentSummarySerializer):
    """A tournament's state as its page shows it, the standing after the last hand."""

    antes = serializers.JSONField(help_text='[{"from_hand": 1, "ante_minor": 1000}, ...]')
    draw_price_bps = serializers.IntegerField()
    max_draws = serializers.IntegerField()
    redeal_price_minor = serializers.IntegerField()
    max_redeals = serializers.IntegerField()
    results_seconds = serializers.IntegerField()
    late_registration_hands = serializers.IntegerField()
    max_reentries = serializers.IntegerField()
    chips = serializers.CharField(help_text="The chips' currency code, T<id>.")
    hands_dealt = serializers.IntegerField()
    hands_played = serializers.IntegerField()
    level = serializers.IntegerField()
    ante_minor = serializers.IntegerField()
    players_left = serializers.IntegerField()
    prize_pool_minor = serializers.IntegerField()
    paid_places = serializers.IntegerField()
    phase = serializers.CharField(allow_null=True)
    phase_deadline = serializers.DateTimeField(allow_null=True)
    cancel_reason = serializers.CharField(allow_blank=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    standings_after_hand = serializers.IntegerField()
    standings = StandingSerializer(many=True)
    me = MyEntrySerializer(allow_null=True)
    results = ResultSerializer(many=True)


class TournamentListApi(APIView):
    """Tournaments not over (soonest first) and the last ten over (public)."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="tournaments_list", responses={200: TournamentSummarySerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(selectors.list_tournaments(now=timezone.now(), user_id=_viewer(request)))


class TournamentDetailApi(APIView):
    """One tournament with the standing after its last hand (public; ``me`` for the
    caller). 404 ``tournament_not_found``."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="tournaments_retrieve", responses={200: TournamentSerializer, **ERRORS})
    def get(self, request: Request, tournament_id: int) -> Response:
        data = selectors.get_tournament(tournament_id=tournament_id, user_id=_viewer(request), now=timezone.now())
        return Response(data)


class TournamentRegisterApi(APIView):
    """Register, or re-enter after an elimination: the buy-in and fee are held until the
    start (taken at once during the late registration). 409 ``registration_closed``,
    ``already_registered``, ``reentry_limit``, ``tournament_full``, ``insufficient_funds``,
    ``session_limit``, ``loss_limit``; 403 ``self_excluded``, ``time_out``, ``suspended``;
    404 ``tournament_not_found``."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(
        operation_id="tournaments_register",
        request=None,
        responses={201: TournamentSerializer, **ERRORS, 403: ErrorSerializer},
    )
    def post(self, request: Request, tournament_id: int) -> Response:
        _ = request.data
        user_id = request_player_id(request)
        now = timezone.now()
        services.register(tournament_id=tournament_id, user_id=user_id, now=now)
        return Response(selectors.get_tournament(tournament_id=tournament_id, user_id=user_id, now=now), status=201)


class TournamentUnregisterApi(APIView):
    """Withdraw a registration before the start; the hold is released. 409
    ``not_registered``, ``registration_closed`` (started); 404 ``tournament_not_found``."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(operation_id="tournaments_unregister", request=None, responses={200: TournamentSerializer, **ERRORS})
    def post(self, request: Request, tournament_id: int) -> Response:
        _ = request.data
        user_id = request_player_id(request)
        now = timezone.now()
        services.unregister(tournament_id=tournament_id, user_id=user_id, now=now)
        return Response(selectors.get_tournament(tournament_id=tournament_id, user_id=user_id, now=now))


class TournamentExportApi(APIView):
    """The auditors' export: conditions, entries, the standings after each hand with its
    hand's id, places and prizes (docs/export-format.md, "Tournament export"). Public."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="tournaments_export", responses={200: OpenApiTypes.OBJECT, **ERRORS})
    def get(self, request: Request, tournament_id: int) -> Response:
        return Response(selectors.tournament_export(tournament_id=tournament_id))
