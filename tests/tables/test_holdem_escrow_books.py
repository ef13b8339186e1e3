"""The Hold'em chips are in the books check (security audit 2026-11-26, M4): a seat's
``stack_minor`` is money the table's escrow holds, so ``verify_books`` and the back-office
books check compare every Hold'em table's escrow with its seats' stacks (``tables.holdem.books``),
between hands and while one runs, practice tables included. The audit's tamper was
``UPDATE tables_seat SET stack_minor = stack_minor + 100``: "Books intact"."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from tables.holdem.practice.services import start_practice_game
from tables.holdem.practice.setup import PracticeSetup
from tables.holdem.services import take_seat
from tables.models import HoldemHand, HoldemHandStatus, Seat, Table
from tests.helpers import logged_in
from tests.tables.holdem_helpers import assert_books, holdem_table, play_hand_out, run_until, tick
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db(transaction=True)


def verify_books() -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify_books", stdout=out)
    except SystemExit as exit_:
        return int(exit_.code or 0), out.getvalue()
    return 0, out.getvalue()


def add_chips_behind_the_books(table: Table, amount: int) -> None:
    """The audit's tamper: chips added to one seat in the database, no money moved."""
    seat = Seat.objects.filter(table=table, stack_minor__gt=0).order_by("pk").first()
    assert seat is not None
    with connection.cursor() as cursor:
        cursor.execute("UPDATE tables_seat SET stack_minor = stack_minor + %s WHERE id = %s", [amount, seat.pk])


@pytest.fixture
def seated(alice: User, bob: User) -> Table:
    table = holdem_table("Escrow Rail")
    now = timezone.now()
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    return table


def test_verify_books_catches_chips_added_to_a_stack_between_hands(seated: Table, alice: User, bob: User) -> None:
    play_hand_out(seated, {0: alice, 3: bob}, timezone.now())
    assert verify_books()[0] == 0
    add_chips_behind_the_books(seated, 100)
    status, out = verify_books()
    assert status == 1
    assert f"FAIL Hold'em table {seated.pk} (Escrow Rail): escrow escrow:holdem:{seated.pk} holds 1990" in out
    assert "its seats' stacks sum to 2090" in out
    assert check_books().other_problems == [
        f"Hold'em table {seated.pk} (Escrow Rail): escrow escrow:holdem:{seated.pk} holds 1990, "
        "its seats' stacks sum to 2090"
    ]


def test_verify_books_catches_chips_taken_from_a_stack_while_a_hand_runs(seated: Table) -> None:
    """During a hand the seats keep their starting stacks and the pots stay in the escrow:
    the same identity holds, exactly."""
    tick(seated, timezone.now())
    assert HoldemHand.objects.get(table=seated).status == HoldemHandStatus.PLAYING
    assert verify_books()[0] == 0
    add_chips_behind_the_books(seated, -1)
    status, out = verify_books()
    assert status == 1 and "holds 2000, its seats' stacks sum to 1999" in out


def test_a_practice_table_s_chips_are_checked_too(alice: User) -> None:
    now = timezone.now()
    game = start_practice_game(user_id=None, setup=PracticeSetup(players=3, max_hands=2), now=now)
    table = game.table
    run_until(table, now + timedelta(seconds=1), hands=1)
    assert_books(table)
    assert verify_books()[0] == 0
    add_chips_behind_the_books(table, 5)
    assert not check_books().ok
    assert verify_books()[0] == 1


def test_the_back_office_books_check_shows_the_hold_em_table(seated: Table, auditor: User) -> None:
    add_chips_behind_the_books(seated, 100)
    response = logged_in(auditor).get("/backoffice/")
    assert response.status_code == 200 and not response.context["books"].ok
    page = response.content.decode()
    assert "The books do not balance" in page
    assert f"Hold&#x27;em table {seated.pk} (Escrow Rail)" in page
