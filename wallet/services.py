"""Every change to an account balance. Nothing else writes Account, Transfer or LedgerEntry.

Rules (STYLE.md, "Money"): integer minor units; every movement is one balanced transfer with a
unique reference; accounts are locked in primary-key order before they are read to decide;
player balances never go below zero (checked here and by a database constraint).
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from wallet import chain, protection
from wallet.errors import (
    CurrencyMismatchError,
    InsufficientFundsError,
    InvalidAmountError,
    TopUpRefusedError,
    TransferConflictError,
    UnbalancedTransferError,
)
from wallet.models import Account, AccountKind, Currency, LedgerEntry, LedgerHead, Transfer, TransferKind
from wallet.money import format_minor


@dataclass(frozen=True, slots=True)
class Leg:
    """One signed movement of a transfer: ``delta_minor`` > 0 credits ``account_id``."""

    account_id: int
    delta_minor: int


def player_account_key(user_id: int, currency: str) -> str:
    """The key of a player's wallet account, e.g. ``player:12:FUN``."""
    return f"player:{user_id}:{currency}"


def house_account_key(kind: str, currency: str) -> str:
    """The key of a singleton house account (cashier or rake) of a currency."""
    return f"{kind}:{currency}"


def ensure_account(*, key: str, kind: str, currency: str, user_id: int | None = None) -> Account:
    """Return the account named ``key``, creating it with a zero balance if it does not exist.

    Safe under concurrency: a racing creator's row is fetched instead. Raises
    CurrencyMismatchError if the account exists in another currency.
    """
    if currency not in Currency.values:
        raise CurrencyMismatchError(f"unknown currency {currency!r}", currency=currency)
    account = Account.objects.filter(key=key).first()
    if account is None:
        try:
            with transaction.atomic():
                account = Account.objects.create(key=key, kind=kind, currency=currency, user_id=user_id)
        except IntegrityError:
            account = Account.objects.get(key=key)
    if account.currency != currency:
        raise CurrencyMismatchError(
            f"account {key} holds {account.currency}, not {currency}", key=key, currency=currency
        )
    return account


def ensure_player_account(*, user_id: int, currency: str) -> Account:
    """The player's wallet in ``currency`` (created empty on first use)."""
    return ensure_account(
        key=player_account_key(user_id, currency),
        kind=AccountKind.PLAYER,
        currency=currency,
        user_id=user_id,
    )


def ensure_player_accounts(*, user_ids: Iterable[int], currency: str) -> dict[int, int]:
    """Bulk ensure_player_account: ``{user_id: account_id}`` for every user, opening the
    missing wallets (empty) in one insert. Three queries whatever the number of players."""
    if currency not in Currency.values:
        raise CurrencyMismatchError(f"unknown currency {currency!r}", currency=currency)
    wanted = {player_account_key(user_id, currency): user_id for user_id in user_ids}
    found = dict(Account.objects.filter(key__in=wanted).values_list("key", "pk"))
    missing = [key for key in wanted if key not in found]
    if missing:
        Account.objects.bulk_create(
            [Account(key=key, kind=AccountKind.PLAYER, currency=currency, user_id=wanted[key]) for key in missing],
            ignore_conflicts=True,
            batch_size=2000,
        )
        found.update(Account.objects.filter(key__in=missing).values_list("key", "pk"))
    return {wanted[key]: account_id for key, account_id in found.items()}


def ensure_house_account(*, kind: str, currency: str) -> Account:
    """The cashier or rake account of ``currency``."""
    return ensure_account(key=house_account_key(kind, currency), kind=kind, currency=currency)


def lock_accounts(account_ids: Iterable[int]) -> None:
    """Lock accounts in primary-key order (the global lock order) until the transaction ends,
    before reading what decides a transfer (e.g. a player's limits)."""
    list(Account.objects.select_for_update().filter(pk__in=sorted(set(account_ids))).order_by("pk").values_list("pk"))


@transaction.atomic
def post_transfer(
    *,
    reference: str,
    kind: str,
    currency: str,
    legs: Iterable[Leg],
    memo: str = "",
    created_by_id: int | None = None,
) -> Transfer:
    """Record one balanced movement of money and update the balances it touches.

    ``legs`` may hold any number of accounts (a settlement pays thousands at once); legs of
    the same account are merged. Locks every account in primary-key order first, then checks.
    Idempotent on ``reference``: repeating the same transfer returns the stored one and
    changes nothing.

    Raises:
        UnbalancedTransferError: the deltas do not sum to zero, or there are no legs.
        InvalidAmountError: a delta is not an ``int``.
        CurrencyMismatchError: an account is not in ``currency``.
        InsufficientFundsError: a non-cashier account would go below zero (nothing changes).
        TransferConflictError: ``reference`` was already used for different legs.
    """
    merged: dict[int, int] = defaultdict(int)
    for leg in legs:
        if not isinstance(leg.delta_minor, int) or isinstance(leg.delta_minor, bool):
            raise InvalidAmountError("amounts are whole minor units", delta=repr(leg.delta_minor))
        merged[leg.account_id] += leg.delta_minor
    deltas = {account_id: delta for account_id, delta in merged.items() if delta != 0}
    if not deltas:
        raise UnbalancedTransferError("a transfer needs at least one non-zero leg", reference=reference)
    if sum(deltas.values()) != 0:
        raise UnbalancedTransferError(
            "the legs of a transfer must sum to zero",
            reference=reference,
            total=sum(deltas.values()),
        )

    ids = sorted(deltas)
    locked = {account.pk: account for account in Account.objects.select_for_update().filter(pk__in=ids).order_by("pk")}
    existing = Transfer.objects.filter(reference=reference).first()
    if existing is not None:
        stored = dict(existing.entries.values_list("account_id", "delta_minor"))
        if stored != deltas:
            raise TransferConflictError(f"reference {reference!r} was used for another transfer", reference=reference)
        return existing
    if len(locked) != len(ids):
        missing = sorted(set(ids) - set(locked))
        raise InvalidAmountError(f"unknown accounts {missing}", accounts=missing)
    for account in locked.values():
        if account.currency != currency:
            raise CurrencyMismatchError(
                f"account {account.key} holds {account.currency}, not {currency}",
                key=account.key,
                currency=currency,
            )
        after = account.balance_minor + deltas[account.pk]
        if after < 0 and account.kind != AccountKind.CASHIER:
            raise InsufficientFundsError(
                f"{'the wallet' if account.kind == AccountKind.PLAYER else account.key} holds "
                f"{format_minor(account.balance_minor, account.currency)}, "
                f"needs {format_minor(-deltas[account.pk], account.currency)}",
                key=account.key,
                balance_minor=account.balance_minor,
                shortfall_minor=-after,
            )

    legs_after = [
        (account_id, deltas[account_id], locked[account_id].balance_minor + deltas[account_id]) for account_id in ids
    ]
    # Seal the transfer into its currency's chain (wallet/chain.py). The head is locked after
    # the accounts, always in that order, so concurrent transfers cannot deadlock on it.
    head = _lock_head(currency)
    created_at = timezone.now()
    sequence = head.sequence + 1
    memo = memo[:255]
    chain_hash = chain.seal(
        chain.ledger_key(),
        chain.canonical(
            currency=currency,
            sequence=sequence,
            previous_hash=head.chain_hash,
            reference=reference,
            kind=kind,
            memo=memo,
            created_by_id=created_by_id,
            created_at=created_at,
            legs=legs_after,
        ),
    )
    transfer = Transfer.objects.create(
        reference=reference,
        kind=kind,
        currency=currency,
        memo=memo,
        created_by_id=created_by_id,
        created_at=created_at,
        sequence=sequence,
        chain_hash=chain_hash,
    )
    LedgerEntry.objects.bulk_create(
        [
            LedgerEntry(transfer=transfer, account_id=account_id, delta_minor=delta, balance_after_minor=after)
            for account_id, delta, after in legs_after
        ],
        batch_size=2000,
    )
    LedgerHead.objects.filter(pk=head.pk).update(sequence=sequence, chain_hash=chain_hash)
    _apply_deltas(ids, [deltas[i] for i in ids])
    return transfer


def _lock_head(currency: str) -> LedgerHead:
    """The currency's chain head, locked until the transaction ends (created on first use)."""
    head = LedgerHead.objects.select_for_update().filter(currency=currency).first()
    if head is None:
        try:
            with transaction.atomic():
                LedgerHead.objects.create(currency=currency)
        except IntegrityError:
            pass  # another transaction created it first
        head = LedgerHead.objects.select_for_update().get(currency=currency)
    return head


def _apply_deltas(ids: Sequence[int], deltas: Sequence[int]) -> None:
    """Add ``deltas`` to the balances of ``ids`` (rows already locked by the caller)."""
    if len(ids) <= 4:
        for account_id, delta in zip(ids, deltas, strict=True):
            Account.objects.filter(pk=account_id).update(balance_minor=F("balance_minor") + delta)
        return
    table = Account._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One statement for thousands of balances (REALTIME_ANCHORS.md §3.1: ~30x bulk_update).
            cursor.execute(
                f"UPDATE {table} AS a SET balance_minor = a.balance_minor + v.delta "
                "FROM unnest(%s::bigint[], %s::bigint[]) AS v(id, delta) WHERE a.id = v.id",
                [list(ids), list(deltas)],
            )
        else:
            cursor.executemany(
                f"UPDATE {table} SET balance_minor = balance_minor + %s WHERE id = %s",
                [(delta, account_id) for account_id, delta in zip(ids, deltas, strict=True)],
            )


def transfer_between(
    *,
    source: Account,
    destination: Account,
    amount_minor: int,
    kind: str,
    reference: str,
    memo: str = "",
    created_by_id: int | None = None,
) -> Transfer:
    """Move a positive ``amount_minor`` from ``source`` to ``destination`` (see post_transfer)."""
    if not isinstance(amount_minor, int) or isinstance(amount_minor, bool) or amount_minor <= 0:
        raise InvalidAmountError("the amount must be a positive number of minor units", amount=amount_minor)
    return post_transfer(
        reference=reference,
        kind=kind,
        currency=source.currency,
        legs=[Leg(source.pk, -amount_minor), Leg(destination.pk, amount_minor)],
        memo=memo,
        created_by_id=created_by_id,
    )


@transaction.atomic(durable=True)
def deposit_cash(
    *,
    user_id: int,
    currency: str,
    amount_minor: int,
    reason: str,
    staff_user_id: int,
    reference: str = "",
    now: datetime | None = None,
) -> Transfer:
    """A staff member credits money received outside the platform (no payment provider):
    cashier -> player. ``reason`` is mandatory and becomes the memo the player and auditors
    see. FUN chips are never deposited as cash (CurrencyMismatchError).

    The player's protection holds (wallet/protection.py): DepositLimitError past his own
    deposit limit of the last 24 hours, SelfExcludedError, TimeOutError or SuspendedError
    while he may not play; nothing is deposited then. A repeated reference is not a new
    deposit and is not refused.
    """
    repeated = bool(reference) and Transfer.objects.filter(reference=reference).exists()
    valid_amount = isinstance(amount_minor, int) and not isinstance(amount_minor, bool) and amount_minor > 0
    if not repeated and valid_amount and currency in Currency.values and currency != Currency.FUN:
        # Lock the cashier and the wallet (primary-key order) before reading the deposits
        # of the day: two deposits at once cannot both pass the limit.
        lock_accounts(
            [
                ensure_house_account(kind=AccountKind.CASHIER, currency=currency).pk,
                ensure_player_account(user_id=user_id, currency=currency).pk,
            ]
        )
        protection.check_deposit(
            user_id=user_id, currency=currency, amount_minor=amount_minor, now=now or timezone.now()
        )
    return _move_cash(
        deposit=True,
        user_id=user_id,
        currency=currency,
        amount_minor=amount_minor,
        reason=reason,
        staff_user_id=staff_user_id,
        reference=reference,
    )


@transaction.atomic(durable=True)
def withdraw_cash(
    *,
    user_id: int,
    currency: str,
    amount_minor: int,
    reason: str,
    staff_user_id: int,
    reference: str = "",
) -> Transfer:
    """A staff member pays a player out of the platform: player -> cashier, with a reason.

    Raises InsufficientFundsError if the wallet does not hold the amount (nothing changes);
    CurrencyMismatchError for FUN chips, which can never be turned into cash.
    """
    return _move_cash(
        deposit=False,
        user_id=user_id,
        currency=currency,
        amount_minor=amount_minor,
        reason=reason,
        staff_user_id=staff_user_id,
        reference=reference,
    )


def _move_cash(
    *, deposit: bool, user_id: int, currency: str, amount_minor: int, reason: str, staff_user_id: int, reference: str
) -> Transfer:
    kind = TransferKind.DEPOSIT if deposit else TransferKind.WITHDRAWAL
    if currency == Currency.FUN:
        raise CurrencyMismatchError("fun chips are granted, never moved as cash", currency=currency)
    if not reason.strip():
        raise InvalidAmountError(f"a {kind.label.lower()} needs a reason")
    cashier = ensure_house_account(kind=AccountKind.CASHIER, currency=currency)
    wallet = ensure_player_account(user_id=user_id, currency=currency)
    return transfer_between(
        source=cashier if deposit else wallet,
        destination=wallet if deposit else cashier,
        amount_minor=amount_minor,
        kind=kind,
        reference=reference or f"{kind}:{uuid.uuid4()}",
        memo=reason,
        created_by_id=staff_user_id,
    )


@transaction.atomic
def grant_signup_fun_chips(*, user_id: int) -> Transfer:
    """Grant the sign-up FUN chips once per player (reference ``fun_grant:<user>``)."""
    cashier = ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    wallet = ensure_player_account(user_id=user_id, currency=Currency.FUN)
    return transfer_between(
        source=cashier,
        destination=wallet,
        amount_minor=settings.FUN_SIGNUP_GRANT_MINOR,
        kind=TransferKind.FUN_GRANT,
        reference=f"fun_grant:{user_id}",
        memo="Fun chips granted at sign-up",
    )


@transaction.atomic(durable=True)
def top_up_fun_chips(*, user_id: int) -> Transfer:
    """Top the player's FUN wallet back up to the configured level when it is low.

    Raises TopUpRefusedError when the balance is at or above ``FUN_TOP_UP_BELOW_MINOR``.
    """
    cashier = ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    wallet = ensure_player_account(user_id=user_id, currency=Currency.FUN)
    locked = Account.objects.select_for_update().get(pk=wallet.pk)
    if locked.balance_minor >= settings.FUN_TOP_UP_BELOW_MINOR:
        raise TopUpRefusedError(
            "fun chips are topped up only when the balance is low",
            balance_minor=locked.balance_minor,
            below_minor=settings.FUN_TOP_UP_BELOW_MINOR,
        )
    return transfer_between(
        source=cashier,
        destination=wallet,
        amount_minor=settings.FUN_TOP_UP_TO_MINOR - locked.balance_minor,
        kind=TransferKind.FUN_TOP_UP,
        reference=f"fun_top_up:{user_id}:{uuid.uuid4()}",
        memo="Fun chips top-up",
    )
