"""The Hold'em game screen (HTML): the table's URL serves it when the table's game is
Hold'em (``tables.views.table_page`` decides by ``table.game``).

An adapter only: it reads the two frames the pushes carry (``HoldemTableFrame`` and the
caller's ``HoldemPrivateFrame``, tables/holdem_frames.py) and embeds them; static/js/holdem.js
then follows the table socket and re-reads the snapshot after a reconnection or a missed
version. Hole cards are only the caller's (the private frame); others stay face down.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone

from tables.errors import TableNotFoundError
from tables.holdem.lobby import stakes_label
from tables.holdem.selectors import get_holdem_private_frame, get_holdem_table_frame


def holdem_table_page(
    request: HttpRequest,
    table_id: int,
    *,
    user_id: int,
    username: str,
    template: str = "tables/holdem.html",
    extra: dict[str, Any] | None = None,
) -> HttpResponse:
    """Render the Hold'em screen with both frames embedded (``template`` extends
    tables/holdem.html with ``extra`` context: a practice game's banner). Raises Http404
    for a missing table."""
    now = timezone.now()
    try:
        table = get_holdem_table_frame(table_id=table_id, now=now)
        private = get_holdem_private_frame(table_id=table_id, user_id=user_id, now=now)
    except TableNotFoundError as missing:
        raise Http404(str(missing)) from missing
    urls = {
        "snapshot": reverse("table-snapshot", args=[table_id]),
        "socket": f"/ws/tables/{table_id}/",
        "lobby": reverse("lobby"),
        "login": reverse("login"),
        "hand": "/history/holdem/{id}/",
        "phh": "/history/holdem/{id}/hand.phh",
        "my_hands": reverse("handhistory:my-hands"),
        "cards": static("cards/"),
    }
    config = table["config"]
    return render(
        request,
        template,
        (extra or {})
        | {
            "table": table,
            "private": private,
            "stakes": stakes_label(dict(config)),
            "seat_numbers": range(int(config["seats"])),
            "boot": {"table": table, "private": private, "urls": urls, "username": username},
        },
    )
