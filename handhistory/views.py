"""Pages of the hand history: my hands, one whole hand with its verification, the JSON
export. Each view parses, calls selectors, renders; access rules live in the selectors."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import get_language
from django.views.decorators.http import require_GET

from config.infra.errors import DomainError
from handhistory import export, holdem, selectors, widerpoker
from handhistory.documents import localized_document, path_lang, render_document
from handhistory.errors import HandNotFoundError, HandNotTerminalError
from handhistory.holdem_export import build_holdem_export
from handhistory.holdem_replay import HoldemReplay, holdem_replay
from handhistory.replay import EntryReplay, entry_replay
from handhistory.summary import holdem_summary, widerpoker_summary
from handhistory.verification import verify_hand
from tables.engine.holdem import HoldemError
from tables.models import HoldemHand
from tables.services import fairness as fairness_services

HANDS_PER_PAGE = 50
ENTRIES_PER_PAGE = 50


@require_GET
@login_required
def my_hands(request: HttpRequest) -> HttpResponse:
    """The hands the player played, most recent first (table, hand, date, final hand,
    place, prize, net)."""
    hands = widerpoker.list_player_hands(user_id=int(request.user.pk or 0))  # login_required
    page = Paginator(hands, HANDS_PER_PAGE).get_page(request.GET.get("page"))
    rows = [widerpoker.summarize_player_hand(entry) for entry in page.object_list]
    holdem_rows = list(holdem.list_player_holdem_hands(user_id=int(request.user.pk or 0))[:HANDS_PER_PAGE])
    return render(request, "handhistory/my_hands.html", {"page": page, "rows": rows, "holdem_rows": holdem_rows})


@require_GET
@login_required
def holdem_hand_detail(request: HttpRequest, hand_id: int) -> HttpResponse:
    """A Hold'em hand replayed street by street: players, cards shown (and the viewer's own),
    each action with its amount, the board, the pots with their rake and winners, and the
    verification in words with its checks one click away. The hand's players and staff who
    may view every hand read it once it is over; anyone who could watch the table (a
    watcher: issue 24, the link was a 404) reads its public replay, with only the cards
    shown at the showdown, or a page saying the hand is still being played. 404 for
    anyone else (a stranger to a private practice game)."""
    public = False
    try:
        history = holdem.get_holdem_history(hand_id=hand_id, viewer=request.user)
    except HandNotFoundError as error:
        watchable = holdem.find_watchable_holdem_hand(hand_id=hand_id, viewer=request.user)
        if watchable is None:
            raise Http404(str(error)) from error
        if not watchable.is_terminal:
            return render(request, "handhistory/holdem_running.html", {"hand": watchable})
        history = holdem.get_holdem_history(hand_id=hand_id, viewer=request.user, public=True)
        public = True
    summary = holdem_summary(
        checks=[(check.name, check.ok) for check in history.checks], seeds_visible=history.seeds_visible
    )
    staff = selectors.can_view_all_hands(request.user)
    return render(
        request,
        "handhistory/holdem_hand.html",
        {
            "history": history,
            "hand": history.hand,
            "replay": _holdem_replay_or_none(history.hand),
            "summary": summary,
            "public": public,
            "staff": staff and not public,
            "cards": {player["seat"]: player["cards"] for player in history.players},
        },
    )


def _holdem_replay_or_none(hand: HoldemHand) -> HoldemReplay | None:
    """The street-by-street replay, or None when the stored actions do not replay (a
    tampered hand: its verification says so in words on the same page)."""
    try:
        return holdem_replay(hand)
    except HoldemError:
        return None


@require_GET
@login_required
def holdem_hand_phh(request: HttpRequest, hand_id: int) -> HttpResponse:
    """The hand in PHH, the field's standard format (docs/holdem.md, Hand histories), as a
    download; 404 as the detail page, and for a hand PHH cannot express. A player's copy
    writes the hole cards he may not see as ``????`` (``holdem.holdem_phh_for``); so does a
    watcher's (the table screen links it for everyone once the hand is over): only the cards
    shown at the showdown."""
    try:
        hand = holdem.get_holdem_hand(hand_id=hand_id, viewer=request.user)
    except HandNotFoundError as error:
        watchable = holdem.find_watchable_holdem_hand(hand_id=hand_id, viewer=request.user)
        if watchable is None or not watchable.is_terminal:
            raise Http404(str(error)) from error
        hand = watchable
    if not hand.phh:
        raise Http404(hand.phh_error or "this hand has no PHH text")
    response = HttpResponse(
        holdem.holdem_phh_for(hand=hand, viewer=request.user), content_type="text/plain; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="holdem-{hand.table_id}-{hand.number}.phh"'
    return response


@require_GET
@login_required
def holdem_hand_export(request: HttpRequest, hand_id: int) -> JsonResponse:
    """The hand as a ``widerpoker-holdem-hand/1`` document (docs/holdem-export.md): staff who
    may view every hand get every hole card (the hand is over), a player of the hand the
    cards shown at the showdown and his own only. 404 as the detail page."""
    try:
        hand = holdem.get_holdem_hand(hand_id=hand_id, viewer=request.user)
    except HandNotFoundError as error:
        raise Http404(str(error)) from error
    staff = selectors.can_view_all_hands(request.user)
    data = build_holdem_export(hand, audience="staff" if staff else "player", viewer_id=int(request.user.pk or 0))
    response = JsonResponse(data, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="holdem-{hand.table_id}-{hand.number}.json"'
    return response


@require_GET
@login_required
def hand_detail(request: HttpRequest, hand_id: int) -> HttpResponse:
    """The whole hand: conditions, commitment, revealed seed, board, change keys, every
    entry (paginated), totals and the verification of the hand from its seed. 404 unless
    the viewer played the hand or may view every hand."""
    try:
        hand = widerpoker.get_hand_history(hand_id=hand_id, viewer=request.user)
    except HandNotFoundError as error:
        raise Http404(str(error)) from error
    page = None
    entries: list[widerpoker.EntryView] = []
    if hand.entries_visible:
        queryset = widerpoker.list_hand_entries(hand_id=hand_id, viewer=request.user)
        page = Paginator(queryset, ENTRIES_PER_PAGE).get_page(request.GET.get("page"))
        entries = widerpoker.describe_entries(hand_id=hand_id, entries=page.object_list)
    report = verify_hand(hand_id=hand_id) if hand.is_terminal else None
    summary = (
        None
        if report is None
        else widerpoker_summary(ok=report.ok, failed=[mismatch.check for mismatch in report.mismatches])
    )
    return render(
        request,
        "handhistory/hand_detail.html",
        {
            "hand": hand,
            "page": page,
            "entries": entries,
            "report": report,
            "summary": summary,
            "replay": _entry_replay(request, hand),
        },
    )


def _entry_replay(request: HttpRequest, hand: widerpoker.HandHistory) -> EntryReplay | None:
    """The step-by-step replay the hand page opens with: the entry ``?entry=<id>`` when the
    viewer may list every entry (issue 24: any entry can be replayed once the hand is over),
    else the viewer's own entry, else none."""
    wanted = request.GET.get("entry", "")
    if wanted.isdigit() and hand.entries_visible:
        chosen = widerpoker.find_hand_entry(hand_id=hand.id, entry_id=int(wanted), viewer=request.user)
        if chosen is not None:
            return entry_replay(hand, chosen)
    return None if hand.viewer_entry is None else entry_replay(hand, hand.viewer_entry)


@require_GET
@login_required
def hand_export(request: HttpRequest, hand_id: int) -> JsonResponse:
    """The full record of a terminal hand as JSON, for auditors and the hand's players; 404
    for anyone else and while the hand is running (its seed is secret)."""
    try:
        data = export.get_hand_export(hand_id=hand_id, viewer=request.user)
    except (HandNotFoundError, HandNotTerminalError) as error:
        raise Http404(str(error)) from error
    hand = data["hand"]
    response = JsonResponse(data, json_dumps_params={"indent": 1})
    filename = f"hand-{hand['table_id']}-{hand['number']}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@require_GET
def provably_fair(request: HttpRequest) -> HttpResponse:
    """What "provably fair" means here, for players (issue 24, item 2): the promise, how to
    check a hand in three steps, where to set the client seed, with the developer's
    algorithm (``provably_fair_algorithm``) one click away. English and Italian."""
    return render(request, "handhistory/fairness.html", {"seed_delay_hours": settings.HOLDEM_SEED_DELAY_HOURS})


@require_GET
def provably_fair_algorithm(request: HttpRequest) -> HttpResponse:
    """The provably-fair algorithm (docs/provably-fair.md) for auditors and players who want
    to recompute a hand themselves."""
    path = settings.BASE_DIR / "docs" / "provably-fair.md"
    if not path.is_file():
        raise Http404("the provably-fair document is missing")
    path, translated = localized_document(path, get_language())
    title, html = render_document(path)
    return render(
        request,
        "handhistory/provably_fair.html",
        {"title": title, "html": html, "translated": translated, "lang": path_lang(path)},
    )


def anchors_feed(request: HttpRequest) -> HttpResponse:
    """``/history/commitments/anchors.json``: every seed chain's anchor with its publication
    time (UTC) and the beacon round it was published with, for outsiders to archive
    (docs/provably-fair.md, "Anchors"). Public, read-only."""
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405)
    return JsonResponse(selectors.get_anchors_feed(), json_dumps_params={"indent": 1})


def commitments(request: HttpRequest) -> HttpResponse:
    """The public page of commitments (docs/provably-fair.md, "Algorithm 2"): every table's
    seed chains with their anchors (published when created, before any hand uses them), the
    latest hands' commitments, chain positions and beacon rounds, and the beacon values used.
    A logged-in player also sees and sets his client seed here. Nothing secret is shown."""
    message = ""
    user_id = int(request.user.pk or 0) if request.user.is_authenticated else None
    if request.method == "POST" and user_id is not None:
        try:
            fairness_services.set_client_seed(
                user_id=user_id, seed=str(request.POST.get("client_seed", ""))[:200], now=timezone.now()
            )
            message = "Your client seed is set: it counts from your next hand."
        except DomainError as error:
            message = str(error)
    elif request.method not in ("GET", "HEAD", "POST"):
        return HttpResponse(status=405)
    context = selectors.list_commitments()
    context["message"] = message
    if user_id is not None:
        context["client_seed"] = fairness_services.client_seeds([user_id], now=timezone.now())[user_id]
    return render(request, "handhistory/commitments.html", context)
