"""REST API of play at a table: join, leave, sit out/in, hold, buy draws and redeals."""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.infra.rest import ACTION_THROTTLES, ERRORS, request_player_id
from tables import commands, games
from tables.api.common import EntryStateSerializer
from tables.games import Game
from tables.realtime.push import push_private_on_commit


def _act(request: Request, table_id: int, name: str, game: Game | None = None) -> Response:
    """Parse the body as action ``name`` of the table's game (``game``, else the registry's
    ``game_of``: cached, a table's game never changes), run it through the one way in
    (tables/commands.py, the same as the socket's) and answer with the player's new private
    frame (``Game.private_frame``: ``entry_state`` at a WiderPoker table, documented by
    EntryStateSerializer; ``holdem_private`` at a Hold'em table). A purchase the game
    batches (``Game.purchases``: a draw or redeal paid by the player) goes through the
    process's purchase writer (``_buy``)."""
    game = game or games.game_of(table_id)
    action = commands.parse_body(name, request.data, game=game)
    door = game.purchases
    if door is not None and door.batches(name, action.params) and door.enabled():
        return _buy(request, table_id, name, game)
    commands.execute(action, table_id=table_id, user_id=request_player_id(request), now=timezone.now(), game=game)
    return Response(game.private_frame(table_id, request_player_id(request)))


def _buy(request: Request, table_id: int, name: str, game: Game) -> Response:
    """A purchase through the purchase writer (tables/widerpoker/services/purchases.py): queued, then
    this request's worker thread waits for its batch's commit and answers with the
    private frame the writer built (no second read). The optional ``Idempotency-Key``
    header is the purchase's ``ref`` (one longer than 64 characters is kept as its digest):
    sent again after a lost answer, it is answered with the state and charged nothing. The
    player's open sockets at the table get the new state pushed, as for every REST action."""
    door = game.purchases
    assert door is not None
    user_id = request_player_id(request)
    order = door.order(
        name, table_id=table_id, user_id=user_id, now=timezone.now(), ref=request.headers.get("Idempotency-Key")
    )
    door.precheck(order)
    outcome = door.wait(order)
    if outcome.error is not None:
        raise outcome.error
    push_private_on_commit(table_id, user_id)  # no transaction open: published at once
    if outcome.frame is None:  # a duplicate: the state as it is now
        return Response(game.private_frame(table_id, user_id))
    return Response(outcome.frame)


class GameActionApi(APIView):
    """Any action of one game at a table of that game, the action named in the URL: the
    same parse and execute as the socket's; answers with the player's private frame. 400
    ``unknown_type`` for an action the game does not have, or a table of another game.
    ``game``: the key of the game the URL serves (a ``tables.games`` key, given by the URL
    conf)."""

    throttle_classes = ACTION_THROTTLES
    game: str = ""

    def post(self, request: Request, table_id: int, action: str) -> Response:
        request.data  # noqa: B018  # the body is parsed first: a bad one is refused as on every route
        game = games.game_of(table_id)
        if game.key != self.game:
            raise commands.UnknownActionError(f"table {table_id} is not a {games.get(self.game).label} table")
        return _act(request, table_id, action, game)


def alias_action_view(game: Game) -> type[GameActionApi]:
    """The view of a game's own action route, ``/api/tables/<id>/<game.rest_alias>/<action>/``
    (tables/api_urls.py builds one per game of the registry that declares ``rest_alias``):
    a ``GameActionApi`` serving ``game.key``, documented by ``game.rest_doc`` under the
    OpenAPI operation ``tables_<rest_alias>_action``. Raises ValueError for a game without
    ``rest_alias``."""
    if not game.rest_alias:
        raise ValueError(f"game {game.key!r} declares no rest_alias")

    @extend_schema(operation_id=f"tables_{game.rest_alias}_action", request=None, responses={200: None, **ERRORS})
    def post(self: GameActionApi, request: Request, table_id: int, action: str) -> Response:
        return GameActionApi.post(self, request, table_id, action)

    name = f"{game.rest_alias.title()}ActionApi"
    attrs = {"__doc__": game.rest_doc, "__module__": __name__, "__qualname__": name, "game": game.key, "post": post}
    return type(name, (GameActionApi,), attrs)


class TableJoinApi(APIView):
    """Take a seat; the player plays from the next hand (409 ``table_closed``)."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        return _act(request, table_id, "join")


class TableLeaveApi(APIView):
    """Leave the table; an entry in the running hand stays in play (409 ``not_seated``)."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        return _act(request, table_id, "leave")


class TableSitOutApi(APIView):
    """Watch without playing from the next hand on (no ante)."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        return _act(request, table_id, "sit_out")


class TableSitInApi(APIView):
    """Play again from the next hand."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(request=None, responses={200: EntryStateSerializer, **ERRORS})
    def post(self, request: Request, table_id: int) -> Response:
        return _act(request, table_id, "sit_in")


class EntryHoldApi(APIView):
    """Choose the cards to hold, one boolean per column (rules B.2); the last hold received
    before the deadline is played. 409 ``phase_closed`` / ``not_in_hand``; 400 ``invalid``."""

    throttle_classes = ACTION_THROTTLES

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
        # The serializer documents the body; the shared parse validates it exactly as the
        # socket does (five JSON booleans, no other field).
        return _act(request, table_id, "hold")


class PurchaseInput(serializers.Serializer[Any]):
    """The optional body of a purchase: ``{"free": true}`` uses a free item of the player's
    power-ups (seed 001, E); 409 ``no_free_item`` when he has none."""

    free = serializers.BooleanField(required=False, default=False)


IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "The purchase's ref: sent again with the same key (after a lost answer), the purchase is "
        "answered with the current state and charged nothing (docs/protocol.md)."
    ),
)


class DrawBuyApi(APIView):
    """Buy one more draw (rules C.1). 409 ``phase_closed``, ``limit_reached``,
    ``insufficient_funds``; nothing is charged on error."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(
        operation_id="tables_draws_buy",
        request=PurchaseInput,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: EntryStateSerializer, **ERRORS},
    )
    def post(self, request: Request, table_id: int) -> Response:
        return _act(request, table_id, "buy_draw")


class RedealBuyApi(APIView):
    """Fold the initial combination and buy a new one (rules C.2). 409 ``phase_closed``,
    ``redeal_closed``, ``limit_reached``, ``insufficient_funds``."""

    throttle_classes = ACTION_THROTTLES

    @extend_schema(
        operation_id="tables_redeals_buy",
        request=PurchaseInput,
        parameters=[IDEMPOTENCY_KEY],
        responses={200: EntryStateSerializer, **ERRORS},
    )
    def post(self, request: Request, table_id: int) -> Response:
        return _act(request, table_id, "redeal")
