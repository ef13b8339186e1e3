"""A deal locks and reads its players' wallets once (``wallet.services.lock_and_read``) and
the ante's transfer takes those rows instead of reading 100,000 accounts again. These tests
check when the rows read first may serve, and that a stale read never lets a wallet go
below what it holds (docs/platform.md, "Rows that are written 100,000 at a time")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from tests.conftest import make_player
from wallet import services
from wallet.chain import verify_chain
from wallet.errors import InsufficientFundsError, InvalidAmountError
from wallet.models import Account, AccountKind, Currency, TransferKind
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db(transaction=True)

ANTE = 100


@pytest.fixture
def locks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[int]]]:
    """The ids of every ``_lock_accounts`` call and of every ``_lock_read`` (the same lock
    and read, in one statement with the reference and the head), in order."""
    calls: list[list[int]] = []
    real, real_read = services._lock_accounts, services._lock_read

    def spy(ids: np.ndarray) -> Any:
        calls.append([int(i) for i in ids])
        return real(ids)

    def spy_read(ids: np.ndarray, **kwargs: Any) -> Any:
        calls.append([int(i) for i in ids])
        return real_read(ids, **kwargs)

    monkeypatch.setattr(services, "_lock_accounts", spy)
    monkeypatch.setattr(services, "_lock_read", spy_read)
    yield calls


@pytest.fixture
def wallets(db: Any) -> tuple[list[User], np.ndarray, Account]:
    """Three players with their sign-up chips, and an escrow opened after their wallets."""
    players = [make_player(name) for name in ("lena", "marc", "nora")]
    ids = np.array(
        [services.ensure_player_account(user_id=p.pk, currency=Currency.FUN).pk for p in players], dtype=np.int64
    )
    escrow = services.ensure_account(key="escrow:test", kind=AccountKind.ESCROW, currency=Currency.FUN)
    return players, ids, escrow


def _ante(
    ids: np.ndarray, escrow: Account, *, locked: services.LockedAccounts | None, reference: str = "ante:t"
) -> Any:
    return services.post_transfer_arrays(
        reference=reference,
        kind=TransferKind.ANTE,
        currency=Currency.FUN,
        account_ids=np.append(ids, escrow.pk),
        deltas=np.append(np.full(len(ids), -ANTE, dtype=np.int64), ANTE * len(ids)),
        locked=locked,
    )


def test_the_ante_takes_the_rows_the_deal_locked(
    wallets: tuple[list[User], np.ndarray, Account], locks: list[list[int]]
) -> None:
    _, ids, escrow = wallets
    before = dict(Account.objects.filter(pk__in=ids.tolist()).values_list("pk", "balance_minor"))
    with transaction.atomic():
        locked = services.lock_and_read(ids[::-1])
        assert locked.available(ids).tolist() == [before[i] for i in ids.tolist()]
        _ante(ids, escrow, locked=locked)
    if connection.vendor == "postgresql":
        # The players' wallets once; then only the escrow, which the deal did not lock.
        assert locks == [sorted(ids.tolist()), [escrow.pk]]
    else:
        assert locks == [sorted(ids.tolist()), sorted([*ids.tolist(), escrow.pk])]  # SQLite reads again
    after = dict(Account.objects.filter(pk__in=ids.tolist()).values_list("pk", "balance_minor"))
    assert after == {i: before[i] - ANTE for i in ids.tolist()}
    assert Account.objects.get(pk=escrow.pk).balance_minor == ANTE * len(ids)
    assert verify_chain() == [] and check_books().ok


def test_a_balance_written_since_the_lock_is_read_again(
    wallets: tuple[list[User], np.ndarray, Account], locks: list[list[int]]
) -> None:
    """The rows read first said every wallet could pay; then the same transaction took all
    of lena's chips. The ante must see that, not the first read: refused, nothing moved."""
    _, ids, escrow = wallets
    cashier = services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    lena = Account.objects.get(pk=ids[0])
    with pytest.raises(InsufficientFundsError), transaction.atomic():
        locked = services.lock_and_read(ids)
        assert (locked.available(ids) >= ANTE).all()
        services.transfer_between(
            source=lena,
            destination=cashier,
            amount_minor=lena.balance_minor,
            kind=TransferKind.WITHDRAWAL,
            reference="drain:lena",
        )
        _ante(ids, escrow, locked=locked)
    assert locks[-1] == sorted([*ids.tolist(), escrow.pk])  # everything locked and read again
    assert Account.objects.get(pk=ids[0]).balance_minor == lena.balance_minor  # rolled back
    assert check_books().ok


def test_rows_locked_by_an_earlier_transaction_are_read_again(
    wallets: tuple[list[User], np.ndarray, Account], locks: list[list[int]]
) -> None:
    _, ids, escrow = wallets
    with transaction.atomic():
        locked = services.lock_and_read(ids)
    with transaction.atomic():  # the first transaction's locks are gone
        _ante(ids, escrow, locked=locked)
    assert locks == [sorted(ids.tolist()), sorted([*ids.tolist(), escrow.pk])]


def test_an_account_below_the_locked_ones_is_not_locked_after_them(
    wallets: tuple[list[User], np.ndarray, Account], locks: list[list[int]]
) -> None:
    """Locking an account of a lower id after the others would break the primary-key order
    every transaction locks in (a deadlock risk): everything is read again instead."""
    _, ids, escrow = wallets
    order = np.sort(ids)
    with transaction.atomic():
        locked = services.lock_and_read(order[1:])
        services.post_transfer_arrays(
            reference="ante:low",
            kind=TransferKind.ANTE,
            currency=Currency.FUN,
            account_ids=np.array([order[0], order[1], escrow.pk]),
            deltas=np.array([-ANTE, -ANTE, 2 * ANTE]),
            locked=locked,
        )
    assert locks[-1] == [int(order[0]), int(order[1]), escrow.pk]


def test_available_refuses_an_account_it_did_not_lock(wallets: tuple[list[User], np.ndarray, Account]) -> None:
    _, ids, escrow = wallets
    with transaction.atomic():
        locked = services.lock_and_read(ids)
        with pytest.raises(InvalidAmountError):
            locked.available(np.array([escrow.pk]))
        assert locked.available(np.array([], dtype=np.int64)).tolist() == []


def test_rows_locked_inside_a_savepoint_rolled_back_are_read_again(
    wallets: tuple[list[User], np.ndarray, Account], locks: list[list[int]]
) -> None:
    """PostgreSQL releases the row locks a rolled-back savepoint took, in a transaction that
    goes on: those rows are no longer the transaction's to reuse."""
    _, ids, escrow = wallets
    locked = None
    with transaction.atomic():
        try:
            with transaction.atomic():
                locked = services.lock_and_read(ids)
                raise RuntimeError("undo the savepoint")
        except RuntimeError:
            pass
        _ante(ids, escrow, locked=locked)
    assert locks[-1] == sorted([*ids.tolist(), escrow.pk])


def test_a_deal_reads_its_players_wallets_once(
    wallets: tuple[list[User], np.ndarray, Account],
    locks: list[list[int]],
    now: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The clock's deal (tables/widerpoker/services/deal.py): the wallets found, locked and read by
    one statement to see who can pay (``lock_and_read_players``) are the rows the ante's
    transfer takes, on PostgreSQL; the ledger and books still hold."""
    from tests.helpers import create_fun_table, deal_hand

    real = services.lock_and_read_players

    def spy(*, user_ids: list[int], currency: str, lock: bool = True) -> Any:
        accounts, locked = real(user_ids=user_ids, currency=currency, lock=lock)
        if connection.vendor == "postgresql":  # elsewhere it locks through _lock_accounts
            locks.append([int(i) for i in locked.ids])
        return accounts, locked

    monkeypatch.setattr(services, "lock_and_read_players", spy)
    players, ids, _ = wallets
    hand = deal_hand(create_fun_table(), players, now)
    wallet_locks = [call for call in locks if set(ids.tolist()) <= set(call)]
    assert len(wallet_locks) == (1 if connection.vendor == "postgresql" else 2)
    assert hand.entry_count == len(players)
    assert verify_chain() == [] and check_books().ok


@pytest.mark.parametrize("lock", [True, False])
def test_the_players_wallets_read_are_those_in_the_database(
    wallets: tuple[list[User], np.ndarray, Account], lock: bool
) -> None:
    """``lock_and_read_players`` (four integer columns read as binary aggregates on
    PostgreSQL) gives each player his own wallet, sorted by id, with its balance, hold, kind,
    currency and key as stored; a player without a wallet in the currency gets one opened."""
    players, ids, _ = wallets
    newcomer = make_player("otto")
    Account.objects.filter(pk=int(ids[1])).update(held_minor=30, balance_minor=500)
    user_ids = [newcomer.pk, *(p.pk for p in reversed(players))]
    with transaction.atomic():
        accounts, locked = services.lock_and_read_players(user_ids=user_ids, currency=Currency.FUN, lock=lock)
    stored = {
        a.user_id: a
        for a in Account.objects.filter(kind=AccountKind.PLAYER, currency=Currency.FUN, user_id__in=user_ids)
    }
    assert accounts == {user_id: stored[user_id].pk for user_id in user_ids}
    assert locked.ids.tolist() == sorted(a.pk for a in stored.values())
    rows = [Account.objects.get(pk=pk) for pk in locked.ids.tolist()]
    assert locked.balances.tolist() == [a.balance_minor for a in rows]
    assert locked.helds.tolist() == [a.held_minor for a in rows]
    assert [locked.keys[i] for i in range(len(locked.keys))] == [a.key for a in rows]
    assert locked.currencies.tolist() == [a.currency for a in rows] and locked.kinds.tolist() == [a.kind for a in rows]
    with pytest.raises(IndexError):
        locked.keys[len(rows)]
    assert locked.available(np.array([stored[players[1].pk].pk])).tolist() == [470]
    assert (locked.stamp is not None) == (lock and connection.vendor == "postgresql")


def test_a_transfer_of_many_legs_stores_each_leg_with_its_balance_after(db: Any) -> None:
    """A transfer of more legs than are written inline (``INLINE_LEGS``: a binary ``COPY`` on
    PostgreSQL) stores every leg, its account, delta and balance after, and seals like any
    other: the chain and the books hold."""
    cashier = services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    count = services.INLINE_LEGS + 36
    escrows = [
        services.ensure_account(key=f"escrow:many:{n}", kind=AccountKind.ESCROW, currency=Currency.FUN)
        for n in range(count)
    ]
    ids = np.array([a.pk for a in escrows], dtype=np.int64)
    amounts = np.arange(1, count + 1, dtype=np.int64) * 7
    funding = services.post_transfer_arrays(
        reference="fund:many",
        kind=TransferKind.DEPOSIT,
        currency=Currency.FUN,
        account_ids=np.append(ids, cashier.pk),
        deltas=np.append(amounts, -int(amounts.sum())),
    )
    legs = {leg.account_id: (leg.delta_minor, leg.balance_after_minor) for leg in funding.entries.all()}
    assert len(legs) == count + 1
    assert all(legs[int(i)] == (int(a), int(a)) for i, a in zip(ids, amounts, strict=True))
    assert legs[cashier.pk][0] == -int(amounts.sum())
    assert [a.balance_minor for a in Account.objects.filter(pk__in=ids.tolist()).order_by("pk")] == amounts.tolist()
    assert verify_chain() == [] and check_books().ok


def test_an_ante_refused_on_the_rows_read_names_the_short_wallet(
    wallets: tuple[list[User], np.ndarray, Account],
) -> None:
    """The ante takes the rows ``lock_and_read_players`` locked (their keys made only when
    one is read): a wallet that cannot pay is refused by its key, and nothing moves."""
    players, ids, escrow = wallets
    nora = Account.objects.get(pk=int(ids[2]))
    services.transfer_between(
        source=nora,
        destination=services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN),
        amount_minor=nora.balance_minor - (ANTE - 1),
        kind=TransferKind.WITHDRAWAL,
        reference="drain:nora",
    )
    with pytest.raises(InsufficientFundsError) as refused, transaction.atomic():
        _, locked = services.lock_and_read_players(user_ids=[p.pk for p in players], currency=Currency.FUN)
        _ante(ids, escrow, locked=locked)
    assert refused.value.extra["key"] == services.player_account_key(players[2].pk, Currency.FUN)
    assert refused.value.extra["shortfall_minor"] == 1
    assert Account.objects.get(pk=int(ids[2])).balance_minor == ANTE - 1 and check_books().ok
