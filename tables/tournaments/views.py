"""The players' tournament pages: the list, a tournament's page (register, unregister,
countdown, live standings), its state as JSON for the page's refresh, and the auditors'
export (docs/tournaments.md)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET, require_POST

from config.infra.errors import DomainError
from tables.tournaments import selectors, services
from tables.tournaments.errors import TournamentNotFoundError

STATE_REFRESH_SECONDS = 2
"""How often the tournament page re-reads its state (standings change once a hand)."""


def _user_id(request: HttpRequest) -> int | None:
    return int(request.user.pk) if request.user.is_authenticated else None


@require_GET
def tournament_list(request: HttpRequest) -> HttpResponse:
    """Every tournament not over (soonest first) and the last ones over, with the player's
    registrations."""
    rows = selectors.list_tournaments(now=timezone.now(), user_id=_user_id(request))
    return render(request, "tables/tournaments.html", {"tournaments": rows})


@require_GET
def tournament_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """A tournament's page: conditions, countdown, register or unregister, the standings
    after the last hand (chips, rank, paid places), the player's own standing, the results."""
    try:
        data = selectors.get_tournament(tournament_id=tournament_id, user_id=_user_id(request), now=timezone.now())
    except TournamentNotFoundError as missing:
        raise Http404(str(missing)) from missing
    return render(
        request,
        "tables/tournament.html",
        {"t": data, "boot": json.dumps(data), "refresh_seconds": STATE_REFRESH_SECONDS},
    )


@require_GET
def tournament_state(request: HttpRequest, tournament_id: int) -> JsonResponse:
    """The tournament page's state (``selectors.get_tournament``) as JSON."""
    try:
        data = selectors.get_tournament(tournament_id=tournament_id, user_id=_user_id(request), now=timezone.now())
    except TournamentNotFoundError as missing:
        return JsonResponse({"code": missing.code, "message": str(missing)}, status=404)
    return JsonResponse(data)


@require_GET
def tournament_export(request: HttpRequest, tournament_id: int) -> JsonResponse:
    """The auditors' export (docs/export-format.md, "Tournament export"), as a download."""
    try:
        data = selectors.tournament_export(tournament_id=tournament_id)
    except TournamentNotFoundError as missing:
        raise Http404(str(missing)) from missing
    response = JsonResponse(data)
    response["Content-Disposition"] = f'attachment; filename="tournament-{tournament_id}.json"'
    return response


ACTIONS = {
    "register": (services.register, _("You are registered: your buy-in is held until the start.")),
    "unregister": (services.unregister, _("Your registration is withdrawn and your buy-in released.")),
}


@login_required
@require_POST
def tournament_action(request: HttpRequest, tournament_id: int, action: str) -> HttpResponse:
    """Register (or re-enter) and unregister, as plain POST forms."""
    if action not in ACTIONS:
        raise Http404(f"no tournament action {action!r}")
    service, done = ACTIONS[action]
    try:
        service(tournament_id=tournament_id, user_id=int(request.user.pk or 0), now=timezone.now())
    except TournamentNotFoundError as missing:
        raise Http404(str(missing)) from missing
    except DomainError as refusal:
        messages.error(request, refusal.for_people())
    else:
        messages.success(request, str(done))
    return redirect("tournament", tournament_id=tournament_id)
