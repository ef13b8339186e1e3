"""Tournaments: scheduling, registration, the clock's step between hands, and cancellation
(docs/tournaments.md); the start, the standings and the end with its prizes are
tables.tournaments.rounds, the accounts, chips and refunds tables.tournaments.money.

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

from django.db import transaction
from django.db.models import Max

from tables.models import Table, TablePhase, WiderPokerConditions
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
from tables.tournaments.money import LIVE, _admit, _cancel, _retire_chips, entry_reference, pool_account
from tables.tournaments.rounds import (
    _close_table,
    _deal,
    _eliminate,
    _finish,
    _publish_standings,
    _record_round,
    _start,
)
from tables.widerpoker import KEY as WIDERPOKER
from tables.widerpoker.services.conditions import validate_table_config
from wallet import protection
from wallet import services as wallet_services
from wallet.models import Currency, TransferKind

logger = logging.getLogger(__name__)


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
    )
    WiderPokerConditions.objects.create(table=table, **table_config(tournament, ante_minor=tournament.ante_for(1)))
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
            _close_table(table, reason="cancelled", now=now)
            return True
    if tournament.state != TournamentState.RUNNING:
        _close_table(table, reason="over", now=now)
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
    conditions = table.widerpoker
    if conditions.ante_minor != ante:
        conditions.ante_minor = ante
        conditions.save(update_fields=["ante_minor"])
    table.phase = TablePhase.WAITING
    table.phase_deadline = now + timedelta(seconds=conditions.results_seconds)
    table.version += 1
    _deal(tournament, table, live, now=now)
    return True


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
        _close_table(table, reason="tournament cancelled", now=now)
        Table.objects.filter(pk=table.pk).update(
            phase=table.phase,
            phase_deadline=None,
            current_hand=None,
            is_open=False,
            version=table.version,
        )
        broadcast_table_on_commit(table.pk, refresh_private=True)
    return tournament


def last_round_number(tournament: Tournament) -> int:
    """The number of the last hand whose standings were recorded (0: none yet)."""
    return int(TournamentRound.objects.filter(tournament=tournament).aggregate(last=Max("number"))["last"] or 0)
