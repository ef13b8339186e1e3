"""REST API of BigHoldem practice games (seed 004; docs/holdem-tables.md, "Practice
games (BigHoldem)"): start one with the setup items, read its banner, stop it, read the
leaderboard. The hands themselves are played with the Hold'em actions
(``/api/tables/<table_id>/holdem/<action>/``) like at any table."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tables.api.common import ACTION_THROTTLES, ERRORS, ErrorSerializer, _player_id
from tables.holdem.practice.selectors import get_practice_banner, list_practice_leaderboard
from tables.holdem.practice.services import start_practice_game, stop_practice_game
from tables.holdem.practice.setup import DEFAULT_CURRENCY_LABEL, PracticeSetup


class PracticeBannerSerializer(serializers.Serializer[Any]):
    """A practice game as its banner shows it (amounts in FUN minor units)."""

    game_id = serializers.IntegerField()
    table_id = serializers.IntegerField(help_text="The Hold'em table the game is played at.")
    interactive = serializers.BooleanField()
    nickname = serializers.CharField()
    status = serializers.ChoiceField(choices=["running", "finished"])
    end_reason = serializers.CharField(help_text="one_left, hands, time, player_out, abandoned; empty while running.")
    currency_label = serializers.CharField()
    felt = serializers.CharField()
    players = serializers.IntegerField()
    players_left = serializers.IntegerField()
    level = serializers.IntegerField()
    small_blind_minor = serializers.IntegerField()
    big_blind_minor = serializers.IntegerField()
    ante_minor = serializers.IntegerField()
    hands_played = serializers.IntegerField()
    hands_left = serializers.IntegerField(allow_null=True)
    seconds_left = serializers.IntegerField()
    eliminations = serializers.ListField(child=serializers.ListField(), help_text="[name, hand] in order.")


def _banner_data(game_id: int) -> Any:
    banner = get_practice_banner(game_id=game_id, now=timezone.now())
    data = asdict(banner)
    data["eliminations"] = [list(pair) for pair in banner.eliminations]
    return PracticeBannerSerializer(data).data


class PracticeStartApi(APIView):
    """Start a practice game (``nickname`` empty: bots only). 400
    ``invalid_practice_setup`` with the item in ``extra.field``, or ``practice_fun_only``;
    409 ``practice_limit`` (the player's running games are at the cap, ``extra.limit``);
    503 ``practice_full`` (the site's are); 403 ``self_excluded``, ``time_out``,
    ``suspended``, 409 ``session_limit`` (a player barred from play, as at the tables)."""

    throttle_classes = ACTION_THROTTLES

    class InputSerializer(serializers.Serializer[Any]):
        nickname = serializers.CharField(required=False, allow_blank=True, default="")
        players = serializers.IntegerField(required=False, default=10)
        max_hands = serializers.IntegerField(required=False, allow_null=True, default=100)
        max_minutes = serializers.IntegerField(required=False, default=30)
        max_raises = serializers.IntegerField(required=False, default=3)
        currency_label = serializers.CharField(required=False, default=DEFAULT_CURRENCY_LABEL)
        action_seconds = serializers.IntegerField(required=False, default=30)
        ante = serializers.BooleanField(required=False, default=False)
        betting = serializers.CharField(required=False, default="pot-limit")
        stakes = serializers.CharField(required=False, default="standard")
        show_probabilities = serializers.BooleanField(required=False, default=True)
        felt = serializers.CharField(required=False, default="green")
        currency = serializers.CharField(required=False, default="FUN")

        class Meta:
            ref_name = "PracticeSetup"

    @extend_schema(
        operation_id="practice_start",
        request=InputSerializer,
        responses={201: PracticeBannerSerializer, **ERRORS, 403: ErrorSerializer, 503: ErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        user_id = _player_id(request)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        nickname = str(data.pop("nickname"))
        game = start_practice_game(user_id=user_id, nickname=nickname, setup=PracticeSetup(**data), now=timezone.now())
        return Response(_banner_data(game.pk), status=201)


class PracticeDetailApi(APIView):
    """A practice game's banner (public). 404 ``practice_not_found``."""

    permission_classes = [AllowAny]

    @extend_schema(operation_id="practice_retrieve", responses={200: PracticeBannerSerializer, **ERRORS})
    def get(self, request: Request, game_id: int) -> Response:
        return Response(_banner_data(game_id))


class PracticeStopApi(APIView):
    """Stop a running practice game (its player only: 403 ``practice_not_yours``; 409
    ``practice_over``)."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(operation_id="practice_stop", request=None, responses={200: PracticeBannerSerializer, **ERRORS})
    def post(self, request: Request, game_id: int) -> Response:
        _ = request.data  # the body is parsed like every POST's: a bad one is refused first (too_deep, ...)
        stop_practice_game(game_id=game_id, user_id=_player_id(request), now=timezone.now())
        return Response(_banner_data(game_id))


class PracticeLeaderboardApi(APIView):
    """The public leaderboard: nicknames by average win per hand (``score_minor``, FUN
    minor units per hand, as a decimal string of the exact fraction rounded to 0.01)."""

    permission_classes = [AllowAny]

    class OutputSerializer(serializers.Serializer[Any]):
        place = serializers.IntegerField()
        nickname = serializers.CharField()
        games = serializers.IntegerField()
        hands = serializers.IntegerField()
        net_minor = serializers.IntegerField()
        score_minor = serializers.CharField()

        class Meta:
            ref_name = "PracticeLeaderboardLine"

    @extend_schema(operation_id="practice_leaderboard", responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        lines = [
            {**asdict(line), "score_minor": f"{float(line.score_minor):.2f}"} for line in list_practice_leaderboard()
        ]
        return Response(self.OutputSerializer(lines, many=True).data)
