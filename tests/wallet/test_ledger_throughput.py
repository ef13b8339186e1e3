"""Issue 23, item 7: a raked settlement's ledger write is two statements on PostgreSQL (one
lock-and-read, one write of the transfer, its legs, the balances and the head), with no
savepoint and no wait for the chain head, in ``tail`` and ``batch`` sealing alike. These
tests check that nothing of the ledger's exactness was lost on the way: concurrent
settlements of many tables lose no cent and end in one gapless chain, and ``verify_books``
still finds an edited leg, a deleted leg and a reordered seal."""

from __future__ import annotations

import io
import threading
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection, connections, transaction
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext

from tests.conftest import postgres_only
from tests.helpers import behind_the_apps_back
from wallet import services
from wallet.chain import verify_chain
from wallet.errors import InsufficientFundsError
from wallet.models import Account, AccountKind, Currency, LedgerEntry, LedgerHead, Transfer, TransferKind
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db(transaction=True)

RAKE, CARRY, FIRST, SECOND = 100, 1, 600, 299
POT = RAKE + CARRY + FIRST + SECOND


def verify_books(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_books", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


def table_accounts(table: int, funded_minor: int, *, rakes: int = 2) -> list[int]:
    """[escrow, carry, rake, winner 1, winner 2] of ``table`` (FUN); the escrow funded from
    the cashier with ``funded_minor``. The rake account is shared by the tables of one
    shard (``rake_account_key``)."""
    escrow = services.ensure_account(key=f"escrow:t{table}", kind=AccountKind.ESCROW, currency=Currency.FUN)
    carry = services.ensure_account(key=f"carry:t{table}", kind=AccountKind.CARRY, currency=Currency.FUN)
    rake = services.ensure_account(
        key=f"rake:FUN:{table % rakes}" if table % rakes else "rake:FUN", kind=AccountKind.RAKE, currency=Currency.FUN
    )
    winners = [
        services.ensure_account(key=f"player:t{table}:{n}", kind=AccountKind.PLAYER, currency=Currency.FUN).pk
        for n in (1, 2)
    ]
    cashier = services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    services.transfer_between(
        source=cashier,
        destination=escrow,
        amount_minor=funded_minor,
        kind=TransferKind.FUN_TOP_UP,
        reference=f"fund:t{table}",
    )
    return [escrow.pk, carry.pk, rake.pk, *winners]


def settle(accounts: list[int], reference: str) -> Transfer:
    """A raked settlement as ``settle_hand`` writes it: the escrow pays rake, carry and two
    winners, in the caller's transaction."""
    with transaction.atomic():
        return services.post_transfer_arrays(
            reference=reference,
            kind=TransferKind.SETTLEMENT,
            currency=Currency.FUN,
            account_ids=np.array(accounts, dtype=np.int64),
            deltas=np.array([-POT, CARRY, RAKE, FIRST, SECOND], dtype=np.int64),
            memo=f"Settlement {reference}",
        )


@postgres_only()
@pytest.mark.parametrize("mode", ["tail", "batch"])
def test_a_raked_settlement_is_two_statements_without_a_savepoint(mode: str, settings: Any) -> None:
    settings.LEDGER_SEAL = mode
    accounts = table_accounts(1, 10 * POT)
    services.seal_pending()
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        transfer = services.post_transfer_arrays(
            reference="settle:1",
            kind=TransferKind.SETTLEMENT,
            currency=Currency.FUN,
            account_ids=np.array(accounts, dtype=np.int64),
            deltas=np.array([-POT, CARRY, RAKE, FIRST, SECOND], dtype=np.int64),
        )
    statements = [query["sql"].split(None, 1)[0].upper() for query in queries.captured_queries]
    assert statements == ["WITH", "WITH"], statements
    stored = Transfer.objects.get(pk=transfer.pk)
    if mode == "tail":  # nobody else sealing: sealed at once, the head moved in the same write
        assert stored.sequence == transfer.sequence == LedgerHead.objects.get(currency=Currency.FUN).sequence
    else:  # the clock seals it
        assert stored.sequence is None and stored.commit_mac
        assert services.seal_pending() == 1
    legs = dict(LedgerEntry.objects.filter(transfer=transfer).values_list("account_id", "delta_minor"))
    assert legs == dict(zip(accounts, [-POT, CARRY, RAKE, FIRST, SECOND], strict=True))
    assert Account.objects.get(pk=accounts[0]).balance_minor == 9 * POT
    assert verify_chain() == [] and check_books().ok


@postgres_only()
def test_a_refused_settlement_leaves_the_callers_transaction_usable(settings: Any) -> None:
    """Without a savepoint, a refusal must come before anything is written: the caller may
    catch it and go on in the same transaction, and nothing of the refused transfer stays."""
    accounts = table_accounts(1, POT - 1)
    before = dict(Account.objects.values_list("pk", "balance_minor"))
    with transaction.atomic():
        with pytest.raises(InsufficientFundsError):
            services.post_transfer_arrays(
                reference="settle:short",
                kind=TransferKind.SETTLEMENT,
                currency=Currency.FUN,
                account_ids=np.array(accounts, dtype=np.int64),
                deltas=np.array([-POT, CARRY, RAKE, FIRST, SECOND], dtype=np.int64),
            )
        assert Account.objects.filter(pk=accounts[0]).values_list("balance_minor", flat=True).get() == POT - 1
    assert dict(Account.objects.values_list("pk", "balance_minor")) == before
    assert not Transfer.objects.filter(reference="settle:short").exists()
    assert verify_chain() == [] and check_books().ok


@postgres_only()
@pytest.mark.parametrize("mode", ["tail", "batch"])
def test_concurrent_settlements_of_many_tables_lose_no_cent(mode: str, settings: Any) -> None:
    """Eight tables settle 20 hands each at once, in threads with connections of their own,
    sharing two rake accounts (and, for the last two tables, one escrow between them, so
    that two settlements lock the same row), while a ninth thread seals as the clock does.
    Every cent is where the legs say, the rake is exactly 100 per hand, and the chain is
    gapless and verifies."""
    settings.LEDGER_SEAL = mode
    tables, hands = 8, 20
    plan = {table: table_accounts(table, hands * POT * 2) for table in range(tables)}
    plan[tables - 1][0] = plan[tables - 2][0]  # two tables pay from one escrow
    done = threading.Event()
    errors: list[BaseException] = []

    def play(table: int) -> None:
        try:
            for hand in range(hands):
                settle(plan[table], f"settle:{mode}:{table}:{hand}")
        except BaseException as error:  # reported by the assertion below
            errors.append(error)
        finally:
            connections.close_all()

    def clock() -> None:
        try:
            while not done.is_set():
                services.seal_pending()
                done.wait(0.01)
        finally:
            connections.close_all()

    sealer = threading.Thread(target=clock)
    sealer.start()
    players = [threading.Thread(target=play, args=(table,)) for table in range(tables)]
    for thread in players:
        thread.start()
    for thread in players:
        thread.join(120)
    done.set()
    sealer.join(30)
    assert not errors, errors[:3]
    assert not any(thread.is_alive() for thread in players)
    services.seal_pending()

    settled = Transfer.objects.filter(kind=TransferKind.SETTLEMENT)
    assert settled.count() == tables * hands
    # Every balance is the sum of its legs, the balances sum to zero, the rake is exact.
    legs = dict(
        LedgerEntry.objects.values("account_id").annotate(total=Sum("delta_minor")).values_list("account_id", "total")
    )
    balances = dict(Account.objects.values_list("pk", "balance_minor"))
    assert balances == {pk: legs.get(pk, 0) for pk in balances}
    assert sum(balances.values()) == 0
    rakes = Account.objects.filter(kind=AccountKind.RAKE, currency=Currency.FUN)
    assert rakes.count() == 2
    assert rakes.aggregate(total=Sum("balance_minor"))["total"] == RAKE * tables * hands
    # The shared escrow: funded once with 2 x hands x POT, paid hands x POT for each table.
    assert balances[plan[tables - 1][0]] == 0
    # One chain: sequences 1..N without a gap, head at its end, and the books verify.
    sequences = sorted(
        s or 0 for s in Transfer.objects.filter(currency=Currency.FUN).values_list("sequence", flat=True)
    )
    assert sequences == list(range(1, len(sequences) + 1))
    assert LedgerHead.objects.get(currency=Currency.FUN).sequence == len(sequences)
    assert verify_chain() == [] and check_books().ok
    code, out = verify_books()
    assert code == 0, out


@pytest.fixture
def settled(settings: Any) -> list[Transfer]:
    """Six raked settlements of three tables, sealed (the first three at once, the last
    three in the clock's batch)."""
    plan = {table: table_accounts(table, 10 * POT) for table in range(3)}
    moves = [settle(plan[n % 3], f"settle:sealed:{n}") for n in range(3)]
    settings.LEDGER_SEAL = "batch"
    moves += [settle(plan[n % 3], f"settle:batch:{n}") for n in range(3)]
    assert services.seal_pending() == 3
    assert verify_chain() == []
    return [Transfer.objects.get(pk=transfer.pk) for transfer in moves]


@pytest.mark.parametrize("which", [1, 4])
def test_an_edited_leg_of_a_settlement_is_found(settled: list[Transfer], which: int) -> None:
    target = settled[which]
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer=target, delta_minor=RAKE).update(delta_minor=RAKE - 1)
        LedgerEntry.objects.filter(transfer=target, delta_minor=FIRST).update(delta_minor=FIRST + 1)
    problems = verify_chain()
    assert [(p.transfer_id, p.sequence) for p in problems] == [(target.pk, target.sequence)], problems
    code, out = verify_books()
    assert code == 1 and f"FUN #{target.sequence}: seal does not match" in out


@pytest.mark.parametrize("which", [2, 5])
def test_a_deleted_leg_of_a_settlement_is_found(settled: list[Transfer], which: int) -> None:
    target = settled[which]
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer=target, delta_minor=CARRY).delete()
    problems = verify_chain()
    assert [(p.transfer_id, p.sequence) for p in problems] == [(target.pk, target.sequence)], problems
    code, out = verify_books()
    assert code == 1 and target.reference in out


def test_a_reordered_seal_is_found(settled: list[Transfer]) -> None:
    """Two sealed settlements swap places in the chain (sequence numbers exchanged, each
    keeping its own hash): no gap, the head unchanged, and still found at both."""
    first, second = settled[2], settled[3]
    assert first.sequence is not None and second.sequence == first.sequence + 1
    with behind_the_apps_back():
        Transfer.objects.filter(pk=first.pk).update(sequence=-1)
        Transfer.objects.filter(pk=second.pk).update(sequence=first.sequence)
        Transfer.objects.filter(pk=first.pk).update(sequence=second.sequence)
    problems = verify_chain()
    found = {p.transfer_id for p in problems}
    assert {first.pk, second.pk} <= found, problems
    assert all("seal does not match" in p.problem for p in problems), problems
    code, out = verify_books()
    assert code == 1 and first.reference in out and second.reference in out


def test_an_unsealed_settlement_edited_before_its_batch_seal_is_never_sealed(settings: Any) -> None:
    settings.LEDGER_SEAL = "batch"
    accounts = table_accounts(1, 10 * POT)
    services.seal_pending()
    genuine, forged = settle(accounts, "settle:genuine"), settle(accounts, "settle:forged")
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer=forged, delta_minor=FIRST).update(delta_minor=FIRST + 50)
    services.seal_pending()
    assert Transfer.objects.get(pk=genuine.pk).sequence is not None
    assert Transfer.objects.get(pk=forged.pk).sequence is None
    problems = verify_chain()
    assert [p.transfer_id for p in problems] == [forged.pk]
    assert "commit MAC does not match" in problems[0].problem
