"""Wallet services: balanced transfers, idempotency, refusals that change nothing."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction

from tests.conftest import make_player, postgres_only
from wallet import services
from wallet.errors import (
    CurrencyMismatchError,
    InsufficientFundsError,
    TopUpRefusedError,
    TransferConflictError,
    UnbalancedTransferError,
)
from wallet.models import Account, AccountKind, Currency, LedgerEntry, Transfer, TransferKind
from wallet.selectors import check_books, get_balance_minor, list_account_entries

pytestmark = pytest.mark.django_db


def test_signup_grant_credits_fun_chips_once(alice: User) -> None:
    services.grant_signup_fun_chips(user_id=alice.pk)  # a repeated grant is the same transfer
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == settings.FUN_SIGNUP_GRANT_MINOR
    assert Transfer.objects.filter(kind=TransferKind.FUN_GRANT).count() == 1
    assert check_books().ok


def test_staff_deposit_moves_money_from_the_cashier(alice: User, croupier: User) -> None:
    services.deposit_cash(
        user_id=alice.pk,
        currency=Currency.EUR,
        amount_minor=2_500,
        reason="bank transfer 77",
        staff_user_id=croupier.pk,
    )
    cashier = Account.objects.get(key="cashier:EUR")
    assert get_balance_minor(user_id=alice.pk, currency=Currency.EUR) == 2_500
    assert cashier.balance_minor == -2_500
    entry = list_account_entries(user_id=alice.pk, currency=Currency.EUR).get()
    assert entry.transfer.memo == "bank transfer 77"
    assert entry.transfer.created_by_id == croupier.pk
    assert check_books().ok


def test_withdrawal_beyond_the_balance_is_refused_and_changes_nothing(alice: User, croupier: User) -> None:
    services.deposit_cash(
        user_id=alice.pk,
        currency=Currency.EUR,
        amount_minor=1_000,
        reason="r",
        staff_user_id=croupier.pk,
    )
    entries_before = LedgerEntry.objects.count()
    with pytest.raises(InsufficientFundsError) as caught:
        services.withdraw_cash(
            user_id=alice.pk,
            currency=Currency.EUR,
            amount_minor=1_001,
            reason="r",
            staff_user_id=croupier.pk,
        )
    assert caught.value.code == "insufficient_funds"
    assert caught.value.extra["shortfall_minor"] == 1
    assert get_balance_minor(user_id=alice.pk, currency=Currency.EUR) == 1_000
    assert LedgerEntry.objects.count() == entries_before


def test_fun_chips_can_never_be_withdrawn_as_cash(alice: User, croupier: User) -> None:
    with pytest.raises(CurrencyMismatchError):
        services.withdraw_cash(
            user_id=alice.pk,
            currency=Currency.FUN,
            amount_minor=1,
            reason="r",
            staff_user_id=croupier.pk,
        )


def test_transfer_legs_must_sum_to_zero(alice: User) -> None:
    wallet = services.ensure_player_account(user_id=alice.pk, currency=Currency.FUN)
    rake = services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.FUN)
    with pytest.raises(UnbalancedTransferError):
        services.post_transfer(
            reference="x",
            kind=TransferKind.ANTE,
            currency=Currency.FUN,
            legs=[services.Leg(wallet.pk, -10), services.Leg(rake.pk, 9)],
        )
    assert not Transfer.objects.filter(reference="x").exists()


def test_transfer_is_idempotent_on_reference(alice: User) -> None:
    wallet = services.ensure_player_account(user_id=alice.pk, currency=Currency.FUN)
    rake = services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.FUN)
    first = services.transfer_between(
        source=wallet,
        destination=rake,
        amount_minor=100,
        kind=TransferKind.ANTE,
        reference="ante:1",
    )
    again = services.transfer_between(
        source=wallet,
        destination=rake,
        amount_minor=100,
        kind=TransferKind.ANTE,
        reference="ante:1",
    )
    assert again.pk == first.pk
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == settings.FUN_SIGNUP_GRANT_MINOR - 100
    with pytest.raises(TransferConflictError):
        services.transfer_between(
            source=wallet,
            destination=rake,
            amount_minor=50,
            kind=TransferKind.ANTE,
            reference="ante:1",
        )


def test_currencies_never_mix_in_one_transfer(alice: User) -> None:
    fun = services.ensure_player_account(user_id=alice.pk, currency=Currency.FUN)
    eur_rake = services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.EUR)
    with pytest.raises(CurrencyMismatchError):
        services.transfer_between(
            source=fun,
            destination=eur_rake,
            amount_minor=1,
            kind=TransferKind.ANTE,
            reference="mix",
        )


def test_top_up_only_when_low(alice: User) -> None:
    with pytest.raises(TopUpRefusedError):
        services.top_up_fun_chips(user_id=alice.pk)
    wallet = services.ensure_player_account(user_id=alice.pk, currency=Currency.FUN)
    rake = services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.FUN)
    services.transfer_between(
        source=wallet,
        destination=rake,
        amount_minor=settings.FUN_SIGNUP_GRANT_MINOR - 5,
        kind=TransferKind.ANTE,
        reference="spend",
    )
    services.top_up_fun_chips(user_id=alice.pk)
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == settings.FUN_TOP_UP_TO_MINOR
    assert check_books().ok


def test_database_refuses_a_negative_player_balance(alice: User) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Account.objects.filter(user=alice).update(balance_minor=-1)


def test_ledger_entries_cannot_be_edited_or_deleted(alice: User) -> None:
    entry = LedgerEntry.objects.filter(account__user=alice).first()
    assert entry is not None
    table = LedgerEntry._meta.db_table
    statements = [f"UPDATE {table} SET delta_minor = 0 WHERE id = %s"]
    if settings.USING_POSTGRES:  # SQLite keeps DELETE for flushing development databases
        statements.append(f"DELETE FROM {table} WHERE id = %s")
    for sql in statements:
        with (
            pytest.raises(Exception, match="append-only"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [entry.pk])
    assert LedgerEntry.objects.get(pk=entry.pk).delta_minor == settings.FUN_SIGNUP_GRANT_MINOR


def test_large_transfer_updates_every_balance(db: Any) -> None:
    players = [make_player(f"p{i}") for i in range(30)]
    pot = services.ensure_account(key="escrow:test", kind=AccountKind.ESCROW, currency=Currency.FUN)
    legs = [
        services.Leg(services.ensure_player_account(user_id=p.pk, currency=Currency.FUN).pk, -(i + 1))
        for i, p in enumerate(players)
    ]
    legs.append(services.Leg(pot.pk, sum(i + 1 for i in range(30))))
    services.post_transfer(reference="bulk", kind=TransferKind.ANTE, currency=Currency.FUN, legs=legs)
    for i, p in enumerate(players):
        assert get_balance_minor(user_id=p.pk, currency=Currency.FUN) == settings.FUN_SIGNUP_GRANT_MINOR - (i + 1)
    assert Account.objects.get(pk=pot.pk).balance_minor == 465
    assert check_books().ok


@postgres_only()
@pytest.mark.django_db(transaction=True)
def test_concurrent_purchases_never_overdraw(db: Any) -> None:
    """50 threads race to spend 100 each from a wallet that covers exactly 20 of them."""
    user = User.objects.create_user(username="racer", password="x")
    croupier = User.objects.create_user(username="staff", password="x", is_staff=True)
    services.deposit_cash(
        user_id=user.pk,
        currency=Currency.EUR,
        amount_minor=2_000,
        reason="r",
        staff_user_id=croupier.pk,
    )
    wallet = services.ensure_player_account(user_id=user.pk, currency=Currency.EUR)
    rake = services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.EUR)
    results: list[str] = []
    barrier = threading.Barrier(50)

    def spend(i: int) -> None:
        barrier.wait()
        try:
            with transaction.atomic(durable=True):
                services.transfer_between(
                    source=wallet,
                    destination=rake,
                    amount_minor=100,
                    kind=TransferKind.DRAW,
                    reference=f"race:{i}",
                )
            results.append("ok")
        except InsufficientFundsError:
            results.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=spend, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count("ok") == 20
    assert results.count("refused") == 30
    assert get_balance_minor(user_id=user.pk, currency=Currency.EUR) == 0
    assert check_books().ok
