"""Issue 23, item 7: the ledger's chain head does not serialise the house. Raked hands of
many tables settle side by side, none waiting for the currency's chain head; their
transfers commit unsealed and are sealed afterwards, in one gapless chain that
``verify_books`` accepts; a sealed transfer changed or deleted, an unsealed one changed
before its seal, and sealing that lags are all reported."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from functools import partial
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import IntegrityError, connection, connections, transaction
from django.db.models import Sum
from django.test import Client

from backoffice import operations
from tables.models import Hand, HandStatus, Table
from tests.conftest import make_player, postgres_only
from tests.helpers import behind_the_apps_back, create_fun_table, deal_hand, settle
from wallet import services
from wallet.chain import oldest_unsealed_age, verify_chain
from wallet.models import Account, AccountKind, Currency, LedgerEntry, LedgerHead, Transfer
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db(transaction=True)

LOOPBACK: dict[str, Any] = {"REMOTE_ADDR": "127.0.0.1"}


def verify_books(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_books", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


@contextmanager
def head_held(currency: str = Currency.FUN) -> Iterator[None]:
    """Another connection holds ``currency``'s chain head (``SELECT ... FOR UPDATE``), as a
    long transaction sealing would, until the block ends."""
    services.seal_pending()  # the head row exists
    LedgerHead.objects.get_or_create(currency=currency)
    taken, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                list(LedgerHead.objects.select_for_update().filter(currency=currency))
                taken.set()
                release.wait(60)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    assert taken.wait(10)
    try:
        yield
    finally:
        release.set()
        holder.join(10)


def in_threads(work: list[Callable[[], Any]], timeout: float) -> tuple[list[Any], list[threading.Thread]]:
    """Run each callable in a thread of its own (its own connection); wait up to ``timeout``
    seconds in all. Returns the results (an exception is a result) and the threads."""
    results: list[Any] = [None] * len(work)

    def run(i: int) -> None:
        try:
            results[i] = work[i]()
        except Exception as error:  # reported by the assertions
            results[i] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(work))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    return results, threads


def deposit(user: User, staff: User, amount_minor: int = 1000) -> Transfer:
    """A cash deposit (EUR) by ``staff`` into ``user``'s wallet, through the cashier's service."""
    return services.deposit_cash(
        user_id=user.pk, currency=Currency.EUR, amount_minor=amount_minor, reason="wire", staff_user_id=staff.pk
    )


def fun_chain() -> list[tuple[int | None, str]]:
    return list(Transfer.objects.filter(currency=Currency.FUN).order_by("pk").values_list("sequence", "reference"))


def dealt_tables(count: int, now: datetime) -> list[Table]:
    tables = []
    for n in range(count):
        table = create_fun_table(name=f"Rail {n}")
        deal_hand(table, [make_player(f"t{n}a"), make_player(f"t{n}b"), make_player(f"t{n}c")], now)
        tables.append(table)
    return tables


@postgres_only()
def test_raked_hands_of_many_tables_settle_while_the_chain_head_is_held(now: datetime, settings: Any) -> None:
    settings.RAKE_ACCOUNTS = 4
    tables = dealt_tables(6, now)
    with head_held():
        results, threads = in_threads([partial(settle, table) for table in tables], timeout=60)
        # Every settlement committed while another transaction still holds the head: none waited for it.
        assert not any(thread.is_alive() for thread in threads)
        assert all(isinstance(hand, Hand) and hand.status == HandStatus.SETTLED for hand in results), results
        settled = {f"settle:{hand.pk}" for hand in results}
        unsealed = set(Transfer.objects.filter(sequence__isnull=True).values_list("reference", flat=True))
        assert settled <= unsealed
        assert verify_chain() == []  # younger than the seal interval, with a valid commit MAC
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
            )
            assert cursor.fetchone() == (0,)
    assert services.seal_pending() >= len(tables)
    chain = fun_chain()
    assert sorted(sequence for sequence, _ in chain if sequence) == list(range(1, len(chain) + 1))
    assert all(sequence is not None for sequence, _ in chain)
    assert verify_chain() == []
    code, out = verify_books()
    assert code == 0, out
    # The rake of the six tables went to four rake accounts, and adds up to the hands' rake.
    rakes = Account.objects.filter(kind=AccountKind.RAKE, currency=Currency.FUN)
    assert sorted(rakes.values_list("key", flat=True)) == ["rake:FUN"] + [f"rake:FUN:{n}" for n in (1, 2, 3)]
    hands_rake = Hand.objects.aggregate(total=Sum("rake_minor"))["total"]
    assert hands_rake > 0
    assert rakes.aggregate(total=Sum("balance_minor"))["total"] == hands_rake
    assert check_books().ok


@postgres_only()
def test_waiting_for_the_head_as_before_blocks_a_settlement(now: datetime, settings: Any) -> None:
    """The same door under ``POKER_LEDGER_SEAL=wait`` (main's behaviour): the settlement
    waits for the head, which is what the default no longer does."""
    settings.LEDGER_SEAL = "wait"
    (table,) = dealt_tables(1, now)
    with head_held():
        results, threads = in_threads([lambda: settle(table)], timeout=2)
        assert threads[0].is_alive()  # still waiting for the head
    threads[0].join(30)
    assert isinstance(results[0], Hand) and results[0].status == HandStatus.SETTLED
    assert Transfer.objects.filter(sequence__isnull=True).count() == 0
    assert verify_chain() == []


def test_with_nobody_sealing_a_transfer_is_sealed_at_once(alice: User, croupier: User) -> None:
    before = LedgerHead.objects.filter(currency=Currency.EUR).values_list("sequence", flat=True).first() or 0
    transfer = deposit(alice, croupier)
    transfer.refresh_from_db()
    assert transfer.sequence == before + 1
    assert len(transfer.chain_hash) == 64 and len(transfer.commit_mac) == 64
    assert oldest_unsealed_age() == 0.0


@postgres_only()
def test_a_sealed_transfer_changed_or_deleted_after_a_deferred_seal_is_found(
    alice: User, bob: User, croupier: User
) -> None:
    with head_held(Currency.EUR):
        moves = [deposit(user, croupier) for user in (alice, bob, alice)]
    assert all(Transfer.objects.get(pk=t.pk).sequence is None for t in moves)
    services.seal_pending()
    assert verify_chain() == []
    changed = Transfer.objects.get(pk=moves[1].pk)
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer_id=changed.pk, delta_minor__gt=0).update(delta_minor=1)
    problems = verify_chain()
    assert [(p.transfer_id, p.problem.split(":")[0]) for p in problems] == [(changed.pk, "seal does not match")]
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer_id=moves[1].pk).delete()
        Transfer.objects.filter(pk=moves[1].pk).delete()
    problems = verify_chain()
    assert any(p.problem.startswith(f"missing #{changed.sequence}") for p in problems), problems
    code, out = verify_books()
    assert code == 1 and f"missing #{changed.sequence}" in out


@postgres_only()
def test_an_unsealed_transfer_changed_before_its_seal_is_never_sealed(alice: User, bob: User, croupier: User) -> None:
    with head_held(Currency.EUR):
        first = deposit(alice, croupier)
        forged = deposit(bob, croupier)
        with behind_the_apps_back():
            Transfer.objects.filter(pk=forged.pk).update(memo="a gift")
    services.seal_pending()
    assert Transfer.objects.get(pk=first.pk).sequence is not None
    assert Transfer.objects.get(pk=forged.pk).sequence is None
    problems = verify_chain()
    assert [(p.transfer_id, p.problem) for p in problems] == [
        (
            forged.pk,
            "not sealed: its commit MAC does not match, written or changed behind the application's back",
        )
    ]
    # What sealing may change, and only once: the application's own seal.
    with pytest.raises(IntegrityError), transaction.atomic():
        Transfer.objects.filter(pk=first.pk).update(sequence=999)
    with pytest.raises(IntegrityError), transaction.atomic():
        Transfer.objects.filter(pk=forged.pk).update(memo="again")


@postgres_only()
def test_sealing_that_lags_is_reported_by_the_books_readiness_and_metrics(
    alice: User, croupier: User, settings: Any
) -> None:
    settings.LEDGER_SEAL_LAG_SECONDS = 0
    with head_held(Currency.EUR):
        late = deposit(alice, croupier)
    operations.clear_caches()
    problems = verify_chain()
    assert [(p.transfer_id, p.problem.split(",")[-1].strip()) for p in problems] == [(late.pk, "sealing lags")]
    code, out = verify_books()
    assert code == 1 and "sealing lags" in out
    detail = Client().get("/readyz", **LOOPBACK).json()
    assert detail["status"] == "degraded"
    assert detail["checks"]["ledger"]["state"] == "warn"
    metrics = Client().get("/metrics", **LOOPBACK).content.decode()
    line = next(row for row in metrics.splitlines() if row.startswith("widerpoker_ledger_unsealed_age_seconds "))
    assert float(line.split()[1]) > 0
    out_seal = io.StringIO()
    call_command("seal_ledger", stdout=out_seal)
    assert out_seal.getvalue().startswith("Sealed 1 transfer(s)")
    operations.clear_caches()
    assert Client().get("/readyz", **LOOPBACK).json()["checks"]["ledger"]["state"] == "ok"
    assert verify_books()[0] == 0


@postgres_only()
def test_forged_rows_waiting_ahead_do_not_stop_the_genuine_ones_being_sealed(
    alice: User, croupier: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(services, "SEAL_BATCH", 2)
    forged = [
        Transfer.objects.create(reference=f"deposit:forged:{n}", kind="deposit", currency=Currency.EUR)
        for n in range(5)
    ]
    with head_held(Currency.EUR):
        genuine = deposit(alice, croupier)
    assert services.seal_pending(currency=Currency.EUR) == 1
    assert Transfer.objects.get(pk=genuine.pk).sequence is not None
    problems = verify_chain(currency=Currency.EUR)
    assert sorted(p.transfer_id or 0 for p in problems) == [t.pk for t in forged]
