"""Security audit F6: the ledger is tamper-evident. Rows edited, deleted or inserted directly
in the database, with the append-only triggers switched off as a superuser can, are found by
``verify_books`` and the back-office books check, at the exact transfer."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import behind_the_apps_back, logged_in
from wallet import services
from wallet.chain import GENESIS_HASH, verify_chain
from wallet.models import Currency, LedgerEntry, LedgerHead, Transfer
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db(transaction=True)


def verify_books(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_books", *args, stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


@pytest.fixture
def ledger(alice: User, bob: User, croupier: User) -> list[Transfer]:
    """Sign-up grants for alice and bob (FUN), then three EUR deposits and a withdrawal."""
    moves = [
        services.deposit_cash(
            user_id=alice.pk, currency="EUR", amount_minor=5000, reason="wire 1", staff_user_id=croupier.pk
        ),
        services.deposit_cash(
            user_id=bob.pk, currency="EUR", amount_minor=2500, reason="wire 2", staff_user_id=croupier.pk
        ),
        services.deposit_cash(
            user_id=alice.pk, currency="EUR", amount_minor=1000, reason="wire 3", staff_user_id=croupier.pk
        ),
        services.withdraw_cash(
            user_id=alice.pk, currency="EUR", amount_minor=700, reason="payout", staff_user_id=croupier.pk
        ),
    ]
    return moves


def test_every_transfer_is_sealed_in_order_and_the_books_verify(ledger: list[Transfer]) -> None:
    assert [t.sequence for t in ledger] == [1, 2, 3, 4]
    assert len({t.chain_hash for t in ledger}) == 4
    head = LedgerHead.objects.get(currency=Currency.EUR)
    assert (head.sequence, head.chain_hash) == (4, ledger[-1].chain_hash)
    assert LedgerHead.objects.get(currency=Currency.FUN).sequence == 2  # the grants of alice and bob
    assert verify_chain() == []
    status, out = verify_books()
    assert status == 0, out
    assert f"EUR:4:{ledger[-1].chain_hash}" in out


def test_an_edited_amount_is_found_at_its_transfer(ledger: list[Transfer]) -> None:
    target = ledger[1]
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer=target, delta_minor__gt=0).update(delta_minor=25000)
    problems = verify_chain()
    assert [(p.transfer_id, p.sequence) for p in problems] == [(target.pk, 2)]
    status, out = verify_books()
    assert status == 1
    assert f"transfer {target.pk} ({target.reference}) at EUR #2: seal does not match" in out


def test_an_edited_memo_is_found_though_every_sum_still_holds(ledger: list[Transfer]) -> None:
    target = ledger[0]
    with behind_the_apps_back():
        Transfer.objects.filter(pk=target.pk).update(memo="wire 1 (corrected)")
    assert [p.transfer_id for p in verify_chain()] == [target.pk]
    books = check_books()
    assert (books.unbalanced_transfers, books.drifted_accounts) == ([], [])  # the sums alone see nothing
    assert not books.ok


def test_a_deleted_transfer_leaves_a_gap(ledger: list[Transfer]) -> None:
    target = ledger[2]
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer=target).delete()
        Transfer.objects.filter(pk=target.pk).delete()
    problems = [str(p) for p in verify_chain()]
    assert any("EUR #3" in p and "missing #3" in p for p in problems), problems


def test_a_transfer_inserted_behind_the_apps_back_is_not_sealed(ledger: list[Transfer], alice: User) -> None:
    cashier = services.ensure_house_account(kind="cashier", currency="EUR")
    wallet = services.ensure_player_account(user_id=alice.pk, currency="EUR")
    forged = Transfer.objects.create(reference="deposit:forged", kind="deposit", currency="EUR", memo="gift")
    LedgerEntry.objects.bulk_create(
        [
            LedgerEntry(transfer=forged, account=cashier, delta_minor=-99, balance_after_minor=0),
            LedgerEntry(transfer=forged, account=wallet, delta_minor=99, balance_after_minor=0),
        ]
    )
    problems = verify_chain()
    assert [(p.transfer_id, p.problem.split(":")[0]) for p in problems] == [(forged.pk, "not sealed")]


def test_a_forged_seal_without_the_key_does_not_verify(ledger: list[Transfer], alice: User) -> None:
    """The forger knows the algorithm and the chain but not the key (it is not in the database)."""
    from wallet.chain import canonical, seal

    head = LedgerHead.objects.get(currency="EUR")
    forged = Transfer(reference="deposit:forged", kind="deposit", currency="EUR", memo="gift", sequence=5)
    cashier = services.ensure_house_account(kind="cashier", currency="EUR")
    wallet = services.ensure_player_account(user_id=alice.pk, currency="EUR")
    legs = [(cashier.pk, -99, cashier.balance_minor - 99), (wallet.pk, 99, wallet.balance_minor + 99)]
    message = canonical(
        currency="EUR",
        sequence=5,
        previous_hash=head.chain_hash,
        reference=forged.reference,
        kind="deposit",
        memo="gift",
        created_by_id=None,
        created_at=forged.created_at,
        legs=legs,
    )
    forged.chain_hash = seal(b"a guessed key", message)
    forged.save()
    LedgerEntry.objects.bulk_create(
        [LedgerEntry(transfer=forged, account_id=a, delta_minor=d, balance_after_minor=b) for a, d, b in legs]
    )
    LedgerHead.objects.filter(pk=head.pk).update(sequence=5, chain_hash=forged.chain_hash)
    assert [(p.transfer_id, p.sequence) for p in verify_chain()] == [(forged.pk, 5)]


def test_a_cut_tail_shows_against_the_head_or_a_recorded_head(ledger: list[Transfer]) -> None:
    recorded = LedgerHead.objects.get(currency="EUR")
    last = ledger[-1]
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer=last).delete()
        Transfer.objects.filter(pk=last.pk).delete()
    assert any("the head says #4 but the chain ends at #3" in str(p) for p in verify_chain())
    # The forger also rolls the head back: only a head recorded earlier reveals it.
    LedgerHead.objects.filter(pk=recorded.pk).update(sequence=3, chain_hash=ledger[2].chain_hash)
    assert verify_chain() == []
    status, out = verify_books("--expect-head", f"EUR:4:{recorded.chain_hash}")
    assert status == 1
    assert "the recorded head is no longer in the chain" in out


def test_the_back_office_books_check_names_the_tampered_transfer(ledger: list[Transfer], auditor: User) -> None:
    target = ledger[3]
    with behind_the_apps_back():
        LedgerEntry.objects.filter(transfer=target).update(balance_after_minor=0)
    page = logged_in(auditor).get("/backoffice/").content.decode()
    assert "The books do not balance" in page
    assert f"transfer {target.pk} ({target.reference}) at EUR #4" in page


def test_a_bad_expected_head_is_a_clear_error() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="CURRENCY:SEQUENCE:HASH"):
        call_command("verify_books", "--expect-head", "EUR:x:y", stdout=io.StringIO())


def test_an_empty_ledger_verifies() -> None:
    assert verify_chain() == []
    assert GENESIS_HASH == "0" * 64


def test_the_migration_seals_a_ledger_written_before_the_chain(alice: User) -> None:
    """Transfers written before the hash chain existed are sealed, in id order, by 0003."""
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    # Every app's leaf: going back to wallet 0002 also unapplies the migrations of other apps
    # that depend on a later wallet one (tables 0023, tournaments' holds), which must return.
    leaf = executor.loader.graph.leaf_nodes()
    executor.migrate([("wallet", "0002_ledger_append_only")])
    old = executor.loader.project_state([("wallet", "0002_ledger_append_only")]).apps
    account, transfer, entry = (old.get_model("wallet", name) for name in ("Account", "Transfer", "LedgerEntry"))
    cashier = account.objects.create(key="cashier:EUR", kind="cashier", currency="EUR", balance_minor=-300)
    wallet = account.objects.create(key="old:EUR", kind="player", currency="EUR", user_id=alice.pk, balance_minor=300)
    for number in (1, 2, 3):
        moved = transfer.objects.create(reference=f"deposit:old:{number}", kind="deposit", currency="EUR", memo="old")
        entry.objects.create(transfer=moved, account=cashier, delta_minor=-100, balance_after_minor=-100 * number)
        entry.objects.create(transfer=moved, account=wallet, delta_minor=100, balance_after_minor=100 * number)
    executor = MigrationExecutor(connection)
    executor.migrate(leaf)
    sealed = list(Transfer.objects.filter(currency="EUR").order_by("id").values_list("sequence", flat=True))
    assert sealed == [1, 2, 3]
    assert verify_chain(currency="EUR") == []
    # The append-only trigger is back after the migration (SQLite rebuilt the table).
    with pytest.raises(Exception, match="append-only"):
        Transfer.objects.filter(reference="deposit:old:1").update(memo="changed")


@given(
    legs=st.lists(
        st.tuples(st.integers(1, 2**62), st.integers(-(2**62), 2**62), st.integers(-(2**62), 2**62)),
        max_size=30,
    ),
    memo=st.text(max_size=20),
    created_by_id=st.none() | st.integers(1, 10**9),
)
def test_the_canonical_bytes_are_the_json_of_the_documented_body(
    legs: list[tuple[int, int, int]], memo: str, created_by_id: int | None
) -> None:
    """``canonical`` writes the legs without ``json.dumps``; the bytes must be those of the
    module docstring's body, as ``json.dumps`` gives them, or every seal would change."""
    from datetime import UTC, datetime

    from wallet.chain import CHAIN_VERSION, canonical

    created_at = datetime(2026, 11, 23, 12, 0, 0, 123456, tzinfo=UTC)
    body = [
        CHAIN_VERSION,
        "EUR",
        7,
        "ab" * 32,
        "ante:1",
        "ante",
        memo,
        created_by_id,
        "2026-11-23T12:00:00.123456+00:00",
        sorted([a, d, b] for a, d, b in legs),
    ]
    expected = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    got = canonical(
        currency="EUR",
        sequence=7,
        previous_hash="ab" * 32,
        reference="ante:1",
        kind="ante",
        memo=memo,
        created_by_id=created_by_id,
        created_at=created_at,
        legs=list(reversed(legs)),
    )
    assert got == expected


@given(
    legs=st.dictionaries(
        st.integers(1, 2**62), st.tuples(st.integers(-(2**62), 2**62), st.integers(-(2**62), 2**62)), max_size=30
    )
)
def test_the_legs_of_a_merged_transfer_give_the_canonical_text_without_sorting(
    legs: dict[int, tuple[int, int]],
) -> None:
    """A transfer's merged legs (one per account, accounts ascending: ``_post``) are in the
    canonical order already; ``legs_text_in_order`` must give the bytes ``legs_text`` gives
    from any order, or the commit MACs and seals of big transfers would change."""
    import random

    from wallet.chain import legs_text, legs_text_in_order

    merged = [(account, delta, after) for account, (delta, after) in sorted(legs.items())]
    shuffled = merged[:]
    random.Random(len(merged)).shuffle(shuffled)
    assert legs_text_in_order(merged) == legs_text(shuffled)
