"""Reads of tournaments for the lobby, the tournament page, the REST API and the auditors'
export (docs/tournaments.md, docs/export-format.md "Tournament export"). Chips and money in
minor units; times ISO 8601 UTC. Chips and ranks are public in a tournament: every
entrant's standing after each hand is shown to all, never a card before its hand is over."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Q

from tables.engine.allocation import AllocationConfig, paid_places
from tables.tournaments.errors import TournamentNotFoundError
from tables.tournaments.models import Entrant, EntrantStatus, Tournament, TournamentRound, TournamentState
from tables.tournaments.money import LIVE
from tables.tournaments.services import registration_open

EXPORT_SCHEMA = "widerpoker-tournament/1"
"""The version of the tournament export's shape (docs/export-format.md)."""

STANDINGS_SHOWN = 20
"""How many of the best standings the page and the API list (the player's own always)."""

COUNTED = (EntrantStatus.REGISTERED, EntrantStatus.PLAYING, EntrantStatus.ELIMINATED, EntrantStatus.FINISHED)


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment else None


def _summary(tournament: Tournament, entries: int, *, now: datetime) -> dict[str, Any]:
    """A tournament's lobby line."""
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "state": tournament.state,
        "mode": tournament.mode,
        "currency": tournament.currency,
        "starts_at": _iso(tournament.starts_at),
        "seconds_to_start": max(0, int((tournament.starts_at - now).total_seconds())),
        "buy_in_minor": tournament.buy_in_minor,
        "fee_minor": tournament.fee_minor,
        "guaranteed_minor": tournament.guaranteed_minor,
        "starting_chips_minor": tournament.starting_chips_minor,
        "hands": tournament.hands,
        "duration_minutes": tournament.duration_minutes,
        "change_seconds": tournament.change_seconds,
        "entries": entries,
        "max_entrants": tournament.max_entrants,
        "registration_open": registration_open(tournament, now=now),
        "table_id": tournament.table_id,
    }


def list_tournaments(*, now: datetime, user_id: int | None = None) -> list[dict[str, Any]]:
    """The lobby's tournaments: those not over, soonest first, then the last ten over; each
    with ``registered`` (the player, if any, holds an entry still in or waiting)."""
    counted = Count("entrants", filter=Q(entrants__status__in=COUNTED))
    base = Tournament.objects.select_related("table").annotate(entries=counted)
    open_ones = list(base.exclude(state__in=(TournamentState.FINISHED, TournamentState.CANCELLED)))
    over = list(
        base.filter(state__in=(TournamentState.FINISHED, TournamentState.CANCELLED)).order_by("-finished_at")[:10]
    )
    mine: set[int] = set()
    if user_id is not None:
        mine = set(
            Entrant.objects.filter(user_id=user_id, status__in=(EntrantStatus.REGISTERED, *LIVE)).values_list(
                "tournament_id", flat=True
            )
        )
    rows = []
    for tournament in [*open_ones, *over]:
        row = _summary(tournament, int(getattr(tournament, "entries", 0)), now=now)
        row["registered"] = tournament.pk in mine
        rows.append(row)
    return rows


def _get(tournament_id: int) -> Tournament:
    tournament = Tournament.objects.select_related("table").filter(pk=tournament_id).first()
    if tournament is None:
        raise TournamentNotFoundError(f"no tournament {tournament_id}", tournament_id=tournament_id)
    return tournament


def _names(user_ids: list[int]) -> dict[int, str]:
    return dict(get_user_model().objects.filter(pk__in=user_ids).values_list("pk", "username"))


def get_tournament(*, tournament_id: int, user_id: int | None, now: datetime) -> dict[str, Any]:
    """The tournament page's state: its conditions, the countdown, the hand and level
    being played, the players left, the prize pool and its paid places, the best
    ``STANDINGS_SHOWN`` standings after the last hand, the player's own entry (chips, rank,
    status, place, prize) and, at the end, the places paid. Raises TournamentNotFoundError."""
    tournament = _get(tournament_id)
    entries = Entrant.objects.filter(tournament=tournament, status__in=COUNTED).count()
    data = _summary(tournament, entries, now=now)
    table = tournament.table
    hands_dealt = table.hands_dealt if table is not None else 0
    next_hand = hands_dealt + (0 if table is not None and table.phase == "change" else 1)
    left = Entrant.objects.filter(tournament=tournament, status__in=LIVE).count()
    pool = tournament.prize_pool_minor or max(tournament.guaranteed_minor, tournament.buy_in_minor * entries)
    config = AllocationConfig(tournament.paid_fraction_bps, tournament.min_prize_minor)
    data |= {
        "antes": tournament.antes,
        "draw_price_bps": tournament.draw_price_bps,
        "max_draws": tournament.max_draws,
        "redeal_price_minor": tournament.redeal_price_minor,
        "max_redeals": tournament.max_redeals,
        "results_seconds": tournament.results_seconds,
        "late_registration_hands": tournament.late_registration_hands,
        "max_reentries": tournament.max_reentries,
        "chips": tournament.chips,
        "hands_dealt": hands_dealt,
        "hands_played": tournament.hands_played,
        "level": tournament.level_of(max(1, next_hand)),
        "ante_minor": tournament.ante_for(max(1, next_hand)),
        "players_left": left,
        "prize_pool_minor": pool,
        "paid_places": paid_places(max(1, entries), pool, config) if entries else 0,
        "phase": table.phase if table is not None else None,
        "phase_deadline": _iso(table.phase_deadline) if table is not None else None,
        "cancel_reason": tournament.cancel_reason,
        "finished_at": _iso(tournament.finished_at),
    }
    latest = TournamentRound.objects.filter(tournament=tournament).order_by("-number").first()
    standings = latest.standings if latest is not None else []
    shown = standings[:STANDINGS_SHOWN]
    me = None
    if user_id is not None:
        entrant = (
            Entrant.objects.filter(tournament=tournament, user_id=user_id)
            .exclude(status=EntrantStatus.WITHDRAWN)
            .order_by("-entry_number")
            .first()
        )
        if entrant is not None:
            me = {
                "entrant_id": entrant.pk,
                "entry_number": entrant.entry_number,
                "status": entrant.status,
                "chips_minor": entrant.chips_minor,
                "rank": entrant.rank,
                "place": entrant.place,
                "prize_minor": entrant.prize_minor,
                "eliminated_at_hand": entrant.eliminated_at_hand,
                "can_reenter": entrant.status == EntrantStatus.ELIMINATED
                and entrant.entry_number <= tournament.max_reentries
                and data["registration_open"],
            }
    users = dict(Entrant.objects.filter(pk__in=[row[0] for row in shown]).values_list("pk", "user_id"))
    names = _names(list(users.values()))
    data["standings_after_hand"] = latest.number if latest is not None else 0
    data["standings"] = [
        {"rank": rank, "player": names.get(users.get(entrant_id, 0), "?"), "chips_minor": chips}
        for entrant_id, chips, rank in shown
    ]
    data["me"] = me
    data["results"] = []
    if tournament.state == TournamentState.FINISHED:
        paid = list(
            Entrant.objects.filter(tournament=tournament, place__isnull=False)
            .order_by("place", "pk")
            .values_list("place", "user__username", "prize_minor", "chips_minor")[: max(STANDINGS_SHOWN, 1)]
        )
        data["results"] = [
            {"place": place, "player": name, "prize_minor": prize, "chips_minor": chips}
            for place, name, prize, chips in paid
        ]
    return data


def tournament_export(*, tournament_id: int) -> dict[str, Any]:
    """The auditors' export of a tournament (docs/export-format.md, "Tournament export"):
    its conditions, every entry (player, entry number, status, what it paid, place, prize),
    the standings after each hand with the hand's id (whose own export proves its deal and
    settlement), the eliminations, and the money (prize pool, allocation, remainder).
    Raises TournamentNotFoundError."""
    tournament = _get(tournament_id)
    entrants = list(
        Entrant.objects.filter(tournament=tournament)
        .order_by("pk")
        .values_list(
            "pk",
            "user__username",
            "entry_number",
            "status",
            "registered_at",
            "paid_minor",
            "joined_hand",
            "eliminated_at_hand",
            "chips_minor",
            "place",
            "prize_minor",
        )
    )
    rounds = TournamentRound.objects.filter(tournament=tournament).order_by("number")
    return {
        "schema": EXPORT_SCHEMA,
        "tournament": tournament.describe()
        | {
            "state": tournament.state,
            "starts_at": _iso(tournament.starts_at),
            "started_at": _iso(tournament.started_at),
            "finished_at": _iso(tournament.finished_at),
            "cancel_reason": tournament.cancel_reason,
            "table_id": tournament.table_id,
            "hands_played": tournament.hands_played,
            "prize_pool_minor": tournament.prize_pool_minor,
            "results": tournament.results,
        },
        "entrants": [
            {
                "id": pk,
                "player": name,
                "entry_number": number,
                "status": status,
                "registered_at": _iso(registered),
                "paid_minor": paid,
                "joined_hand": joined,
                "eliminated_at_hand": eliminated,
                "chips_minor": chips,
                "place": place,
                "prize_minor": prize,
            }
            for pk, name, number, status, registered, paid, joined, eliminated, chips, place, prize in entrants
        ],
        "rounds": [
            {
                "hand": row.number,
                "hand_id": row.hand_id,
                "ante_minor": row.ante_minor,
                "standings": row.standings,
                "eliminated": row.eliminated,
                "recorded_at": _iso(row.recorded_at),
            }
            for row in rounds
        ],
    }
