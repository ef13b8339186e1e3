"""The game screen (HTML), its JSON snapshot, and the seat actions as plain POST forms.

The screen plays over the table WebSocket (tables/realtime/consumers.py); these views give it its first
state, a snapshot to resynchronise from after a reconnect or a missed version, and a
fallback for browsers without JavaScript.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_POST

from tables import commands
from tables.errors import TableNotFoundError
from tables.holdem.page import holdem_table_page
from tables.models import TableGame
from tables.selectors import (
    find_missed_result,
    get_private_state,
    get_public_state,
    get_table,
    get_table_details,
    list_recent_hands,
)
from tables.services import seating
from tables.tournaments.models import Tournament
from wallet.errors import DomainError

SEAT_ACTIONS: dict[str, tuple[str, Promise]] = {
    "join": ("join", _("You are seated: you play from the next hand.")),
    "leave": ("leave", _("You left the table.")),
    "sit-out": ("sit_out", _("You sit out from the next hand and pay no ante.")),
    "sit-in": ("sit_in", _("You play again from the next hand.")),
}
"""The seat actions of the no-JavaScript forms: URL slug -> (action, confirmation)."""


class AuthenticatedHttpRequest(HttpRequest):
    """The request of a ``login_required`` view (for the type checker)."""

    user: User


def _snapshot(table_id: int, user_id: int) -> dict[str, Any]:
    """The public and private state of a table as the game screen consumes them."""
    try:
        return {
            "table": get_public_state(table_id=table_id),
            "private": get_private_state(table_id=table_id, user_id=user_id),
        }
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing


@require_GET
def table_details(request: HttpRequest, table_id: int) -> HttpResponse:
    """Every condition of a table, as the lobby promises (seed 001, Rake: "Inside the Game
    Lobby the player can get information on the cost of the ante and on the rake"): ante,
    speed, rake, prizes, draws, redeals, jackpots, the next special hand and the changes
    staff have scheduled for after the running hand. Public: nothing here is secret."""
    try:
        details = get_table_details(table_id=table_id)
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
    return render(request, "tables/details.html", {"t": details})


@login_required
@require_GET
def table_page(request: AuthenticatedHttpRequest, table_id: int) -> HttpResponse:
    """The game screen: board, the player's cards, probability panel, purchases and results.

    Rendered with the current snapshot embedded; table.js then follows the table socket.
    A Hold'em table's URL serves the Hold'em screen (tables/holdem/page.py, holdem.js).
    """
    try:
        game = get_table(table_id=table_id).game
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
    if game == TableGame.HOLDEM:
        return holdem_table_page(request, table_id, user_id=request.user.pk, username=request.user.get_username())
    snapshot = _snapshot(table_id, request.user.pk)
    urls = {
        "snapshot": reverse("table-snapshot", args=[table_id]),
        "socket": f"/ws/tables/{table_id}/",
        "lobby": reverse("lobby"),
        "login": reverse("login"),
        "hand_history": "/history/hands/",
        "session": reverse("responsible-gaming-session"),
        "limits": reverse("responsible-gaming"),
    }
    # A player back after a disconnection hears what happened while he was away, once.
    seen = int(request.session.get(f"missed:{table_id}", 0))
    missed = find_missed_result(table_id=table_id, user_id=request.user.pk, since=timezone.now() - timedelta(days=1))
    if missed is not None and missed["hand_id"] > seen:
        request.session[f"missed:{table_id}"] = missed["hand_id"]
    else:
        missed = None
    urls["recall"] = reverse("table-recall", args=[table_id])
    tournament = Tournament.objects.filter(table_id=table_id).exists()
    return render(
        request,
        "tables/table.html",
        {
            "table": snapshot["table"],
            "private": snapshot["private"],
            "missed": missed,
            "boot": {**snapshot, "urls": urls, "username": request.user.get_username(), "tournament": tournament},
            # A tournament's table has no Leave (TournamentLeaveError): Sit out stops the deal.
            "seat_actions": [action for action in SEAT_ACTIONS if action != "leave" or not tournament],
        },
    )


@require_GET
def table_recall(request: HttpRequest, table_id: int) -> JsonResponse:
    """Game recall: ``{"hands": [...]}``, the table's last finished hands (``list_recent_hands``)."""
    if not request.user.is_authenticated:
        return JsonResponse({"code": "not_authenticated", "message": gettext("Log in first.")}, status=401)
    return JsonResponse({"hands": list_recent_hands(table_id=table_id, user_id=int(request.user.pk or 0))})


@require_GET
def table_snapshot(request: HttpRequest, table_id: int) -> JsonResponse:
    """``{"table": public state, "private": the caller's entry state}``; counts as presence.

    Never contains a running hand's secrets (server seed, change keys): the selectors leave
    them out until the hand is settled or cancelled.
    """
    if not request.user.is_authenticated:
        return JsonResponse({"code": "not_authenticated", "message": gettext("Log in first.")}, status=401)
    snapshot = _snapshot(table_id, request.user.pk)
    seating.touch_presence(table_id=table_id, user_id=request.user.pk, now=timezone.now())
    return JsonResponse(snapshot)


@login_required
@require_POST
def seat_action(request: AuthenticatedHttpRequest, table_id: int, action: str) -> HttpResponse:
    """Join, leave, sit out or sit in with a plain form (the screen uses the socket)."""
    if action not in SEAT_ACTIONS:
        raise Http404(f"no seat action {action!r}")
    name, done = SEAT_ACTIONS[action]
    try:
        game = commands.game_of_table(table_id)
        parsed = commands.parse_body(name, request.POST, game=game)
        commands.execute(parsed, table_id=table_id, user_id=request.user.pk, now=timezone.now(), game=game)
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
    except DomainError as refusal:
        messages.error(request, refusal.for_people())
    else:
        messages.success(request, str(done))
        if action == "leave":
            return redirect("lobby")
    return redirect("table", table_id=table_id)
