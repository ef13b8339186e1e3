"""A tournament between its hands (docs/tournaments.md): the start, the next hand dealt,
the standings recorded and published, eliminations, and the end with its prizes (the pool
split by the engine's allocation) and its table closed. The clock's step is
tables.tournaments.services.tournament_step."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
from django.db import transaction

from tables.bulk import update_rows
from tables.engine.allocation import AllocationConfig, allocate_pool, rank_places
from tables.models import Hand, HandStatus, Seat, SeatStatus, Table, TablePhase
from tables.tournaments.models import (
    Entrant,
    EntrantStatus,
    Tournament,
    TournamentRound,
    TournamentState,
)
from tables.tournaments.money import LIVE, _admit, _cancel, _chips_of, _retire_chips, pool_account
from wallet import protection
from wallet import services as wallet_services
from wallet.models import AccountKind, TransferKind


def _start(tournament: Tournament, *, now: datetime) -> bool:
    """Start the tournament at its start time: cancel it (holds released) with fewer than
    ``min_entrants``; else take the buy-ins, top the pool up to the guarantee from the
    house's promotions account (the FUN cashier for FUN), issue the chips. False when
    cancelled."""
    entrants = list(Entrant.objects.filter(tournament=tournament, status=EntrantStatus.REGISTERED).order_by("pk"))
    if len(entrants) < tournament.min_entrants:
        _cancel(tournament, reason=f"fewer than {tournament.min_entrants} entrants at the start", now=now)
        return False
    from tables.widerpoker.services.powerups import promotions_account

    missing = tournament.guaranteed_minor - tournament.buy_in_minor * len(entrants)
    source = promotions_account(tournament.currency)
    if missing > 0 and source.kind != AccountKind.CASHIER and source.balance_minor - source.held_minor < missing:
        # A malfunction of the house's, not the players': nothing is taken from anyone.
        _cancel(tournament, reason="the house's promotions account cannot pay the guaranteed prize pool", now=now)
        return False
    _admit(tournament, entrants, first_hand=1, now=now)
    if missing > 0:
        wallet_services.post_transfer(
            reference=f"tourney:{tournament.pk}:guarantee",
            kind=TransferKind.TOURNAMENT_BUY_IN,
            currency=tournament.currency,
            legs=[wallet_services.Leg(source.pk, -missing), wallet_services.Leg(pool_account(tournament).pk, missing)],
            memo=f"Guaranteed prize pool of tournament {tournament.pk}: the house's top-up",
        )
        tournament.prize_pool_minor += missing
    tournament.state = TournamentState.RUNNING
    tournament.started_at = now
    tournament.save(update_fields=["state", "started_at", "prize_pool_minor"])
    return True


def _deal(tournament: Tournament, table: Table, user_ids: list[int], *, now: datetime) -> None:
    """Deal the next hand to ``user_ids`` (their chips cover the ante), through the
    platform's deal. Players the protection bars now (suspended, excluded, past a session
    limit) and players sitting out sit this hand out and pay no ante, as at a cash table."""
    from tables.widerpoker.services import deal

    accounts = wallet_services.ensure_player_accounts(user_ids=user_ids, currency=tournament.chips)
    barred = protection.barred_players(user_ids=user_ids, currency=tournament.chips, stake_minor=None, now=now)
    # Seed 000, Glossary "Sit out": "Players sitting out do not pay the ante" (the screen's
    # Sit out and Sit in buttons, as at a cash table); leaving the table or the connection
    # does not stop the deal.
    sitting = set(Seat.objects.filter(table=table, status=SeatStatus.SITTING_OUT).values_list("user_id", flat=True))
    dealt = [user_id for user_id in user_ids if user_id not in barred and user_id not in sitting]
    if len(dealt) < 2:
        return  # wait for the next tick; the standings stand
    ids = np.array(dealt, dtype=np.int64)
    account_ids = np.array([accounts[user_id] for user_id in dealt], dtype=np.int64)
    locked = wallet_services.lock_and_read(account_ids)
    deal._deal(table, ids, account_ids, locked=locked, now=now)


def _record_round(tournament: Tournament, table: Table, *, now: datetime) -> None:
    """The standings after the table's last hand: every entry still in, by chips (rank 1 =
    most; equal chips, equal rank: the competition ranking of ``rank_places``). Written
    once per hand (``one_round_per_hand``); a settled hand counts towards ``hands``, a
    cancelled one (refunded) does not."""
    number = table.hands_dealt
    if TournamentRound.objects.filter(tournament=tournament, number=number).exists():
        return
    hand = Hand.objects.filter(table=table, number=number).only("pk", "status", "config").first()
    rows = list(Entrant.objects.filter(tournament=tournament, status__in=LIVE).values_list("pk", "user_id"))
    chips = _chips_of(tournament, [user_id for _, user_id in rows])
    amounts = np.array([chips.get(user_id, 0) for _, user_id in rows], dtype=np.int64)
    ranks = rank_places(amounts) if rows else np.zeros(0, dtype=np.int32)
    order = np.lexsort((np.array([pk for pk, _ in rows], dtype=np.int64), ranks)).tolist() if rows else []
    standings = [[int(rows[i][0]), int(amounts[i]), int(ranks[i])] for i in order]
    if rows:
        update_rows(
            Entrant._meta.db_table,
            [pk for pk, _ in rows],
            {"chips_minor": ("bigint", amounts), "rank": ("integer", ranks.astype(np.int64))},
        )
    ante = int(hand.config["ante_minor"]) if hand is not None else table.widerpoker.ante_minor
    TournamentRound.objects.create(
        tournament=tournament, number=number, hand=hand, ante_minor=ante, standings=standings, recorded_at=now
    )
    if hand is not None and hand.status == HandStatus.SETTLED:
        tournament.hands_played += 1
        tournament.save(update_fields=["hands_played"])


STANDINGS_TOP = 10
"""How many of the best standings the ``tournament_standings`` frame carries."""


def _publish_standings(tournament: Tournament, table: Table, *, next_ante: int) -> None:
    """Push the standings after the table's last hand to its group once the step commits
    (``TournamentStandingsFrame``)."""
    from django.contrib.auth import get_user_model
    from django.urls import reverse

    from tables.engine.allocation import paid_places
    from tables.realtime.bus import publish_table_frame
    from tables.realtime.frames import TournamentStandingsFrame, dumps

    row = TournamentRound.objects.filter(tournament=tournament, number=table.hands_dealt).first()
    if row is None:
        return
    top = row.standings[:STANDINGS_TOP]
    users = dict(Entrant.objects.filter(pk__in=[item[0] for item in top]).values_list("pk", "user_id"))
    names = dict(get_user_model().objects.filter(pk__in=list(users.values())).values_list("pk", "username"))
    entries = Entrant.objects.filter(tournament=tournament).exclude(status=EntrantStatus.WITHDRAWN).count()
    config = AllocationConfig(tournament.paid_fraction_bps, tournament.min_prize_minor)
    frame = TournamentStandingsFrame(
        type="tournament_standings",
        tournament_id=tournament.pk,
        table_id=table.pk,
        hand=row.number,
        players_left=len(row.standings) - len(row.eliminated),
        eliminated=len(row.eliminated),
        paid_places=paid_places(max(1, entries), tournament.prize_pool_minor, config),
        prize_pool_minor=tournament.prize_pool_minor,
        currency=tournament.currency,
        next_ante_minor=next_ante,
        top=[
            {"rank": rank, "player": names.get(users.get(entrant_id, 0), "?"), "chips_minor": chips}
            for entrant_id, chips, rank in top
        ],
        url=reverse("tournament", args=[tournament.pk]),
    )
    text = dumps(frame)
    transaction.on_commit(lambda: publish_table_frame(table.pk, text), robust=True)


def _eliminate(tournament: Tournament, table: Table, *, ante: int, now: datetime) -> None:
    """Eliminate every entry whose chips no longer cover ``ante`` (the next hand's): its
    chips are retired, its seat left; its standing (the hand it fell at, its chips then)
    decides its place at the end."""
    rows = list(
        Entrant.objects.filter(tournament=tournament, status__in=LIVE).values_list("pk", "user_id", "chips_minor")
    )
    chips = _chips_of(tournament, [user_id for _, user_id, _ in rows])
    out = [(pk, user_id) for pk, user_id, _ in rows if chips.get(user_id, 0) < ante]
    if not out:
        return
    number = table.hands_dealt
    Entrant.objects.filter(pk__in=[pk for pk, _ in out]).update(
        status=EntrantStatus.ELIMINATED, eliminated_at_hand=number
    )
    Seat.objects.filter(table=table, user_id__in=[user_id for _, user_id in out]).update(
        status=SeatStatus.LEFT, status_reason="eliminated", left_at=now
    )
    TournamentRound.objects.filter(tournament=tournament, number=number).update(eliminated=[pk for pk, _ in out])
    _retire_chips(tournament, reference=f"tourney:{tournament.pk}:out:{number}", user_ids=[u for _, u in out])


# --- the end ------------------------------------------------------------------------------------


def final_order(entries: list[tuple[int, str, int, int | None]]) -> np.ndarray:
    """The standing strength of each entry for the final allocation (higher is better,
    int64, aligned with ``entries``): ``entries`` are ``(entrant id, status, chips_minor,
    eliminated_at_hand)``. An entry still in at the end beats every eliminated one; an
    entry eliminated later beats one eliminated earlier; then more chips (at the end, or
    when eliminated) are better. Equal on all of these: equal strength, so the entries
    share the prizes of the places they occupy (seed 001, Prize Pool Allocation;
    DESIGN 11: "players whose final hands tie share equally")."""
    keys = np.array(
        [(1 if eliminated is None else 0, eliminated or 0, chips) for _, status, chips, eliminated in entries],
        dtype=np.int64,
    ).reshape(-1, 3)
    if not len(keys):
        return np.zeros(0, dtype=np.int64)
    _, dense = np.unique(keys, axis=0, return_inverse=True)
    return np.asarray(dense, dtype=np.int64).reshape(-1)


def _finish(tournament: Tournament, table: Table, *, now: datetime) -> None:
    """End the tournament: places by ``final_order``, the prize pool split by the engine's
    allocation (``allocate_pool``: the tournament's paid fraction and minimum prize, ties
    sharing), paid in one transfer (the tie splits' indivisible cents to the house's rake
    account, the tournament having no next hand to carry them to), the chips retired, the
    table closed."""
    rows = list(
        Entrant.objects.filter(tournament=tournament, status__in=(EntrantStatus.PLAYING, EntrantStatus.ELIMINATED))
        .order_by("pk")
        .values_list("pk", "user_id", "status", "chips_minor", "eliminated_at_hand")
    )
    live_chips = _chips_of(tournament, [user_id for _, user_id, status, _, _ in rows if status in LIVE])
    entries = [
        (pk, status, live_chips.get(user_id, chips) if status in LIVE else chips, eliminated)
        for pk, user_id, status, chips, eliminated in rows
    ]
    results: dict[str, Any] = {"paid_places": 0, "ladder_minor": [], "breakage_minor": 0}
    if entries:
        allocation = allocate_pool(
            tournament.prize_pool_minor,
            final_order(entries),
            AllocationConfig(tournament.paid_fraction_bps, tournament.min_prize_minor),
        )
        prizes, places = allocation.prizes_minor, allocation.places
        user_ids = np.array([row[1] for row in rows], dtype=np.int64)
        winners = np.flatnonzero(prizes)
        if tournament.prize_pool_minor:
            accounts = wallet_services.ensure_player_accounts(
                user_ids=user_ids[winners].tolist(), currency=tournament.currency
            )
            pool = pool_account(tournament)
            rake = wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=tournament.currency)
            wallet_services.post_transfer_arrays(
                reference=f"tourney:{tournament.pk}:prizes",
                kind=TransferKind.TOURNAMENT_PRIZE,
                currency=tournament.currency,
                account_ids=np.array(
                    [pool.pk, rake.pk, *(accounts[int(user_ids[i])] for i in winners.tolist())], dtype=np.int64
                ),
                deltas=np.array(
                    [-tournament.prize_pool_minor, allocation.breakage_minor, *prizes[winners].tolist()],
                    dtype=np.int64,
                ),
                memo=f"Prizes of tournament {tournament.pk}",
            )
        update_rows(
            Entrant._meta.db_table,
            [row[0] for row in rows],
            {
                "place": ("integer", places.astype(np.int64)),
                "prize_minor": ("bigint", prizes),
                "chips_minor": ("bigint", np.array([entry[2] for entry in entries], dtype=np.int64)),
            },
        )
        Entrant.objects.filter(tournament=tournament, status__in=LIVE).update(status=EntrantStatus.FINISHED)
        results = {
            "paid_places": allocation.paid_places,
            "ladder_minor": allocation.place_prizes_minor.tolist(),
            "breakage_minor": allocation.breakage_minor,
        }
    _retire_chips(tournament, reference=f"tourney:{tournament.pk}:chips:end", user_ids=None)
    tournament.state = TournamentState.FINISHED
    tournament.finished_at = now
    tournament.results = results
    tournament.save(update_fields=["state", "finished_at", "results"])
    _close_table(table, reason="tournament over", now=now)


def _close_table(table: Table, *, reason: str, now: datetime) -> None:
    """Close the tournament's table: no more hands; every seat leaves at ``now`` (its
    ``left_at``, as every other way of leaving sets it)."""
    Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).update(
        status=SeatStatus.LEFT, status_reason=reason[:40], left_at=now
    )
    table.phase = TablePhase.CLOSED
    table.phase_deadline = None
    table.current_hand = None
    table.is_open = False
    table.version += 1
