"""Views of the lobby, sign-up and wallet pages: parse, call one service or selector, render."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from config.infra.errors import DomainError
from handhistory.documents import localized_document, path_lang, render_document
from lobby.services import UsernameTakenError, register_player
from lobby.simulator import SimulatorForm, run_simulation, simulator_tables
from tables import games
from tables.realtime.push import push_player_on_commit
from wallet import guests
from wallet.models import Currency
from wallet.money import format_minor
from wallet.selectors import get_balance_minor, list_account_entries, list_player_balances
from wallet.services import top_up_fun_chips

ENTRIES_PER_PAGE = 20
LOBBY_REFRESH_SECONDS = 15


class AuthenticatedHttpRequest(HttpRequest):
    """The request of a ``login_required`` view (for the type checker)."""

    user: User


def lobby_sections() -> list[dict[str, Any]]:
    """The lobby's sections, one per game of the registry that lists its tables
    (``Game.lobby``), in the registry's order: ``{"game", "template", "json_key", "rows"}``,
    each game's rows as its own query lists them (nothing here filters them)."""
    return [
        {"game": game.key, "template": game.lobby.template, "json_key": game.lobby.json_key, "rows": game.lobby.rows()}
        for game in games.GAMES.values()
        if game.lobby is not None
    ]


@require_GET
def lobby(request: HttpRequest) -> HttpResponse:
    """The game lobby: each game's section (``Game.lobby``): the WiderPoker tables with
    their conditions, players and live prize pool, the Texas Hold'em tables with their
    stakes, seats and buy-in range. Each section's rows are also in the context under its
    ``json_key`` (``tables``, ``holdem_tables``).

    The page updates itself from the ``ws/lobby/`` socket and re-reads ``lobby/tables.json``
    every ``LOBBY_REFRESH_SECONDS`` as a fallback.
    """
    sections = lobby_sections()
    context: dict[str, Any] = {section["json_key"]: section["rows"] for section in sections}
    return render(
        request,
        "lobby/lobby.html",
        {**context, "sections": sections, "refresh_seconds": LOBBY_REFRESH_SECONDS},
    )


@require_GET
def simulator(request: HttpRequest) -> HttpResponse:
    """The prize-pool simulator page (lobby/simulator.py); a GET form, so a result can be
    bookmarked and shared. ``?table=<id>`` alone fills in that table's conditions."""
    result = None
    if set(request.GET) - {"table"}:
        form = SimulatorForm(request.GET)
        if form.is_valid():
            result = run_simulation(form.cleaned_data)
    else:
        table = (
            simulator_tables().filter(pk=request.GET.get("table") or 0).first()
            if request.GET.get("table", "").isdigit()
            else None
        )
        form = SimulatorForm(initial=SimulatorForm.initial_for(table) if table else None)
    return render(request, "lobby/simulator.html", {"form": form, "result": result})


@require_GET
def rules(request: HttpRequest) -> HttpResponse:
    """How to play, rendered from docs/rules.md, or its translation (docs/rules.it.md, written
    from seed 002) in the player's language; tables and code, raw HTML shown as text."""
    path, translated = localized_document(settings.BASE_DIR / "docs" / "rules.md", get_language())
    title, html = render_document(path)
    return render(
        request,
        "lobby/document.html",
        {"title": title, "html": html, "translated": translated, "lang": path_lang(path)},
    )


@require_GET
def lobby_tables(request: HttpRequest) -> JsonResponse:
    """Each game's lobby lines as JSON, under its section's ``json_key`` (the lobby's
    polling fallback): ``tables`` (WiderPoker, the ``lobby_table`` frame's line) and
    ``holdem_tables`` (``HoldemLobbyRow``)."""
    return JsonResponse({section["json_key"]: section["rows"] for section in lobby_sections()})


def sign_up(request: HttpRequest) -> HttpResponse:
    """Create an account, grant the sign-up FUN chips, log the player in, go to the lobby.
    A guest (wallet/guests.py) may sign up: the new account replaces the guest's login."""
    if request.user.is_authenticated and not guests.is_guest(request.user.pk):
        return redirect("lobby")
    form: UserCreationForm[User] = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["username"].lower().startswith(guests.GUEST_PREFIX):
            form.add_error("username", _("Names starting with “guest-” are kept for guests."))
            return render(request, "lobby/signup.html", {"form": form})
        try:
            user = register_player(username=form.cleaned_data["username"], password=form.cleaned_data["password1"])
        except UsernameTakenError:
            form.add_error("username", _("A user with that username already exists."))
            return render(request, "lobby/signup.html", {"form": form})
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(
            request,
            _("Welcome, %(name)s! You received %(amount)s to play with.")
            % {"name": user.username, "amount": format_minor(settings.FUN_SIGNUP_GRANT_MINOR, Currency.FUN)},
        )
        return redirect("lobby")
    return render(request, "lobby/signup.html", {"form": form})


@login_required
@require_GET
def wallet(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The player's balances per currency and their transactions, newest first, paginated."""
    currency = request.GET.get("currency")
    if currency not in Currency.values:
        currency = None
    entries = list_account_entries(user_id=request.user.pk, currency=currency)
    page = Paginator(entries, ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "lobby/wallet.html",
        {
            "balances": list_player_balances(user_id=request.user.pk),
            "page": page,
            "currency": currency,
            "currencies": Currency.values,
            "top_up_below_minor": settings.FUN_TOP_UP_BELOW_MINOR,
            "top_up_to_minor": settings.FUN_TOP_UP_TO_MINOR,
        },
    )


@login_required
@require_POST
def top_up(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Top the FUN wallet back up when it is low; a refusal is shown with its reason."""
    try:
        top_up_fun_chips(user_id=request.user.pk)
    except DomainError as refusal:
        messages.error(request, _("Top-up refused: %(reason)s.") % {"reason": refusal.for_people().rstrip(".")})
    else:
        push_player_on_commit(request.user.pk)  # his open game screens show the new balance
        balance = get_balance_minor(user_id=request.user.pk, currency=Currency.FUN)
        messages.success(
            request,
            _("Fun chips topped up: your balance is %(amount)s.") % {"amount": format_minor(balance, Currency.FUN)},
        )
    return redirect("wallet")
