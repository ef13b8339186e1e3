"""Tournaments: scheduling, registration, the start, each hand between the standings, the
end with its prizes, and cancellation (docs/tournaments.md).

The money: an entry's buy-in and fee are held on the player's wallet at registration
(``wallet.services.hold_funds``, destination the tournament's prize pool account
``tourney:<id>:pool``), captured at the start, the fees passed to the house's rake account;
the prizes are paid from the pool by the engine's allocation (``tables.engine.allocation``)
at the end; a cancellation returns every buy-in and fee (seed 001, Notes 3: "the amounts
wagered returned entirely"). The chips: issued at the start from the chips' cashier
(``cashier:T<id>``), played hand after hand at the tournament's table through the
platform's own deal, purchases and settlement, retired to the cashier when an entry is
eliminated and at the end, so every chip's path is a ledger transfer of the chips' currency.

Seed 000, Glossary "Game Hand": "Usually a tournament consists of many hands".
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Max

from tables.bulk import update_rows
from tables.engine.allocation import AllocationConfig, allocate_pool, rank_places
from tables.models import Hand, HandStatus, Seat, SeatStatus, Table, TablePhase
from tables.realtime.push import broadcast_table_on_commit
from tables.services.fairness import new_chain
from tables.tournaments.errors import (
    AlreadyRegisteredError,
    InvalidTournamentError,
    NotRegisteredError,
    ReentryLimitError,
    RegistrationClosedError,
    TournamentFullError,
    TournamentNotFoundError,
    TournamentOverError,
)
from tables.tournaments.models import (
    CONDITION_FIELDS,
    Entrant,
    EntrantStatus,
    Tournament,
    TournamentRound,
    TournamentState,
)
from tables.widerpoker import KEY as WIDERPOKER
from tables.widerpoker.services.conditions import validate_table_config
from wallet import protection
from wallet import services as wallet_services
from wallet.lookups import IntArray
from wallet.models import Account, AccountKind, Currency, TransferKind

logger = logging.getLogger(__name__)

LIVE = (EntrantStatus.PLAYING,)
"""Entrant statuses that are dealt hands."""


def pool_key(tournament_id: int) -> str:
    """The key of a tournament's prize pool account."""
    return f"tourney:{tournament_id}:pool"


def pool_account(tournament: Tournament) -> Account:
    """The account holding a tournament's buy-ins (minor units of its ``currency``) from
    its start until the prizes are paid."""
    return wallet_services.ensure_account(
        key=pool_key(tournament.pk), kind=AccountKind.TOURNAMENT, currency=tournament.currency
    )


def chips_cashier(tournament: Tournament) -> Account:
    """The account that issues and retires a tournament's chips (it goes negative by the
    chips in play, as a cashier mirrors the money in play)."""
    return wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=tournament.chips)


def entry_reference(entrant_id: int) -> str:
    """The reference of an entry's hold (``FundsHold.reference``)."""
    return f"tourney:entry:{entrant_id}"


# --- scheduling ---------------------------------------------------------------------------------

SCHEDULE_FIELDS = ("name", "starts_at", "registration_opens_at", *CONDITION_FIELDS)
"""What staff set when they schedule a tournament (``schedule_tournament``)."""


def validate_tournament(tournament: Tournament) -> None:
    """Check a tournament's conditions; raise InvalidTournamentError naming the field."""

    def fail(field: str, message: str) -> None:
        raise InvalidTournamentError(message, field=field)

    if not tournament.name.strip():
        fail("name", "a tournament needs a name")
    if tournament.mode == "fun" and tournament.currency != Currency.FUN:
        fail("currency", "fun tournaments play for FUN chips")
    if tournament.mode == "cash" and tournament.currency == Currency.FUN:
        fail("currency", "cash tournaments play for a cash currency")
    for field in ("buy_in_minor", "fee_minor", "guaranteed_minor", "min_prize_minor"):
        if int(getattr(tournament, field)) < 0:
            fail(field, "amounts cannot be negative")
    if tournament.starting_chips_minor <= 0:
        fail("starting_chips_minor", "entrants start with some chips")
    if not tournament.hands and not tournament.duration_minutes:
        fail("hands", "a tournament ends after a number of hands or a duration")
    levels = tournament.antes
    if not isinstance(levels, list) or not levels:
        fail("antes", "at least one level: [{from_hand: 1, ante_minor: ...}]")
    try:
        starts = [int(level["from_hand"]) for level in levels]
        antes = [int(level["ante_minor"]) for level in levels]
    except (KeyError, TypeError, ValueError):
        fail("antes", "each level is {from_hand: n, ante_minor: a}")
        return
    if starts[0] != 1 or starts != sorted(set(starts)):
        fail("antes", "levels start at hand 1, each from a later hand")
    if min(antes) <= 0:
        fail("antes", "every ante is positive")
    if antes[0] > tournament.starting_chips_minor:
        fail("antes", "the first ante is more than the starting chips")
    if tournament.min_entrants < 2:
        fail("min_entrants", "a hand needs at least two players")
    if tournament.max_entrants < tournament.min_entrants or tournament.max_entrants > 100_000:
        fail("max_entrants", "between the minimum and 100,000 (the board's initial combinations)")
    if not 1 <= tournament.paid_fraction_bps <= 10_000:
        fail("paid_fraction_bps", "the paid fraction is 0.01% to 100%")
    if tournament.mode == "fun" and tournament.fee_minor:
        fail("fee_minor", "fun tournaments take no fee")
    if tournament.registration_opens_at and tournament.registration_opens_at > tournament.starts_at:
        fail("registration_opens_at", "registration opens before the start")
    try:
        validate_table_config(table_config(tournament, ante_minor=antes[0]))
    except Exception as error:  # InvalidTableConfigError: the same field names
        fail(str(getattr(error, "extra", {}).get("field", "antes")), str(error))


def table_config(tournament: Tournament, *, ante_minor: int) -> dict[str, Any]:
    """The configuration of the tournament's table (``CONFIG_FIELDS``): no rake (the house
    takes its fee at the start), each hand's chip pool split among
    ``hand_paid_fraction_bps`` of its entries."""
    return {
        "ante_minor": ante_minor,
        "change_seconds": tournament.change_seconds,
        "results_seconds": tournament.results_seconds,
        "rake_bps": 0,
        "paid_fraction_bps": tournament.hand_paid_fraction_bps,
        "min_prize_minor": 0,
        "draw_price_bps": tournament.draw_price_bps,
        "max_draws": tournament.max_draws,
        "redeal_price_minor": tournament.redeal_price_minor,
        "max_redeals": tournament.max_redeals,
        "redeal_seconds": tournament.redeal_seconds,
    }


@transaction.atomic(durable=True)
def schedule_tournament(*, staff_user_id: int | None, now: datetime, **values: Any) -> Tournament:
    """Schedule a tournament (``values``: ``SCHEDULE_FIELDS``, money and chips in minor
    units) with its prize pool account and its table (closed to the lobby's seats, played
    only by the entrants; its seed chain published now, before anyone registers:
    docs/provably-fair.md). Raises InvalidTournamentError (nothing saved)."""
    unknown = set(values) - set(SCHEDULE_FIELDS)
    if unknown:
        raise InvalidTournamentError(f"unknown fields {sorted(unknown)}", field=sorted(unknown)[0])
    tournament = Tournament(created_by_id=staff_user_id, **values)
    opens = tournament.registration_opens_at
    tournament.state = TournamentState.SCHEDULED if opens and opens > now else TournamentState.REGISTERING
    validate_tournament(tournament)
    tournament.save()
    pool_account(tournament)
    table = Table.objects.create(
        name=f"T{tournament.pk} {tournament.name}"[:60],
        game=WIDERPOKER,
        mode=tournament.mode,
        currency=tournament.chips,
        is_open=False,
        phase=TablePhase.WAITING,
        phase_deadline=tournament.starts_at,
        **table_config(tournament, ante_minor=tournament.ante_for(1)),
    )
    new_chain(table_id=table.pk, now=now)
    tournament.table = table
    tournament.save(update_fields=["table"])
    return tournament


# --- registration -------------------------------------------------------------------------------


def _locked(tournament_id: int) -> Tournament:
    tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
    if tournament is None:
        raise TournamentNotFoundError(f"no tournament {tournament_id}", tournament_id=tournament_id)
    return tournament


def registration_open(tournament: Tournament, *, now: datetime) -> bool:
    """Whether a player may register now: from ``registration_opens_at`` until the start,
    then while the late registration lasts (until hand ``late_registration_hands`` has been
    dealt)."""
    if tournament.state in (TournamentState.SCHEDULED, TournamentState.REGISTERING):
        opens = tournament.registration_opens_at
        return opens is None or opens <= now
    if tournament.state == TournamentState.RUNNING and tournament.table is not None:
        return tournament.table.hands_dealt < tournament.late_registration_hands
    return False


@transaction.atomic(durable=True)
def register(*, tournament_id: int, user_id: int, now: datetime) -> Entrant:
    """Register the player (or, eliminated, re-enter him): the buy-in and fee are held on
    his wallet until the start (after the start, in the late registration, they are taken
    at once and he gets his chips for the next hand). Player protection applies as at a
    cash table (``protection.check_can_play`` for the entry's price: suspension,
    exclusions, session and loss limits).

    Raises TournamentNotFoundError, RegistrationClosedError, AlreadyRegisteredError,
    ReentryLimitError, TournamentFullError, the protection's refusals and
    InsufficientFundsError; nothing changes then."""
    tournament = _locked(tournament_id)
    if not registration_open(tournament, now=now):
        raise RegistrationClosedError(f"registration for {tournament.name} is closed", tournament_id=tournament_id)
    if tournament.state == TournamentState.SCHEDULED:
        tournament.state = TournamentState.REGISTERING
        tournament.save(update_fields=["state"])
    previous = (
        Entrant.objects.filter(tournament=tournament, user_id=user_id)
        .exclude(status=EntrantStatus.WITHDRAWN)
        .order_by("-entry_number")
        .first()
    )
    number = 1
    if previous is not None:
        if previous.status != EntrantStatus.ELIMINATED:
            raise AlreadyRegisteredError("you are already registered", tournament_id=tournament_id)
        number = previous.entry_number + 1
        if number - 1 > tournament.max_reentries:
            raise ReentryLimitError(f"at most {tournament.max_reentries} re-entries", tournament_id=tournament_id)
    entries = Entrant.objects.filter(tournament=tournament).exclude(status=EntrantStatus.WITHDRAWN).count()
    if entries >= tournament.max_entrants:
        raise TournamentFullError(f"{tournament.name} is full", tournament_id=tournament_id)
    price = tournament.entry_price_minor
    protection.check_can_play(user_id=user_id, currency=tournament.currency, stake_minor=price or None, now=now)
    entrant = Entrant.objects.create(
        tournament=tournament,
        user_id=user_id,
        entry_number=number,
        registered_at=now,
        paid_minor=price,
    )
    if price:
        wallet_services.ensure_player_account(user_id=user_id, currency=tournament.currency)
        entrant.hold = wallet_services.hold_funds(
            user_id=user_id,
            currency=tournament.currency,
            destination_id=pool_account(tournament).pk,
            amount_minor=price,
            kind=TransferKind.TOURNAMENT_BUY_IN,
            reference=entry_reference(entrant.pk),
        )
        entrant.save(update_fields=["hold"])
    if tournament.state == TournamentState.RUNNING:
        assert tournament.table is not None
        _admit(tournament, [entrant], first_hand=tournament.table.hands_dealt + 1, now=now)
    return entrant


@transaction.atomic(durable=True)
def unregister(*, tournament_id: int, user_id: int, now: datetime) -> Entrant:
    """Withdraw the player's registration before the start: his hold is released (nothing
    was taken). Raises TournamentNotFoundError, NotRegisteredError, RegistrationClosedError
    (started: the chips are in play)."""
    tournament = _locked(tournament_id)
    entrant = Entrant.objects.filter(tournament=tournament, user_id=user_id, status=EntrantStatus.REGISTERED).first()
    if entrant is None:
        raise NotRegisteredError("you are not registered", tournament_id=tournament_id)
    if tournament.state not in (TournamentState.SCHEDULED, TournamentState.REGISTERING):
        raise RegistrationClosedError("the tournament has started", tournament_id=tournament_id)
    wallet_services.release_hold(reference=entry_reference(entrant.pk))
    entrant.status = EntrantStatus.WITHDRAWN
    entrant.hold = None
    entrant.save(update_fields=["status", "hold"])
    return entrant


# --- start --------------------------------------------------------------------------------------


def _admit(tournament: Tournament, entrants: list[Entrant], *, first_hand: int, now: datetime) -> None:
    """Take the entries' held buy-ins and fees (the fees to the house), issue each entry its
    starting chips and seat it at the tournament's table, from hand ``first_hand``."""
    table = tournament.table
    assert table is not None
    count = len(entrants)
    pool = pool_account(tournament)
    paying = [entrant for entrant in entrants if entrant.paid_minor]
    if paying:
        wallet_services.capture_holds(
            destination_id=pool.pk, currency=tournament.currency, memo=f"Buy-ins of tournament {tournament.pk}"
        )
        fees = tournament.fee_minor * len(paying)
        if fees:
            rake = wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=tournament.currency)
            wallet_services.post_transfer(
                reference=f"tourney:{tournament.pk}:fees:{paying[-1].pk}",
                kind=TransferKind.TOURNAMENT_FEE,
                currency=tournament.currency,
                legs=[wallet_services.Leg(pool.pk, -fees), wallet_services.Leg(rake.pk, fees)],
                memo=f"Fees of {len(paying)} entries of tournament {tournament.pk}",
            )
        tournament.prize_pool_minor += tournament.buy_in_minor * len(paying)
    user_ids = [entrant.user_id for entrant in entrants]
    accounts = wallet_services.ensure_player_accounts(user_ids=user_ids, currency=tournament.chips)
    chips = tournament.starting_chips_minor
    cashier = chips_cashier(tournament)
    wallet_services.post_transfer_arrays(
        reference=f"tourney:{tournament.pk}:chips:{entrants[-1].pk}",
        kind=TransferKind.CHIPS_ISSUED,
        currency=tournament.chips,
        account_ids=np.array([cashier.pk, *(accounts[user_id] for user_id in user_ids)], dtype=np.int64),
        deltas=np.array([-chips * count, *([chips] * count)], dtype=np.int64),
        memo=f"Starting chips of {count} entries of tournament {tournament.pk}",
    )
    Seat.objects.bulk_create(
        [Seat(table=table, user_id=user_id, joined_at=now, last_seen_at=now) for user_id in user_ids],
        ignore_conflicts=True,
        batch_size=2000,
    )
    Seat.objects.filter(table=table, user_id__any_of=IntArray(user_ids)).update(
        status=SeatStatus.ACTIVE, status_reason="", left_at=None
    )
    Entrant.objects.filter(pk__any_of=IntArray([entrant.pk for entrant in entrants])).update(
        status=EntrantStatus.PLAYING, chips_minor=chips, joined_hand=first_hand
    )
    tournament.save(update_fields=["prize_pool_minor"])


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


# --- the clock: between hands ------------------------------------------------------------------


def tournament_step(table: Table, *, now: datetime) -> bool:
    """The clock's step of a tournament's table between hands (``advance_table`` calls it
    for a WiderPoker table in waiting or results, inside its transaction, the table locked);
    False when the table is no tournament's (the cash lifecycle goes on).

    Before the start: sleep until it. At the start: ``_start``. Then, after each hand: the
    standings (``TournamentRound``), the end (hands or duration reached, fewer than two
    entries left: ``_finish``), the next hand's ante (its level), the eliminations (chips
    below that ante), and the deal to every entry still in, connected or not (a
    disconnected player keeps his cards: seed 001, Notes 2), through the platform's deal."""
    tournament = Tournament.objects.select_for_update().filter(table_id=table.pk).first()
    if tournament is None:
        return False
    tournament.table = table
    if tournament.state in (TournamentState.SCHEDULED, TournamentState.REGISTERING):
        if now < tournament.starts_at:
            table.phase = TablePhase.WAITING
            table.phase_deadline = tournament.starts_at
            return True
        if not _start(tournament, now=now):
            _close_table(table, reason="cancelled")
            return True
    if tournament.state != TournamentState.RUNNING:
        _close_table(table, reason="over")
        return True
    if table.hands_dealt:
        _record_round(tournament, table, now=now)
    over = (tournament.hands and tournament.hands_played >= tournament.hands) or (
        tournament.duration_minutes
        and tournament.started_at is not None
        and now >= tournament.started_at + timedelta(minutes=tournament.duration_minutes)
    )
    ante = tournament.ante_for(table.hands_dealt + 1)
    if not over:
        _eliminate(tournament, table, ante=ante, now=now)
    if table.hands_dealt:
        _publish_standings(tournament, table, next_ante=ante)
    live = list(
        Entrant.objects.filter(tournament=tournament, status__in=LIVE).order_by("pk").values_list("user_id", flat=True)
    )
    if over or len(live) < 2:
        _finish(tournament, table, now=now)
        return True
    table.ante_minor = ante
    table.phase = TablePhase.WAITING
    table.phase_deadline = now + timedelta(seconds=table.results_seconds)
    table.version += 1
    _deal(tournament, table, live, now=now)
    return True


def _deal(tournament: Tournament, table: Table, user_ids: list[int], *, now: datetime) -> None:
    """Deal the next hand to ``user_ids`` (their chips cover the ante), through the
    platform's deal. Players the protection bars now (suspended, excluded, past a session
    limit) and players sitting out sit this hand out and pay no ante, as at a cash table."""
    from tables.widerpoker.services import lifecycle

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
    lifecycle._deal(table, ids, account_ids, locked=locked, now=now)


def _chips_of(tournament: Tournament, user_ids: list[int]) -> dict[int, int]:
    """Each player's chips (his account of the tournament's chips), minor units."""
    return dict(
        Account.objects.filter(kind=AccountKind.PLAYER, currency=tournament.chips, user_id__in=user_ids).values_list(
            "user_id", "balance_minor"
        )
    )


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
    ante = int(hand.config["ante_minor"]) if hand is not None else table.ante_minor
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


def _retire_chips(tournament: Tournament, *, reference: str, user_ids: list[int] | None) -> None:
    """Move chips back to the chips' cashier: of ``user_ids``' accounts, or (None) of every
    account of the tournament's chips (its end: players, the table's carried remainder)."""
    accounts = Account.objects.filter(currency=tournament.chips).exclude(kind=AccountKind.CASHIER)
    if user_ids is not None:
        accounts = accounts.filter(kind=AccountKind.PLAYER, user_id__in=user_ids)
    rows = list(accounts.exclude(balance_minor=0).values_list("pk", "balance_minor"))
    if not rows:
        return
    total = sum(balance for _, balance in rows)
    wallet_services.post_transfer_arrays(
        reference=reference,
        kind=TransferKind.CHIPS_RETIRED,
        currency=tournament.chips,
        account_ids=np.array([chips_cashier(tournament).pk, *(pk for pk, _ in rows)], dtype=np.int64),
        deltas=np.array([total, *(-balance for _, balance in rows)], dtype=np.int64),
        memo=f"Chips retired in tournament {tournament.pk}",
    )


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
    _close_table(table, reason="tournament over")


def _close_table(table: Table, *, reason: str) -> None:
    """Close the tournament's table: no more hands; every seat leaves."""
    Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).update(
        status=SeatStatus.LEFT, status_reason=reason[:40]
    )
    table.phase = TablePhase.CLOSED
    table.phase_deadline = None
    table.current_hand = None
    table.is_open = False
    table.version += 1


# --- cancellation -------------------------------------------------------------------------------


@transaction.atomic(durable=True)
def cancel_tournament(*, tournament_id: int, reason: str, staff_user_id: int | None, now: datetime) -> Tournament:
    """Cancel a tournament (staff, or a malfunction that stops it): every amount taken is
    returned in full, as the rules return a cancelled hand's (seed 001, Notes 3): before
    the start the holds are released; after it the running hand is cancelled (its chips
    refunded), every entry's buy-in and fee go back to its wallet (the fees from the
    house's rake account, a guarantee's top-up to promotions), the chips are retired and
    the table closed. Raises TournamentNotFoundError, TournamentOverError,
    InvalidTournamentError (no reason)."""
    if not reason.strip():
        raise InvalidTournamentError("a cancellation needs a reason", field="reason")
    table_id = Tournament.objects.filter(pk=tournament_id).values_list("table_id", flat=True).first()
    # The clock's lock order: the table first, then the tournament.
    table = Table.objects.select_for_update().filter(pk=table_id).first() if table_id else None
    tournament = _locked(tournament_id)
    if tournament.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
        raise TournamentOverError(f"{tournament.name} is over", tournament_id=tournament_id)
    tournament.cancelled_by_id = staff_user_id
    _cancel(tournament, reason=reason, now=now)
    if table is not None:
        if table.current_hand_id is not None:
            from tables.widerpoker.services.settlement import cancel_hand

            cancel_hand(hand_id=table.current_hand_id, reason=f"tournament cancelled: {reason}", now=now)
        _retire_chips(tournament, reference=f"tourney:{tournament.pk}:chips:cancel", user_ids=None)
        _close_table(table, reason="tournament cancelled")
        Table.objects.filter(pk=table.pk).update(
            phase=table.phase,
            phase_deadline=None,
            current_hand=None,
            is_open=False,
            version=table.version,
        )
        broadcast_table_on_commit(table.pk, refresh_private=True)
    return tournament


def _cancel(tournament: Tournament, *, reason: str, now: datetime) -> None:
    """Return every entry's money and mark the tournament cancelled (the table is the
    caller's)."""
    registered = list(
        Entrant.objects.filter(tournament=tournament, status=EntrantStatus.REGISTERED).values_list("pk", flat=True)
    )
    for entrant_id in registered:
        wallet_services.release_hold(reference=entry_reference(entrant_id))
    taken = list(
        Entrant.objects.filter(
            tournament=tournament,
            status__in=(EntrantStatus.PLAYING, EntrantStatus.ELIMINATED),
            paid_minor__gt=0,
        ).values_list("user_id", "paid_minor")
    )
    if taken:
        pool = pool_account(tournament)
        accounts = wallet_services.ensure_player_accounts(
            user_ids=[user_id for user_id, _ in taken], currency=tournament.currency
        )
        fees = tournament.fee_minor * len(taken)
        buy_ins = sum(amount for _, amount in taken) - fees
        topped_up = tournament.prize_pool_minor - buy_ins
        ids = [pool.pk]
        deltas = [-tournament.prize_pool_minor]
        if fees:
            ids.append(wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=tournament.currency).pk)
            deltas.append(-fees)
        if topped_up:
            from tables.widerpoker.services.powerups import promotions_account

            ids.append(promotions_account(tournament.currency).pk)
            deltas.append(topped_up)
        ids.extend(accounts[user_id] for user_id, _ in taken)
        deltas.extend(amount for _, amount in taken)
        wallet_services.post_transfer_arrays(
            reference=f"tourney:{tournament.pk}:refund",
            kind=TransferKind.TOURNAMENT_REFUND,
            currency=tournament.currency,
            account_ids=np.array(ids, dtype=np.int64),
            deltas=np.array(deltas, dtype=np.int64),
            memo=f"Refund of cancelled tournament {tournament.pk}: {reason}"[:255],
        )
    Entrant.objects.filter(
        tournament=tournament,
        status__in=(EntrantStatus.REGISTERED, EntrantStatus.PLAYING, EntrantStatus.ELIMINATED),
    ).update(status=EntrantStatus.REFUNDED, hold=None)
    tournament.state = TournamentState.CANCELLED
    tournament.cancel_reason = reason[:200]
    tournament.finished_at = now
    tournament.prize_pool_minor = 0 if taken else tournament.prize_pool_minor
    tournament.save(update_fields=["state", "cancel_reason", "finished_at", "cancelled_by", "prize_pool_minor"])


def last_round_number(tournament: Tournament) -> int:
    """The number of the last hand whose standings were recorded (0: none yet)."""
    return int(TournamentRound.objects.filter(tournament=tournament).aggregate(last=Max("number"))["last"] or 0)
