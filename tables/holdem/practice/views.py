"""BigHoldem practice games (seed 004) as pages: the setup form (*assetto*), the running game
(the Hold'em screen with a practice banner), the end summary and the public leaderboard.
Adapters only: parse, call one service or selector of tables/holdem/practice/ (services.py, selectors.py),
render."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from config.client_ip import client_ip
from tables.holdem.page import holdem_table_page
from tables.holdem.practice.selectors import (
    PracticeBanner,
    get_practice_banner,
    get_practice_game,
    list_practice_leaderboard,
)
from tables.holdem.practice.services import resume_practice_game, start_practice_game, stop_practice_game
from tables.holdem.practice.setup import (
    ACTION_SECONDS_RANGE,
    CURRENCY_LABELS,
    DEFAULT_CURRENCY_LABEL,
    FELTS,
    HANDS_RANGE,
    MINUTES_RANGE,
    STAKES,
    PracticeSetup,
)
from tables.models import HoldemBetting, PracticeGame, PracticeStatus
from wallet import guests
from wallet.errors import DomainError


class AuthenticatedHttpRequest(HttpRequest):
    user: User


_STAKES_NAMES = {
    "short": pgettext_lazy("practice stakes", "short"),
    "standard": pgettext_lazy("practice stakes", "standard"),
    "deep": pgettext_lazy("practice stakes", "deep"),
}
_CURRENCY_NAMES = {
    "chips": pgettext_lazy("practice currency", "chips"),
    "fiches": pgettext_lazy("practice currency", "fiches"),
    "points": pgettext_lazy("practice currency", "points"),
    "play-euro": pgettext_lazy("practice currency", "play €"),
}
_FELT_NAMES = {
    "green": pgettext_lazy("felt colour", "green"),
    "blue": pgettext_lazy("felt colour", "blue"),
    "red": pgettext_lazy("felt colour", "red"),
}
_BETTING_NAMES: dict[str, Any] = {
    HoldemBetting.FIXED_LIMIT.value: pgettext_lazy("betting structure", "Limit"),
    HoldemBetting.POT_LIMIT.value: pgettext_lazy("betting structure", "Pot limit"),
    HoldemBetting.NO_LIMIT.value: pgettext_lazy("betting structure", "No limit"),
}
_END_NAMES = {
    "one_left": _("One player holds all the chips"),
    "hands": _("The number of hands was played"),
    "time": _("The maximum duration passed"),
    "player_out": _("The player was eliminated"),
    "abandoned": _("The player left the game"),
}
"""The setup choices' names for people (English as the service's keys and labels read); a
key missing here shows its service label. _END_NAMES: PracticeEnd's labels."""


class PracticeSetupForm(forms.Form):
    """The setup items of seed 004 (*assetto*), each explained. The service validates
    them again and its refusals show on the item with their code."""

    nickname = forms.CharField(
        max_length=24,
        required=False,
        label=_("Nickname"),
        help_text=_("Your name on the leaderboard (nome). Leave it empty to watch an automatic game of bots only."),
    )
    players = forms.TypedChoiceField(
        coerce=int,
        choices=[(n, str(n)) for n in range(2, 11)],
        initial=10,
        label=_("Players"),
        help_text=_("Players at the table, you included (giocatori): 2 to 10, so 1 to 9 bots when you play."),
    )
    max_hands = forms.IntegerField(
        required=False,
        min_value=HANDS_RANGE[0],
        max_value=HANDS_RANGE[1],
        initial=100,
        label=_("Max hands"),
        help_text=_("Hands in the game (mani), 1 to 1000; empty: no hand limit, the duration ends it."),
    )
    max_minutes = forms.IntegerField(
        min_value=MINUTES_RANGE[0],
        max_value=MINUTES_RANGE[1],
        initial=30,
        label=_("Max minutes"),
        help_text=_("Maximum duration in minutes (durata), 1 to 240: no new hand is dealt after it."),
    )
    max_raises = forms.IntegerField(
        min_value=1,
        max_value=9,
        initial=3,
        label=_("Max raises"),
        help_text=_("Raises allowed in each betting round (rilanci), 1 to 9; the seed's default is 3."),
    )
    currency_label = forms.ChoiceField(
        choices=[(key, _CURRENCY_NAMES.get(key, label)) for key, label in CURRENCY_LABELS.items()],
        initial=DEFAULT_CURRENCY_LABEL,
        label=_("Currency label"),
        help_text=_("What the chips are called (moneta). Always play chips: nothing is won or lost."),
    )
    action_seconds = forms.IntegerField(
        min_value=ACTION_SECONDS_RANGE[0],
        max_value=ACTION_SECONDS_RANGE[1],
        initial=30,
        label=_("Action seconds"),
        help_text=_("Seconds you have for each decision (timer), 10 to 60: 10 to act, the rest a time bank."),
    )
    ante = forms.BooleanField(
        required=False,
        label=_("Ante"),
        help_text=_("Every player pays one minimum chip before the deal (ante)."),
    )
    betting = forms.ChoiceField(
        choices=[(value, _BETTING_NAMES.get(value, label)) for value, label in HoldemBetting.choices],
        initial=HoldemBetting.POT_LIMIT,
        label=_("Betting"),
        help_text=_("Betting structure (limite). BigHoldem's bets never exceed the pot: pot limit."),
    )
    stakes = forms.ChoiceField(
        choices=[
            (key, format_lazy(_("{name} ({depth} big blinds)"), name=_STAKES_NAMES.get(key, key), depth=depth))
            for key, depth in STAKES.items()
        ],
        initial="standard",
        label=_("Stakes"),
        help_text=_("Stakes: how many big blinds deep everyone starts. The blinds rise as players are eliminated."),
    )
    show_probabilities = forms.BooleanField(
        required=False,
        initial=True,
        label=_("Show probabilities"),
        help_text=_("Show your probability of winning the hand (probabilità)."),
    )
    felt = forms.ChoiceField(
        choices=[(felt, _FELT_NAMES.get(felt, felt)) for felt in FELTS],
        initial="green",
        label=_("Felt"),
        help_text=_("The table's felt colour (tavolo)."),
    )

    def setup(self) -> PracticeSetup:
        """The cleaned items as the service's PracticeSetup."""
        data = self.cleaned_data
        return PracticeSetup(
            players=data["players"],
            max_hands=data["max_hands"],
            max_minutes=data["max_minutes"],
            max_raises=data["max_raises"],
            currency_label=data["currency_label"],
            action_seconds=data["action_seconds"],
            ante=data["ante"],
            betting=data["betting"],
            stakes=data["stakes"],
            show_probabilities=data["show_probabilities"],
            felt=data["felt"],
        )


@require_http_methods(["GET", "POST"])
def practice_setup(request: HttpRequest) -> HttpResponse:
    """The setup form (seed 004, *assetto*); a valid one starts the game at once.

    No account is needed (seed 004: "senza registrazione"): a visitor who is not logged in
    becomes a guest (wallet/guests.py) for this browser session when he starts a game; at
    most ``POKER_GUESTS_PER_ADDRESS_HOUR`` guests an hour from one client address
    (``guest_limit``)."""
    user = request.user
    anonymous = user.pk is None
    initial = {} if user.pk is None or guests.is_guest(user.pk) else {"nickname": user.get_username()[:24]}
    form = PracticeSetupForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            game = _start(request, nickname=form.cleaned_data["nickname"], setup=form.setup())
        except DomainError as error:
            name = str(error.extra.get("field", ""))
            form.add_error(name if name in form.fields else None, f"{error.for_people()} [{error.code}]")
        else:
            return redirect("practice-game", game_id=game.pk)
    return render(request, "tables/practice_setup.html", {"form": form, "anonymous": anonymous})


def _start(request: HttpRequest, *, nickname: str, setup: PracticeSetup) -> PracticeGame:
    """Start the game for the logged-in player, or for a new guest logged in for this
    session when nobody is; a guest whose game is refused is deleted again (nobody is left
    logged in as him). Raises what start_practice_game and count_guest_start raise."""
    if request.user.is_authenticated:
        return start_practice_game(user_id=request.user.pk, nickname=nickname, setup=setup, now=timezone.now())
    guests.count_guest_start(address=client_ip(request))
    guest = guests.create_guest()
    try:
        game = start_practice_game(user_id=guest.pk, nickname=nickname, setup=setup, now=timezone.now())
    except DomainError:
        guest.delete()
        raise
    login(request, guest, backend="django.contrib.auth.backends.ModelBackend")
    return game


def _banner(game_id: int) -> PracticeBanner:
    try:
        return get_practice_banner(game_id=game_id, now=timezone.now())
    except DomainError as missing:
        raise Http404(str(missing)) from missing


@login_required
@require_GET
def practice_game(request: AuthenticatedHttpRequest, game_id: int) -> HttpResponse:
    """The running game: the Hold'em screen with the practice banner (level, blinds, hands
    played and left, time left, eliminations). A finished game shows its summary."""
    banner = _banner(game_id)
    if banner.status != PracticeStatus.RUNNING:
        return redirect("practice-summary", game_id=game_id)
    game = get_practice_game(game_id)
    if game.owner_id == request.user.pk:
        resume_practice_game(game_id=game_id, user_id=request.user.pk, now=timezone.now())
    return holdem_table_page(
        request,
        banner.table_id,
        user_id=request.user.pk,
        username=request.user.get_username(),
        template="tables/practice_game.html",
        extra={"banner": banner, "is_owner": game.owner_id == request.user.pk},
    )


@require_GET
def practice_banner(request: HttpRequest, game_id: int) -> JsonResponse:
    """The banner as JSON (public), polled by the running page."""
    banner = _banner(game_id)
    return JsonResponse({field: getattr(banner, field) for field in banner.__dataclass_fields__})


@login_required
@require_POST
def practice_stop(request: AuthenticatedHttpRequest, game_id: int) -> HttpResponse:
    """Stop the game (its player only); the summary follows."""
    try:
        stop_practice_game(game_id=game_id, user_id=request.user.pk, now=timezone.now())
    except DomainError as error:
        messages.error(request, f"{error.for_people()} [{error.code}]")
        return redirect("practice-game", game_id=game_id)
    return redirect("practice-summary", game_id=game_id)


@require_GET
def practice_summary(request: HttpRequest, game_id: int) -> HttpResponse:
    """The end of a game: why it ended, every player's place, hands, net and average."""
    banner = _banner(game_id)
    game = get_practice_game(game_id)
    results: list[dict[str, Any]] = [
        {
            "place": r.place,
            "name": r.name,
            "is_bot": r.is_bot,
            "hands": r.hands,
            "net_minor": r.net_minor,
            "average": round(Fraction(r.net_minor, r.hands)) if r.hands else 0,  # minor units, for display
            "final_stack_minor": r.final_stack_minor,
            "eliminated_at_hand": r.eliminated_at_hand,
        }
        for r in game.results.all()
    ]
    return render(
        request,
        "tables/practice_summary.html",
        {
            "banner": banner,
            "game": game,
            "results": results,
            "end": _END_NAMES.get(game.end_reason, game.get_end_reason_display()),
        },
    )


@require_GET
def practice_leaderboard(request: HttpRequest) -> HttpResponse:
    """The public leaderboard of practice games by average win per hand (seed 004)."""
    lines = [
        {
            "place": line.place,
            "nickname": line.nickname,
            "games": line.games,
            "hands": line.hands,
            "net_minor": line.net_minor,
            "average": round(line.score_minor),  # minor units, for display
        }
        for line in list_practice_leaderboard()
    ]
    return render(request, "tables/practice_leaderboard.html", {"lines": lines})
