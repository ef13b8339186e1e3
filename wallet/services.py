"""Every change to an account balance. Nothing else writes Account, Transfer or LedgerEntry.

Rules (STYLE.md, "Money"): integer minor units; every movement is one balanced transfer with a
unique reference; accounts are locked in primary-key order before they are read to decide;
player balances never go below zero (checked here and by a database constraint).

Accounts are locked ``FOR NO KEY UPDATE`` (PostgreSQL; what an ``UPDATE`` of a balance takes
anyway): it serialises every change of a balance, and lets through the foreign-key checks
(``FOR KEY SHARE``) of rows that merely reference an account. With ``FOR UPDATE``, every hold
of a hand (whose row references the hand's escrow) waited at commit for the clock's capture,
which locks the escrow: the commits of 16 buyers were seen queued on it at once.
"""

from __future__ import annotations

import hmac
import logging
import threading
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from wallet import chain, guests, protection
from wallet.errors import (
    CurrencyMismatchError,
    InsufficientFundsError,
    InvalidAmountError,
    TopUpRefusedError,
    TransferConflictError,
    UnbalancedTransferError,
)
from wallet.lookups import IntArray, binary_copy_rows, int_array_literal, read_int_columns
from wallet.models import (
    Account,
    AccountKind,
    Currency,
    FundsHold,
    LedgerEntry,
    LedgerHead,
    Transfer,
    TransferKind,
    is_currency,
)
from wallet.money import format_minor

logger = logging.getLogger(__name__)


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
    if not is_currency(currency):
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
    if not is_currency(currency):
        raise CurrencyMismatchError(f"unknown currency {currency!r}", currency=currency)
    ordered = sorted(set(user_ids))
    players = Account.objects.filter(kind=AccountKind.PLAYER, currency=currency)
    found: dict[int, int] = dict(players.filter(user_id__any_of=IntArray(ordered)).values_list("user_id", "pk"))
    missing = [user_id for user_id in ordered if user_id not in found]
    if missing:
        Account.objects.bulk_create(
            [
                Account(
                    key=player_account_key(user_id, currency),
                    kind=AccountKind.PLAYER,
                    currency=currency,
                    user_id=user_id,
                )
                for user_id in missing
            ],
            ignore_conflicts=True,
            batch_size=2000,
        )
        found.update(players.filter(user_id__any_of=IntArray(missing)).values_list("user_id", "pk"))
    return found


def rake_account_key(currency: str, table_id: int) -> str:
    """The key of the rake account a table's hands pay into: ``rake:<CUR>`` when
    ``POKER_RAKE_ACCOUNTS`` is 1 (the default) or ``table_id`` is a multiple of it, else
    ``rake:<CUR>:<table_id % POKER_RAKE_ACCOUNTS>``. Several rake accounts let raked
    settlements of many tables commit side by side instead of queuing on one row; the
    house's rake is the sum of the currency's accounts of kind ``rake``."""
    shard = table_id % int(settings.RAKE_ACCOUNTS)
    key = house_account_key(AccountKind.RAKE, currency)
    return key if shard == 0 else f"{key}:{shard}"


def ensure_rake_account(*, currency: str, table_id: int) -> Account:
    """The rake account of ``table_id``'s hands in ``currency`` (``rake_account_key``)."""
    return ensure_account(key=rake_account_key(currency, table_id), kind=AccountKind.RAKE, currency=currency)


def ensure_house_account(*, kind: str, currency: str) -> Account:
    """The cashier or rake account of ``currency``."""
    return ensure_account(key=house_account_key(kind, currency), kind=kind, currency=currency)


def lock_accounts(account_ids: Iterable[int]) -> None:
    """Lock accounts in primary-key order (the global lock order) until the transaction ends,
    before reading what decides a transfer (e.g. a player's limits)."""
    list(
        Account.objects.select_for_update(no_key=True)
        .filter(pk__in=sorted(set(account_ids)))
        .order_by("pk")
        .values_list("pk")
    )


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

    ids = np.array(sorted(deltas), dtype=np.int64)
    with _unit():
        return _post(
            reference=reference,
            kind=kind,
            currency=currency,
            ids=ids,
            deltas=np.array([deltas[i] for i in ids.tolist()], dtype=np.int64),
            memo=memo,
            created_by_id=created_by_id,
        )


def post_transfer_arrays(
    *,
    reference: str,
    kind: str,
    currency: str,
    account_ids: np.ndarray,
    deltas: np.ndarray,
    memo: str = "",
    locked: LockedAccounts | None = None,
) -> Transfer:
    """``post_transfer`` for legs given as two int64 arrays of the same length (a hand's
    antes or prizes: up to 100,000 legs), with the same rules, checks, errors, locks and
    idempotence, and the same seal. Legs of the same account are merged. On PostgreSQL the
    legs are written with ``COPY`` and the balances with one ``UPDATE``; no Python object
    per leg. ``locked``: accounts this transaction already locked and read
    (``lock_and_read``), not read again while still valid (``LockedAccounts``)."""
    account_ids = np.asarray(account_ids, dtype=np.int64)
    deltas = np.asarray(deltas, dtype=np.int64)
    if account_ids.shape != deltas.shape or account_ids.ndim != 1:
        raise InvalidAmountError("account ids and deltas must be two arrays of one length", reference=reference)
    ids, inverse = np.unique(account_ids, return_inverse=True)
    merged = np.zeros(len(ids), dtype=np.int64)
    np.add.at(merged, inverse, deltas)
    keep = merged != 0
    ids, merged = ids[keep], merged[keep]
    if not len(ids):
        raise UnbalancedTransferError("a transfer needs at least one non-zero leg", reference=reference)
    if int(merged.sum()) != 0:
        raise UnbalancedTransferError(
            "the legs of a transfer must sum to zero", reference=reference, total=int(merged.sum())
        )
    with _unit():
        return _post(
            reference=reference, kind=kind, currency=currency, ids=ids, deltas=merged, memo=memo, locked=locked
        )


def _unit() -> AbstractContextManager[Any]:
    """The transaction a transfer is posted in: its own (``transaction.atomic``) when none is
    open; inside the caller's on PostgreSQL, without a savepoint (``_post`` checks before it
    writes, and writes a transfer of a few legs in one statement, so a refused transfer
    leaves the caller's transaction as it was, and a failed write aborts it as any failed
    statement would); a savepoint elsewhere (SQLite writes in several statements)."""
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        return nullcontext()
    return transaction.atomic()


_balance_writes = threading.local()
"""How many statements this thread's connection sent that change a balance or a hold
(``_apply_deltas``, ``hold_funds``): a ``LockedAccounts`` read before a change is stale."""


def _count_balance_write() -> None:
    _balance_writes.count = getattr(_balance_writes, "count", 0) + 1


def _write_stamp() -> tuple[int, int, tuple[str, ...]] | None:
    """(this PostgreSQL transaction's id, this thread's balance writes so far, the savepoints
    open now); None outside a transaction or on SQLite, where locked rows are always read
    again."""
    if connection.vendor != "postgresql" or not connection.in_atomic_block:
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT txid_current()")
        (txid,) = cursor.fetchone()
    return int(txid), getattr(_balance_writes, "count", 0), tuple(connection.savepoint_ids)


def _still_valid(stamp: tuple[int, int, tuple[str, ...]] | None) -> bool:
    """Whether rows locked and read at ``stamp`` are still locked and unchanged: the same
    transaction, no balance or hold written since, and every savepoint open then still open
    (a savepoint rolled back releases the row locks taken inside it)."""
    if stamp is None:
        return False
    now = _write_stamp()
    if now is None:
        return False
    txid, writes, savepoints = stamp
    return now[:2] == (txid, writes) and now[2][: len(savepoints)] == savepoints


class Keys:
    """Account keys aligned with rows of accounts, each made when it is read: ``key_of(i)``
    gives row ``i``'s key, for ``0 <= i < count``. A key only names an account in an error,
    so a deal of 100,000 wallets makes none unless one is refused. Raises IndexError out of
    range."""

    __slots__ = ("count", "key_of")

    def __init__(self, key_of: Callable[[int], str], count: int) -> None:
        self.key_of = key_of
        self.count = count

    @classmethod
    def of(cls, keys: list[str]) -> Keys:
        """The keys ``keys`` as read."""
        return cls(keys.__getitem__, len(keys))

    def __getitem__(self, i: int) -> str:
        if not 0 <= i < self.count:
            raise IndexError(i)
        return self.key_of(i)

    def __len__(self) -> int:
        return self.count


_Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Keys]
"""Locked accounts as ``_lock_accounts`` returns them: the ``(3, N)`` int64 stack of ids,
balances and helds, the ids, then kinds and currencies (object arrays of ``str``) and keys."""


def _texts(values: list[Any]) -> np.ndarray:
    """``values`` (``str``) as a 1-D object array."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


@dataclass(frozen=True, slots=True)
class LockedAccounts:
    """Accounts the current transaction locked (``lock_and_read``), as read under the lock:
    ``ids`` sorted int64 array; ``balances`` and ``helds`` int64 arrays aligned with it
    (minor units); ``kinds`` and ``currencies`` object arrays of ``str`` aligned with it
    (compared with one vectorised operation, not one test per account in Python); ``keys``
    aligned with it, made only when one is read (an account named in an error).

    ``post_transfer_arrays(locked=...)`` takes these rows instead of locking and reading
    them a second time (a deal of 100,000 players: ~0.6 s) when ``stamp`` still matches:
    the same PostgreSQL transaction and no savepoint open at the read rolled back since (so
    the locks are still held), and no balance or hold written on this connection since (so
    the values are still those in the database).
    Otherwise it locks and reads them again, as without ``locked``."""

    ids: np.ndarray
    balances: np.ndarray
    helds: np.ndarray
    kinds: np.ndarray
    currencies: np.ndarray
    keys: Keys
    stamp: tuple[int, int, tuple[str, ...]] | None

    def available(self, account_ids: np.ndarray) -> np.ndarray:
        """What each of ``account_ids`` (int64, all locked here, any order) may spend:
        balance - held, int64 minor units, aligned with ``account_ids``. Raises
        InvalidAmountError for an account not locked here."""
        account_ids = np.asarray(account_ids, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.ids, account_ids), max(len(self.ids) - 1, 0))
        if not len(self.ids) or not np.array_equal(self.ids[at], account_ids):
            if not len(account_ids):
                return np.zeros(0, dtype=np.int64)
            raise InvalidAmountError(
                "accounts not locked", accounts=sorted(set(account_ids.tolist()) - set(self.ids.tolist()))
            )
        available: np.ndarray = self.balances[at] - self.helds[at]
        return available


def lock_and_read(account_ids: np.ndarray) -> LockedAccounts:
    """Lock the accounts ``account_ids`` (int64, any order, distinct) in primary-key order
    until the transaction ends, and return them as read under the lock. Raises
    InvalidAmountError for an unknown account."""
    account_ids = np.asarray(account_ids, dtype=np.int64)
    ids = np.sort(account_ids)
    columns, found, kinds, currencies, keys = _lock_accounts(ids)
    if len(found) != len(account_ids):
        raise InvalidAmountError("unknown accounts", accounts=sorted(set(account_ids.tolist()) - set(found.tolist())))
    return LockedAccounts(found, columns[1], columns[2], kinds, currencies, keys, _write_stamp())


def lock_and_read_players(
    *, user_ids: list[int], currency: str, lock: bool = True
) -> tuple[dict[int, int], LockedAccounts]:
    """``ensure_player_accounts`` and ``lock_and_read`` of their wallets in one read: the
    wallets in ``currency`` of the players ``user_ids`` (distinct), locked in primary-key
    order until the transaction ends and read under the lock; ``({user_id: account_id},
    the LockedAccounts)``. Missing wallets are opened (empty) first, then every wallet is
    locked and read again. A deal of 100,000 players reads its wallets once, not twice.
    Raises CurrencyMismatchError for an unknown currency.

    ``lock=False`` (PostgreSQL): read them without locking, as of the statement (who could
    pay when algorithm 3 freezes a hand's inputs; the deal round locks and checks again): no
    row lock written into 100,000 rows. The result's ``stamp`` is None, so no transfer takes
    those rows as locked (``post_transfer_arrays`` locks and reads them itself)."""
    if currency not in Currency.values:
        raise CurrencyMismatchError(f"unknown currency {currency!r}", currency=currency)
    if connection.vendor != "postgresql" or not user_ids:
        accounts = ensure_player_accounts(user_ids=user_ids, currency=currency)
        return accounts, lock_and_read(np.array([accounts[u] for u in user_ids], dtype=np.int64))
    literal = int_array_literal(np.asarray(user_ids, dtype=np.int64))
    for attempt in range(2):
        # Four integer columns as four binary aggregates (``read_int_columns``): no Python
        # object per wallet (100,000 wallets: ~0.2 s less than a fetch of their rows). The
        # lock is taken by the inner SELECT, in primary-key order.
        columns = read_int_columns(
            f"SELECT id, balance_minor, held_minor, user_id FROM {Account._meta.db_table} "
            "WHERE kind = %s AND currency = %s AND user_id = ANY(%s::integer[]) ORDER BY id"
            + (" FOR NO KEY UPDATE" if lock else ""),
            [AccountKind.PLAYER.value, currency, literal],
            ["id", "balance_minor", "held_minor", "user_id"],
        )
        if len(columns["id"]) == len(user_ids) or attempt:
            break
        found = set(columns["user_id"].tolist())
        ensure_player_accounts(user_ids=[u for u in user_ids if u not in found], currency=currency)
    by_id = np.argsort(columns["id"], kind="stable")
    ids, owners = columns["id"][by_id], columns["user_id"][by_id]
    accounts = dict(zip(owners.tolist(), ids.tolist(), strict=True))
    count = len(ids)
    # Every row is a player's wallet in ``currency`` (the WHERE says so), keyed as
    # ``ensure_player_accounts`` keys it.
    locked = LockedAccounts(
        ids,
        columns["balance_minor"][by_id],
        columns["held_minor"][by_id],
        np.full(count, AccountKind.PLAYER.value, dtype=object),
        np.full(count, currency, dtype=object),
        Keys(lambda i: player_account_key(int(owners[i]), currency), count),
        _write_stamp() if lock else None,
    )
    return accounts, locked


def _locked_rows(locked: LockedAccounts, ids: np.ndarray) -> _Rows | None:
    """``_lock_accounts(ids)`` with the rows ``locked`` already holds taken from it, the
    others locked now; None when ``locked`` is stale (``LockedAccounts``) or when locking
    the others after it would break primary-key order (a deadlock risk): then the caller
    locks and reads everything again."""
    if not _still_valid(locked.stamp):
        return None
    known = np.isin(ids, locked.ids)
    rest = ids[~known]
    if len(rest) and len(locked.ids) and int(rest[0]) <= int(locked.ids[-1]):
        return None
    at = np.searchsorted(locked.ids, ids[known])
    columns, found, kinds, currencies, keys = _lock_accounts(rest)
    taken, known_keys = len(at), locked.keys
    return (
        np.hstack([np.stack([locked.ids[at], locked.balances[at], locked.helds[at]]), columns]),
        np.concatenate([locked.ids[at], found]),
        np.concatenate([locked.kinds[at], kinds]),
        np.concatenate([locked.currencies[at], currencies]),
        Keys(lambda i: known_keys[int(at[i])] if i < taken else keys[i - taken], taken + len(keys)),
    )


def _lock_accounts(ids: np.ndarray) -> _Rows:
    """Lock the accounts ``ids`` (sorted, unique) in primary-key order; return, aligned with
    the rows found: ids, balances, helds, kinds, currencies and keys."""
    table = Account._meta.db_table
    rows: list[Any] = []
    if not len(ids):
        pass
    elif connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, balance_minor, held_minor, kind, currency, key FROM {table} "
                "WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE",
                [int_array_literal(ids)],
            )
            rows = cursor.fetchall()
    else:
        for chunk in range(0, len(ids), 2000):
            rows.extend(
                Account.objects.select_for_update(no_key=True)
                .filter(pk__in=ids[chunk : chunk + 2000].tolist())
                .order_by("pk")
                .values_list("id", "balance_minor", "held_minor", "kind", "currency", "key")
            )
    found = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    balances = np.fromiter((row[1] for row in rows), dtype=np.int64, count=len(rows))
    helds = np.fromiter((row[2] for row in rows), dtype=np.int64, count=len(rows))
    return (
        np.stack([found, balances, helds]),
        found,
        _texts([row[3] for row in rows]),
        _texts([row[4] for row in rows]),
        Keys.of([row[5] for row in rows]),
    )


def _post(
    *,
    reference: str,
    kind: str,
    currency: str,
    ids: np.ndarray,
    deltas: np.ndarray,
    memo: str = "",
    created_by_id: int | None = None,
    released: np.ndarray | None = None,
    locked: LockedAccounts | None = None,
) -> Transfer:
    """Post merged legs: ``ids`` sorted and unique, ``deltas`` non-zero and summing to zero;
    ``released`` (optional, aligned) is taken off the accounts' ``held_minor`` in the same
    write (a capture of holds). Locks the accounts in primary-key order (or takes the rows
    ``locked`` holds, ``LockedAccounts``), checks, seals into the currency's chain or leaves
    the seal to the sealer (``POKER_LEDGER_SEAL``, wallet/chain.py), writes the transfer,
    the legs and the balances.

    On PostgreSQL a transfer of a few legs (a raked settlement: 5) is two statements: one
    locks and reads the accounts, finds a transfer already under ``reference`` and (``tail``)
    tries the chain head, all at once (``_lock_read``); one writes the transfer, its legs,
    the balances and (when the head was taken) the head (``_write``). Every check is made
    between the two, before anything is written, so no savepoint is needed around them."""
    mode = settings.LEDGER_SEAL
    reused = _locked_rows(locked, ids) if locked is not None else None
    probe: _Probe | None = None
    if reused is not None:
        columns, found, kinds, currencies, keys = reused
    elif connection.vendor == "postgresql" and len(ids) <= INLINE_LEGS:
        probe = _lock_read(ids, reference=reference, currency=currency, try_head=mode == "tail")
        columns, found, kinds, currencies, keys = probe.rows
    else:
        columns, found, kinds, currencies, keys = _lock_accounts(ids)
    existing_id = probe.existing_id if probe is not None else _existing_transfer(reference)
    if existing_id is not None:
        existing = Transfer.objects.get(pk=existing_id)
        stored = dict(existing.entries.values_list("account_id", "delta_minor"))
        if stored != dict(zip(ids.tolist(), deltas.tolist(), strict=True)):
            raise TransferConflictError(f"reference {reference!r} was used for another transfer", reference=reference)
        return existing
    if len(found) != len(ids):
        missing = sorted(set(ids.tolist()) - set(found.tolist()))
        raise InvalidAmountError(f"unknown accounts {missing}", accounts=missing)
    misplaced = np.flatnonzero(currencies != currency)
    if len(misplaced):
        wrong = int(misplaced[0])
        raise CurrencyMismatchError(
            f"account {keys[wrong]} holds {currencies[wrong]}, not {currency}", key=keys[wrong], currency=currency
        )
    balances, helds = columns[1], columns[2]
    after = balances + deltas
    held_after = helds - released if released is not None else helds
    # A player may spend only what no hold has promised (balance - held), never below zero.
    payer = kinds != AccountKind.CASHIER.value
    short = np.flatnonzero((after < held_after) & payer)
    if len(short):
        i = int(short[0])
        available = int(balances[i] - helds[i])
        raise InsufficientFundsError(
            f"{'the wallet' if kinds[i] == AccountKind.PLAYER else keys[i]} holds "
            f"{format_minor(available, currencies[i])}, "
            f"needs {format_minor(-int(deltas[i]), currencies[i])}",
            key=keys[i],
            balance_minor=available,
            shortfall_minor=int(held_after[i] - after[i]),
        )
    legs_after = list(zip(ids.tolist(), deltas.tolist(), after.tolist(), strict=True))
    # Seal the transfer into its currency's chain (wallet/chain.py), or leave it, with its
    # commit MAC, to the next holder of the head or the clock's ``seal_pending``.
    key = chain.ledger_key()
    created_at = timezone.now()
    memo = memo[:255]
    # Once for the commit MAC and the seal; ``ids`` are sorted and unique, so the legs are
    # in the canonical order already.
    legs_text = chain.legs_text_in_order(legs_after)
    mac = chain.commit_mac(
        key,
        currency=currency,
        reference=reference,
        kind=kind,
        memo=memo,
        created_by_id=created_by_id,
        created_at=created_at,
        legs=legs_text,
    )
    transfer = Transfer(
        reference=reference,
        kind=kind,
        currency=currency,
        memo=memo,
        created_by_id=created_by_id,
        created_at=created_at,
        commit_mac=mac,
    )
    head: LedgerHead | None = None
    if mode == "wait":
        head = _take_head(currency, wait=True)
    elif mode == "tail":
        # The head is taken after the accounts (or by _lock_read, SKIP LOCKED: never waited for).
        head = probe.head if probe is not None and probe.head_exists else _take_head(currency, wait=False)
    if head is not None and (probe is None or probe.waiting or probe.head is None):
        head, _, _ = _seal_batch(head, key)
    if head is not None:
        transfer.sequence = head.sequence + 1
        transfer.chain_hash = chain.seal(
            key,
            chain.canonical(
                currency=currency,
                sequence=transfer.sequence,
                previous_hash=head.chain_hash,
                reference=reference,
                kind=kind,
                memo=memo,
                created_by_id=created_by_id,
                created_at=created_at,
                legs=legs_text,
            ),
        )
    if connection.vendor == "postgresql":
        _write(transfer, legs_after, ids, deltas, released, head, after)
        return transfer
    transfer.save(force_insert=True)
    _write_legs(transfer.pk, legs_after)
    if head is not None:
        assert transfer.sequence is not None
        LedgerHead.objects.filter(pk=head.pk).update(sequence=transfer.sequence, chain_hash=transfer.chain_hash)
    _apply_deltas(ids, deltas, released)
    return transfer


@dataclass(frozen=True, slots=True)
class _Probe:
    """What ``_lock_read`` read: the accounts' rows (as ``_lock_accounts``), the id of a
    transfer already stored under the reference (or None), the chain head when this
    transaction took it (``SKIP LOCKED``; None when another holds it or it does not exist)
    whether the currency has a head row at all, and whether an unsealed transfer of the
    currency was visible (when not, the holder of the head has nothing to seal before its
    own transfer: one committed after this statement began waits for the next holder or the
    clock, which is how the chain treats any transfer that missed a holder)."""

    rows: _Rows
    existing_id: int | None
    head: LedgerHead | None
    head_exists: bool
    waiting: bool


def _lock_read(ids: np.ndarray, *, reference: str, currency: str, try_head: bool) -> _Probe:
    """PostgreSQL: in one statement, lock the accounts ``ids`` (sorted, unique) in
    primary-key order (``FOR NO KEY UPDATE``) and read them, look up a transfer stored under
    ``reference`` and, with ``try_head``, take ``currency``'s chain head if nobody holds it
    (``FOR UPDATE SKIP LOCKED``: never waited for, so its place among the account locks
    cannot deadlock). Every row carries the same trailing columns."""
    accounts, transfers, heads = Account._meta.db_table, Transfer._meta.db_table, LedgerHead._meta.db_table
    head_lock = (
        f"(SELECT id, sequence, chain_hash FROM {heads} WHERE currency = %(currency)s FOR UPDATE SKIP LOCKED)"
        if try_head
        else "(SELECT NULL::bigint AS id, NULL::bigint AS sequence, NULL::text AS chain_hash WHERE false)"
    )
    sql = (
        f"WITH a AS (SELECT id, balance_minor, held_minor, kind, currency, key FROM {accounts} "
        "WHERE id = ANY(%(ids)s::bigint[]) ORDER BY id FOR NO KEY UPDATE), "
        f"h AS {head_lock}, "
        f"x AS (SELECT (SELECT id FROM {transfers} WHERE reference = %(reference)s) AS existing, "
        f"EXISTS (SELECT 1 FROM {heads} WHERE currency = %(currency)s) AS head_exists, "
        f"EXISTS (SELECT 1 FROM {transfers} WHERE currency = %(currency)s AND sequence IS NULL) AS waiting) "
        "SELECT a.id, a.balance_minor, a.held_minor, a.kind, a.currency, a.key, "
        "x.existing, x.head_exists, x.waiting, h.id, h.sequence, h.chain_hash "
        "FROM a CROSS JOIN x LEFT JOIN h ON true ORDER BY a.id"
    )
    params = {"ids": int_array_literal(ids), "reference": reference, "currency": currency}
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:  # no account found (unknown ids): no head taken either
        return _Probe(_lock_accounts(ids[:0]), _existing_transfer(reference), None, True, True)
    trailing = rows[0]
    count = len(rows)
    found = np.fromiter((row[0] for row in rows), dtype=np.int64, count=count)
    balances = np.fromiter((row[1] for row in rows), dtype=np.int64, count=count)
    helds = np.fromiter((row[2] for row in rows), dtype=np.int64, count=count)
    existing, head_exists, waiting, head_id, sequence, chain_hash = trailing[6:]
    head = (
        LedgerHead(pk=head_id, currency=currency, sequence=sequence, chain_hash=chain_hash)
        if head_id is not None
        else None
    )
    return _Probe(
        (
            np.stack([found, balances, helds]),
            found,
            _texts([row[3] for row in rows]),
            _texts([row[4] for row in rows]),
            Keys.of([row[5] for row in rows]),
        ),
        existing,
        head,
        bool(head_exists),
        bool(waiting),
    )


def _existing_transfer(reference: str) -> int | None:
    """The id of the transfer stored under ``reference``, or None."""
    return Transfer.objects.filter(reference=reference).values_list("pk", flat=True).first()


INLINE_LEGS = 64
"""Up to this many legs are written by ``_write``'s statement itself; more by ``COPY``."""


def _write(
    transfer: Transfer,
    legs_after: list[tuple[int, int, int]],
    ids: np.ndarray,
    deltas: np.ndarray,
    released: np.ndarray | None,
    head: LedgerHead | None,
    after: np.ndarray,
) -> None:
    """PostgreSQL: write ``transfer`` (sealed or not), its legs (``legs_after``, and as
    arrays ``ids``, ``deltas`` and the balances ``after`` them, int64: up to
    ``INLINE_LEGS``, else by ``COPY`` after it), the balances (``deltas`` added to ``ids``,
    ``released`` taken off their holds) and, when this transaction holds it, the ``head``
    moved to the transfer's seal, in one statement; sets ``transfer.pk``. The accounts are
    locked already (``_lock_read``)."""
    _count_balance_write()
    transfers, legs, accounts = Transfer._meta.db_table, LedgerEntry._meta.db_table, Account._meta.db_table
    params: dict[str, Any] = {
        "reference": transfer.reference,
        "kind": transfer.kind,
        "currency": transfer.currency,
        "memo": transfer.memo,
        "created_by": transfer.created_by_id,
        "created_at": transfer.created_at,
        "sequence": transfer.sequence,
        "chain_hash": transfer.chain_hash,
        "commit_mac": transfer.commit_mac,
        "ids": int_array_literal(ids),
        "deltas": int_array_literal(deltas),
    }
    # Holds released (a capture) or not (an ante: no array of 100,000 zeros to send).
    if released is None:
        balances = (
            f"u AS (UPDATE {accounts} AS a SET balance_minor = a.balance_minor + v.delta "
            "FROM unnest(%(ids)s::bigint[], %(deltas)s::bigint[]) AS v(id, delta) WHERE a.id = v.id)"
        )
    else:
        params["released"] = int_array_literal(released)
        balances = (
            f"u AS (UPDATE {accounts} AS a SET balance_minor = a.balance_minor + v.delta, "
            "held_minor = a.held_minor - v.released FROM unnest(%(ids)s::bigint[], %(deltas)s::bigint[], "
            "%(released)s::bigint[]) AS v(id, delta, released) WHERE a.id = v.id)"
        )
    parts = [
        f"t AS (INSERT INTO {transfers} (reference, kind, currency, memo, created_by_id, created_at, sequence, "
        "chain_hash, commit_mac) VALUES (%(reference)s, %(kind)s, %(currency)s, %(memo)s, %(created_by)s, "
        "%(created_at)s, %(sequence)s, %(chain_hash)s, %(commit_mac)s) RETURNING id)",
        balances,
    ]
    inline = len(legs_after) <= INLINE_LEGS
    if inline:
        params["after"] = int_array_literal([leg[2] for leg in legs_after])
        parts.append(
            f"l AS (INSERT INTO {legs} (transfer_id, account_id, delta_minor, balance_after_minor) "
            "SELECT t.id, v.account, v.delta, v.after FROM t, unnest(%(ids)s::bigint[], %(deltas)s::bigint[], "
            "%(after)s::bigint[]) AS v(account, delta, after))"
        )
    if head is not None:
        params["head"] = head.pk
        parts.append(
            f"h AS (UPDATE {LedgerHead._meta.db_table} SET sequence = %(sequence)s, chain_hash = %(chain_hash)s "
            "WHERE id = %(head)s)"
        )
    with connection.cursor() as cursor:
        cursor.execute("WITH " + ", ".join(parts) + " SELECT id FROM t", params)
        row = cursor.fetchone()
    assert row is not None
    transfer.pk = int(row[0])
    transfer._state.adding = False
    if not inline:
        _write_legs(transfer.pk, legs_after, (ids, deltas, after))


SEAL_BATCH = 2000
"""At most this many waiting transfers sealed by one holder of the head."""


def seal_pending(*, currency: str | None = None) -> int:
    """Seal the committed, unsealed transfers of ``currency`` (every currency when None),
    in id order, in a transaction of its own per currency and batch: the clock's part of
    sealing (wallet/chain.py). A currency whose head another transaction holds is skipped
    (that one seals). A transfer whose commit MAC does not match is left unsealed and
    logged (``verify_books`` reports it). Returns how many transfers were sealed."""
    sealed = 0
    key = chain.ledger_key()
    # Every currency with a transfer waiting: the cash ones and tournament chips (``T<id>``).
    waiting = Transfer.objects.filter(sequence__isnull=True).values_list("currency", flat=True).distinct()
    for code in [currency] if currency else sorted(set(waiting)):
        after = 0  # past the transfers looked at already (a forged one is never sealed)
        while Transfer.objects.filter(currency=code, sequence__isnull=True, pk__gt=after).exists():
            with transaction.atomic():
                head = _take_head(code, wait=False)
                if head is None:
                    break
                before = head.sequence
                head, after, full = _seal_batch(head, key, after=after)
                LedgerHead.objects.filter(pk=head.pk).update(sequence=head.sequence, chain_hash=head.chain_hash)
            sealed += head.sequence - before
            if not full:
                break
    return sealed


def _take_head(currency: str, *, wait: bool) -> LedgerHead | None:
    """The currency's chain head, locked until the transaction ends (created on first use);
    None when another transaction holds it and ``wait`` is false (``SKIP LOCKED``). SQLite
    has one writer at a time: the head is always free there."""
    query = LedgerHead.objects.select_for_update(skip_locked=not wait and connection.vendor == "postgresql")
    head = query.filter(currency=currency).first()
    if head is None and not LedgerHead.objects.filter(currency=currency).exists():
        try:
            with transaction.atomic():
                LedgerHead.objects.create(currency=currency)
        except IntegrityError:
            pass  # another transaction created it first
        head = query.filter(currency=currency).first()
    return head


def _seal_batch(head: LedgerHead, key: bytes, *, after: int = 0) -> tuple[LedgerHead, int, bool]:
    """Seal, after ``head`` (locked by this transaction), the unsealed transfers of its
    currency with an id above ``after`` that this transaction sees (committed ones and its
    own), in id order, up to ``SEAL_BATCH``; each one's commit MAC is checked first, and one
    that does not match is skipped (logged). Returns the head as it would be after them (not
    written: the caller writes the head once), the last id looked at, and whether the batch
    was full (more may wait)."""
    waiting = list(
        Transfer.objects.filter(currency=head.currency, sequence__isnull=True, pk__gt=after).order_by("pk")[:SEAL_BATCH]
    )
    if not waiting:
        return head, after, False
    legs = chain.legs_of([transfer.pk for transfer in waiting])
    sequence, previous = head.sequence, head.chain_hash
    sealed: list[tuple[int, int, str]] = []
    for transfer in waiting:
        if not hmac.compare_digest(chain.commit_mac_of(key, transfer, legs[transfer.pk]), transfer.commit_mac):
            logger.error("transfer %s (%s): commit MAC does not match, left unsealed", transfer.pk, transfer.reference)
            continue
        sequence += 1
        previous = chain.seal_of(key, transfer, sequence=sequence, previous_hash=previous, legs=legs[transfer.pk])
        sealed.append((transfer.pk, sequence, previous))
    if sealed:
        _write_seals(sealed)
    after_head = LedgerHead(pk=head.pk, currency=head.currency, sequence=sequence, chain_hash=previous)
    return after_head, waiting[-1].pk, len(waiting) == SEAL_BATCH


def _write_seals(sealed: list[tuple[int, int, str]]) -> None:
    """Set (id, sequence, chain_hash) on transfers not sealed yet (the one change the
    transfers' trigger lets through)."""
    table = Transfer._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            ids, sequences, hashes = zip(*sealed, strict=True)
            cursor.execute(
                f"UPDATE {table} AS t SET sequence = v.sequence, chain_hash = v.chain_hash "
                "FROM unnest(%s::bigint[], %s::bigint[], %s::text[]) AS v(id, sequence, chain_hash) "
                "WHERE t.id = v.id AND t.sequence IS NULL",
                [list(ids), list(sequences), list(hashes)],
            )
        else:
            cursor.executemany(
                f"UPDATE {table} SET sequence = %s, chain_hash = %s WHERE id = %s AND sequence IS NULL",
                [(sequence, digest, pk) for pk, sequence, digest in sealed],
            )


def _write_legs(
    transfer_id: int,
    legs_after: list[tuple[int, int, int]],
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> None:
    """Append a transfer's legs ``legs_after`` ((account id, delta, balance after), minor
    units), also given as ``arrays`` (the same three columns, int64) when the caller has
    them: COPY on PostgreSQL (the append-only triggers refuse only UPDATE and DELETE)."""
    if connection.vendor == "postgresql" and len(legs_after) > 16:
        table = LedgerEntry._meta.db_table
        # Binary COPY built by numpy: no text formatted here nor parsed by the server (the
        # ante of a hand of 100,000 writes 100,001 legs).
        if arrays is None:
            legs = np.array(legs_after, dtype=np.int64).reshape(-1, 3)
            arrays = (legs[:, 0], legs[:, 1], legs[:, 2])
        accounts, deltas, after = arrays
        stream = binary_copy_rows(
            {
                "transfer_id": ("bigint", np.full(len(accounts), transfer_id, dtype=np.int64)),
                "account_id": ("bigint", accounts),
                "delta_minor": ("bigint", deltas),
                "balance_after_minor": ("bigint", after),
            }
        )
        with (
            connection.cursor() as cursor,
            cursor.copy(
                f"COPY {table} (transfer_id, account_id, delta_minor, balance_after_minor) FROM STDIN (FORMAT binary)"
            ) as copy,
        ):
            copy.write(stream)
        return
    LedgerEntry.objects.bulk_create(
        [
            LedgerEntry(transfer_id=transfer_id, account_id=account_id, delta_minor=delta, balance_after_minor=after)
            for account_id, delta, after in legs_after
        ],
        batch_size=2000,
    )


def _apply_deltas(ids: np.ndarray, deltas: np.ndarray, released: np.ndarray | None = None) -> None:
    """Add ``deltas`` to the balances of ``ids`` and take ``released`` off their holds (rows
    already locked by the caller)."""
    _count_balance_write()
    free = np.zeros(len(ids), dtype=np.int64) if released is None else released
    if len(ids) <= 4:
        for account_id, delta, release in zip(ids.tolist(), deltas.tolist(), free.tolist(), strict=True):
            Account.objects.filter(pk=account_id).update(
                balance_minor=F("balance_minor") + delta, held_minor=F("held_minor") - release
            )
        return
    table = Account._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One statement for thousands of balances (REALTIME_ANCHORS.md §3.1: ~30x bulk_update).
            cursor.execute(
                f"UPDATE {table} AS a SET balance_minor = a.balance_minor + v.delta, "
                "held_minor = a.held_minor - v.released "
                "FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS v(id, delta, released) WHERE a.id = v.id",
                [int_array_literal(ids), int_array_literal(deltas), int_array_literal(free)],
            )
        else:
            cursor.executemany(
                f"UPDATE {table} SET balance_minor = balance_minor + %s, held_minor = held_minor - %s WHERE id = %s",
                list(zip(deltas.tolist(), free.tolist(), ids.tolist(), strict=True)),
            )


def hold_funds(
    *, user_id: int, currency: str, destination_id: int, amount_minor: int, kind: str, reference: str
) -> FundsHold:
    """Confirm a purchase against the player's wallet in ``currency`` at once, without
    writing the ledger: one conditional ``UPDATE`` locks that one account, checks that
    ``balance - held`` covers ``amount_minor`` and adds it to ``held_minor``; a FundsHold to
    ``destination_id`` records it. ``capture_holds`` moves it later, in a batch. Only the
    buyer's row is locked: purchases of different players never wait for each other, nor
    for the currency's chain head. One statement on PostgreSQL (the ``UPDATE`` and the
    ``INSERT`` in one), two elsewhere; no savepoint (a building block: the caller's
    transaction is the unit).

    Raises InvalidAmountError, InsufficientFundsError (nothing changes),
    TransferConflictError (``reference`` was already used: the caller's transaction must
    roll back).
    """
    if not isinstance(amount_minor, int) or isinstance(amount_minor, bool) or amount_minor <= 0:
        raise InvalidAmountError("the amount must be a positive number of minor units", amount=amount_minor)
    accounts, holds = Account._meta.db_table, FundsHold._meta.db_table
    created_at = timezone.now()
    hold = (
        f"UPDATE {accounts} SET held_minor = held_minor + %(amount)s "
        "WHERE kind = %(kind)s AND currency = %(currency)s AND user_id = %(user)s "
        "AND balance_minor - held_minor >= %(amount)s RETURNING id"
    )
    values: dict[str, Any] = {
        "amount": amount_minor,
        "kind": AccountKind.PLAYER.value,
        "currency": currency,
        "user": user_id,
        "reference": reference,
        "hold_kind": kind,
        "destination": destination_id,
        "created_at": created_at,
    }
    row: tuple[Any, ...] | None
    _count_balance_write()
    try:
        # Marks the caller's transaction for rollback on a repeated reference (no savepoint).
        with transaction.atomic(savepoint=False), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(
                    f"WITH hold AS ({hold}) INSERT INTO {holds} "
                    "(reference, kind, account_id, destination_id, amount_minor, created_at) "
                    "SELECT %(reference)s, %(hold_kind)s, id, %(destination)s, %(amount)s, %(created_at)s FROM hold "
                    "RETURNING id, account_id",
                    values,
                )
                row = cursor.fetchone()
            else:
                cursor.execute(hold, values)
                held = cursor.fetchone()
                row = None
                if held is not None:
                    created = FundsHold.objects.create(
                        reference=reference,
                        kind=kind,
                        account_id=int(held[0]),
                        destination_id=destination_id,
                        amount_minor=amount_minor,
                        created_at=created_at,
                    )
                    row = (created.pk, created.account_id)
    except IntegrityError as error:
        raise TransferConflictError(f"reference {reference!r} was already used", reference=reference) from error
    if row is None:
        account = ensure_player_account(user_id=user_id, currency=currency)
        available = account.balance_minor - account.held_minor
        raise InsufficientFundsError(
            f"{account.key} holds {format_minor(available, currency)}, needs {format_minor(amount_minor, currency)}",
            key=account.key,
            balance_minor=available,
            shortfall_minor=amount_minor - available,
        )
    return FundsHold(
        pk=int(row[0]),
        reference=reference,
        kind=kind,
        account_id=int(row[1]),
        destination_id=destination_id,
        amount_minor=amount_minor,
        created_at=created_at,
    )


@dataclass(frozen=True, slots=True)
class Capture:
    """What ``capture_holds`` moved: the transfer (None when nothing was pending) and the
    amounts captured per hold kind."""

    transfer: Transfer | None
    by_kind: dict[str, int]

    @property
    def total_minor(self) -> int:
        return sum(self.by_kind.values())


@transaction.atomic
def capture_holds(*, destination_id: int, currency: str, memo: str = "") -> Capture:
    """Move every uncaptured hold into ``destination_id`` in one sealed transfer (kind
    ``capture``, or the holds' kind when they share one; reference
    ``capture:<destination>:<last hold id>``, or the hold's own for a single hold): each buyer's balance and
    ``held_minor`` go down together, so what he may spend does not change. Concurrent
    captures of one destination cannot capture a hold twice: the holds are locked and
    re-checked (``transfer IS NULL``) before they are moved. Safe to repeat at any time."""
    holds = list(
        FundsHold.objects.select_for_update()
        .filter(destination_id=destination_id, transfer__isnull=True)
        .order_by("id")
        .values_list("id", "account_id", "amount_minor", "kind")
    )
    if not holds:
        return Capture(None, {})
    by_kind: dict[str, int] = defaultdict(int)
    for _, _, amount, kind in holds:
        by_kind[kind] += amount
    payers = np.fromiter((row[1] for row in holds), dtype=np.int64, count=len(holds))
    amounts = np.fromiter((row[2] for row in holds), dtype=np.int64, count=len(holds))
    total = int(amounts.sum())
    ids, inverse = np.unique(np.append(payers, destination_id), return_inverse=True)
    deltas = np.zeros(len(ids), dtype=np.int64)
    np.add.at(deltas, inverse, np.append(-amounts, total))
    released = np.zeros(len(ids), dtype=np.int64)
    np.add.at(released, inverse[:-1], amounts)
    # One hold (inline capture): the transfer keeps the purchase's own reference and kind.
    single = len(holds) == 1
    reference = f"capture:{destination_id}:{holds[-1][0]}"
    if single:
        reference = FundsHold.objects.values_list("reference", flat=True).get(pk=holds[0][0])
    transfer = _post(
        reference=reference,
        kind=next(iter(by_kind)) if len(by_kind) == 1 else TransferKind.CAPTURE,
        currency=currency,
        ids=ids,
        deltas=deltas,
        memo=memo,
        released=released,
    )
    FundsHold.objects.filter(pk__any_of=IntArray([row[0] for row in holds])).update(transfer=transfer)
    return Capture(transfer, dict(by_kind))


@transaction.atomic
def release_hold(*, reference: str) -> bool:
    """Give back the uncaptured hold named ``reference`` (a registration withdrawn, a
    tournament cancelled before it started): the account's ``held_minor`` goes down by the
    hold's amount and the hold is deleted; nothing is written to the ledger, since nothing
    moved. False when there is no such hold or it was already captured (then only a refund
    transfer can give the money back)."""
    hold = FundsHold.objects.select_for_update().filter(reference=reference, transfer__isnull=True).first()
    if hold is None:
        return False
    Account.objects.select_for_update(no_key=True).filter(pk=hold.account_id).values_list("pk").first()
    _count_balance_write()
    Account.objects.filter(pk=hold.account_id).update(held_minor=F("held_minor") - hold.amount_minor)
    hold.delete()
    return True


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
    while he may not play, GuestPracticeOnlyError for a guest (wallet/guests.py); nothing is
    deposited then. A repeated reference is not a new deposit and is not refused.
    """
    guests.refuse_guest(user_id=user_id)
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

    Raises TopUpRefusedError when the balance is at or above ``FUN_TOP_UP_BELOW_MINOR``,
    GuestPracticeOnlyError for a guest (wallet/guests.py).
    """
    guests.refuse_guest(user_id=user_id)
    cashier = ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    wallet = ensure_player_account(user_id=user_id, currency=Currency.FUN)
    locked = Account.objects.select_for_update(no_key=True).get(pk=wallet.pk)
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
