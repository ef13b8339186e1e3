"""Every Hold'em chip movement is a ledger transfer through ``wallet.services``.

Chips at a Hold'em table are held in the table's escrow account (``escrow:holdem:<table>``):
a buy-in moves money from the player's wallet into it, a cash-out back to the wallet, and
the rake of a hand from it to the rake account (DESIGN.md, "Texas Hold'em tables", 3).
Between hands the escrow's balance equals the sum of the seats' ``stack_minor``; during a
hand the seats keep their starting stacks and the pots stay in the escrow, so that holds
at every moment (a cancelled hand needs no refund).
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db import transaction
from django.db.models.signals import post_migrate

from tables.models import Seat, SeatStatus, Table
from wallet import services as wallet_services
from wallet.errors import CurrencyMismatchError
from wallet.models import Account, AccountKind, TransferKind


def escrow_key(table_id: int) -> str:
    """The ledger key of a Hold'em table's escrow account."""
    return f"escrow:holdem:{table_id}"


def table_escrow(table: Table) -> Account:
    """The table's escrow account (created empty on first use)."""
    return wallet_services.ensure_account(key=escrow_key(table.pk), kind=AccountKind.ESCROW, currency=table.currency)


def buy_chips(*, table: Table, seat: Seat, amount_minor: int) -> None:
    """Move ``amount_minor`` from the player's wallet into the table's escrow and onto his
    stack. Raises InsufficientFundsError (nothing changes) and InvalidAmountError."""
    wallet = wallet_services.ensure_player_account(user_id=seat.user_id, currency=table.currency)
    wallet_services.transfer_between(
        source=wallet,
        destination=table_escrow(table),
        amount_minor=amount_minor,
        kind=TransferKind.BUY_IN,
        reference=f"buy_in:{table.pk}:{seat.pk}:{uuid.uuid4().hex}",
        memo=f"Chips bought at {table.name}",
    )
    Seat.objects.filter(pk=seat.pk).update(stack_minor=seat.stack_minor + amount_minor)
    seat.stack_minor += amount_minor


def sit_down(
    *,
    table: Table,
    user_id: int,
    position: int,
    buy_in_minor: int,
    now: datetime,
    blind_choice: str = "",
    bot_personality: str = "",
) -> Seat:
    """Seat ``user_id`` (a person, or a house bot when ``bot_personality`` is given) at seat
    ``position`` with an empty stack, then buy ``buy_in_minor`` chips into it from his wallet
    (``buy_chips``). A seat row the player left earlier is reused. The caller holds the
    table's lock and has checked the seat, the buy-in range and the player protection;
    raises InsufficientFundsError from the wallet (nothing is then written: the caller's
    transaction rolls back)."""
    seat, _ = Seat.objects.update_or_create(
        table=table,
        user_id=user_id,
        defaults={
            "status": SeatStatus.ACTIVE,
            "status_reason": "",
            "joined_at": now,
            "left_at": None,
            "last_seen_at": now,
            "position": position,
            "stack_minor": 0,
            "is_bot": bool(bot_personality),
            "bot_personality": bot_personality,
            "blind_choice": blind_choice,
            "leaving": False,
        },
    )
    buy_chips(table=table, seat=seat, amount_minor=buy_in_minor)
    return seat


def cash_out(*, table: Table, seat: Seat, write_stack: bool = True) -> int:
    """Return the seat's whole stack from the escrow to the player's wallet; returns the
    amount (0: nothing moved). ``write_stack`` False: the caller writes the seat's stack of
    0 itself, in the ``UPDATE`` it sends the seat anyway (``release_seat``)."""
    amount = int(seat.stack_minor)
    if amount > 0:
        wallet = wallet_services.ensure_player_account(user_id=seat.user_id, currency=table.currency)
        wallet_services.transfer_between(
            source=table_escrow(table),
            destination=wallet,
            amount_minor=amount,
            kind=TransferKind.CASH_OUT,
            reference=f"cash_out:{table.pk}:{seat.pk}:{uuid.uuid4().hex}",
            memo=f"Chips returned from {table.name}",
        )
    if write_stack:
        Seat.objects.filter(pk=seat.pk).update(stack_minor=0)
    seat.stack_minor = 0
    return amount


_ACCOUNTS: dict[str, tuple[int, str]] = {}
"""Ledger accounts this process has seen committed, by key: (id, currency). An account is
never deleted nor renamed (the ledger keeps its entries), so a settlement finds its table's
escrow and rake accounts without reading them (issue 23, item 6, statements per step)."""


def _forget_accounts(**_: object) -> None:
    """A flushed or migrated database (a test's teardown) may reuse what was remembered."""
    _ACCOUNTS.clear()


post_migrate.connect(_forget_accounts, weak=False, dispatch_uid="tables.holdem.accounts")


def _accounts(keys: list[str], table: Table) -> dict[str, Account]:
    """The accounts named ``keys`` (the table's escrow, its rake account), as instances
    holding only their id and currency (what ``transfer_between`` uses): from this process's
    memory, else one read of all the missing, else created (``ensure_account``). Remembered
    once the transaction that read them commits (a rolled-back test may reuse an id)."""
    missing = [key for key in keys if key not in _ACCOUNTS]
    found: dict[str, tuple[int, str]] = {key: _ACCOUNTS[key] for key in keys if key in _ACCOUNTS}
    if missing:
        found.update(
            (key, (pk, currency))
            for key, pk, currency in Account.objects.filter(key__in=missing).values_list("key", "pk", "currency")
        )
        for key in missing:
            if key not in found:  # the table's first buy-in made its escrow; the first rake makes its account
                kind = AccountKind.ESCROW if key == escrow_key(table.pk) else AccountKind.RAKE
                account = wallet_services.ensure_account(key=key, kind=kind, currency=table.currency)
                found[key] = (account.pk, account.currency)
        fresh = {key: found[key] for key in missing}
        transaction.on_commit(lambda: _ACCOUNTS.update(fresh))
    accounts = {}
    for key in keys:
        pk, currency = found[key]
        if currency != table.currency:
            raise CurrencyMismatchError(f"account {key} holds {currency}, not {table.currency}", key=key)
        accounts[key] = Account(pk=pk, key=key, currency=currency)
    return accounts


def take_rake(*, table: Table, hand_id: int, amount_minor: int) -> None:
    """Move a hand's rake from the table's escrow to the rake account (once per hand:
    reference ``holdem_rake:<hand>``). Both accounts come from this process's memory when
    known (``_accounts``): the transfer's own two statements only. Raises
    CurrencyMismatchError (an account of another currency under the key)."""
    if amount_minor <= 0:
        return
    escrow, rake_key = escrow_key(table.pk), wallet_services.rake_account_key(table.currency, table.pk)
    accounts = _accounts([escrow, rake_key], table)
    wallet_services.transfer_between(
        source=accounts[escrow],
        destination=accounts[rake_key],
        amount_minor=amount_minor,
        kind=TransferKind.HOLDEM_RAKE,
        reference=f"holdem_rake:{hand_id}",
        memo=f"Rake of Hold'em hand {hand_id} at {table.name}",
    )
