"""A tournament's money and chips (docs/tournaments.md): its accounts (the prize pool
``tourney:<id>:pool``, the chips' cashier ``cashier:T<id>``), each entry's hold reference,
admitting entries (buy-ins captured, fees to the house, chips issued, seats taken), the
chips an entry holds and their retirement, and the refund of a cancelled tournament. Every
amount is in minor units, every move a ledger transfer."""

from __future__ import annotations

from datetime import datetime

import numpy as np

from tables.models import Seat, SeatStatus
from tables.tournaments.models import (
    Entrant,
    EntrantStatus,
    Tournament,
    TournamentState,
)
from wallet import services as wallet_services
from wallet.lookups import IntArray
from wallet.models import Account, AccountKind, TransferKind

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


def _chips_of(tournament: Tournament, user_ids: list[int]) -> dict[int, int]:
    """Each player's chips (his account of the tournament's chips), minor units."""
    return dict(
        Account.objects.filter(kind=AccountKind.PLAYER, currency=tournament.chips, user_id__in=user_ids).values_list(
            "user_id", "balance_minor"
        )
    )


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
