"""The WiderPoker game screen (HTML): the table's URL serves it when the table plays
WiderPoker (``tables.views.table_page`` asks the registry, ``Game.page``).

An adapter only: it embeds the two frames the pushes carry (``table_state`` and the
caller's ``entry_state``, tables/realtime/frames.py); static/js/table.js then follows the
table socket and re-reads the snapshot after a reconnection or a missed version. A player
back after a disconnection hears, once, the result of a hand that ended while he was away.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Final

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from tables.errors import TableNotFoundError
from tables.selectors import find_missed_result
from tables.tournaments.models import Tournament
from tables.widerpoker.selectors import get_entry_state, get_table_state

SEAT_FORMS: Final = ("join", "leave", "sit-out", "sit-in")
"""The no-JavaScript seat forms the screen shows (``tables.views.seat_action``'s slugs)."""


def table_page(request: HttpRequest, table_id: int) -> HttpResponse:
    """The game screen of a logged-in player (``request.user``): board, his cards,
    probability panel, purchases and results, rendered with the current snapshot embedded.
    Raises Http404 for a missing table."""
    user_id = int(request.user.pk or 0)
    try:
        snapshot = {
            "table": get_table_state(table_id=table_id),
            "private": get_entry_state(table_id=table_id, user_id=user_id),
        }
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
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
    missed = find_missed_result(table_id=table_id, user_id=user_id, since=timezone.now() - timedelta(days=1))
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
            "seat_actions": [action for action in SEAT_FORMS if action != "leave" or not tournament],
        },
    )
