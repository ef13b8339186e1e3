"""The house bots of a fun Hold'em table: seated between hands to fill ``bot_seats`` (always
leaving a seat for a person), released when extra, each with a maximum buy-in of FUN chips
from its own wallet (topped up by the cashier). Called by the clock's step between hands
(``deal._start_hand_or_wait``) with the table's row locked; moved out of ``deal``."""

from __future__ import annotations

import secrets
from datetime import datetime

from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from tables.engine.holdem import PERSONALITIES
from tables.holdem.services import hands, money
from tables.models import HoldemConditions, Seat, SeatStatus, Table, TableMode
from wallet import services as wallet_services
from wallet.models import AccountKind, Currency, TransferKind

BOT_PREFIX = "housebot-"


def manage_bots(table: Table, conditions: HoldemConditions, held: list[Seat], *, now: datetime) -> bool:
    """House bots fill a fun table up to ``bot_seats``, always leaving a seat free for a
    person; extra bots leave between hands. Never at cash tables (seed 001 Notes 4).
    ``held``: the table's positioned seats read in this transaction (a seat freed since has
    no position). Returns whether a bot was seated or released."""
    seated = [seat for seat in held if seat.position is not None and seat.status != SeatStatus.LEFT]
    bots = [seat for seat in seated if seat.is_bot]
    target = 0
    if table.mode == TableMode.FUN and any(not seat.is_bot for seat in seated):
        target = min(conditions.bot_seats, conditions.seats - (len(seated) - len(bots)) - 1)
    changed = False
    for seat in bots[max(target, 0) :]:
        hands.release_seat(table, seat, now=now, reason="bot left")
        table.version += 1
        changed = True
    taken = {seat.position for seat in seated if seat not in bots[max(target, 0) :]}
    free = [p for p in range(conditions.seats) if p not in taken]
    for _ in range(max(target, 0) - len(bots)):
        if not free:
            break
        _seat_bot(table, conditions, free.pop(0), now=now)
        table.version += 1
        changed = True
    return changed


def _idle_bot_user() -> User:
    """A house bot's user seated nowhere, locked for this transaction (``SKIP LOCKED``: two
    clock workers seating bots at once never take the same one), or a new one: one query,
    not one per existing bot, and as many bots as the room needs (it stopped at 999). A new
    bot's name is the next free ``housebot-<k>``; a name another worker has just taken is
    skipped (a savepoint), never failing the step (it did: the table's hand was cancelled)."""
    busy = Seat.objects.filter(is_bot=True).exclude(status=SeatStatus.LEFT).values("user_id")
    idle = (
        User.objects.filter(
            username__startswith=BOT_PREFIX, is_active=False, password__startswith=UNUSABLE_PASSWORD_PREFIX
        )
        .exclude(pk__in=busy)
        .order_by("pk")
        .select_for_update(skip_locked=True)
        .first()
    )
    if idle is not None:
        return idle
    number = User.objects.filter(username__startswith=BOT_PREFIX).count() + 1
    while True:
        try:
            with transaction.atomic():
                return User.objects.create_user(username=f"{BOT_PREFIX}{number}", password=None, is_active=False)
        except IntegrityError:
            number += 1


def _seat_bot(table: Table, conditions: HoldemConditions, position: int, *, now: datetime) -> None:
    """Seat a house bot (an inactive user ``housebot-<k>``: it cannot log in) with a maximum
    buy-in of FUN chips from its own wallet, topped up by the cashier when low."""
    user = _idle_bot_user()
    buy_in = int(conditions.max_buy_in_minor)
    wallet = wallet_services.ensure_player_account(user_id=user.pk, currency=Currency.FUN)
    if wallet.balance_minor - wallet.held_minor < buy_in:
        wallet_services.transfer_between(
            source=wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN),
            destination=wallet,
            amount_minor=buy_in - (wallet.balance_minor - wallet.held_minor),
            kind=TransferKind.FUN_TOP_UP,
            reference=f"fun_top_up:{user.pk}:{secrets.token_hex(8)}",
            memo="House bot's fun chips",
        )
    personality = PERSONALITIES[(user.pk + position) % len(PERSONALITIES)].name
    money.sit_down(
        table=table, user_id=user.pk, position=position, buy_in_minor=buy_in, now=now, bot_personality=personality
    )
