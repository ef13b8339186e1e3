"""Loss limits hold at every moment, on every table together (issue 19; audit 2026-11-26
M1): purchases still on hold count as lost, so do draws and redeals captured together,
chips moved to a Hold'em table's escrow count from the buy-in to the cash-out, and two
stakes at once on two tables are counted one after the other.

Through the doors a player uses (REST), outside Django's test transaction, with the
purchases confirmed as holds and captured by the clock (``PURCHASE_CAPTURE=batch``, the
PostgreSQL default)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test import Client
from django.utils import timezone

from tables.clock import recover_table
from tables.holdem.services import take_seat
from tables.models import Entry, HoldemHand, Seat, SeatStatus, Table
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.settlement import capture_running_purchases
from tests.conftest import postgres_only
from tests.helpers import deal, logged_in, seat_players, settle
from tests.tables.holdem_helpers import assert_books, holdem_table, tick
from wallet import protection
from wallet import services as wallet_services
from wallet.models import Account, FundsHold, Transfer, TransferKind
from wallet.selectors import check_books

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_throttle_counters")]

# A 0.50 EUR ante table: draws 0.25 (half the ante), redeals 0.50 (the audit's table).
ANTE, DRAW, REDEAL = 50, 25, 50


@pytest.fixture(autouse=True)
def _purchases_on_hold(settings: Any) -> None:
    """Purchases stay holds until the clock captures them (production's default on
    PostgreSQL; the suite's own default captures each at once)."""
    settings.PURCHASE_CAPTURE = "batch"


def euro_table(name: str = "Euro") -> Table:
    return create_table(
        name=name,
        mode="cash",
        currency="EUR",
        ante_minor=ANTE,
        draw_price_bps=5000,
        redeal_price_minor=REDEAL,
        change_seconds=30,
    )


def fund(croupier: User, *users: User, amount_minor: int = 5_000) -> None:
    for user in users:
        wallet_services.deposit_cash(
            user_id=user.pk,
            currency="EUR",
            amount_minor=amount_minor,
            reason="bank transfer",
            staff_user_id=croupier.pk,
        )


def loss_limit(user: User, value: int, now: datetime) -> None:
    protection.set_limit(user_id=user.pk, kind="loss", currency="EUR", value=value, now=now)


def buy(client: Client, table: Table, what: str) -> tuple[int, str | None]:
    """A purchase over REST: (status, refusal code or None)."""
    response = client.post(f"/api/tables/{table.pk}/{what}/", {}, content_type="application/json")
    return response.status_code, None if response.status_code == 200 else response.json()["code"]


def held(user: User) -> int:
    return int(Account.objects.get(user=user, currency="EUR").held_minor)


def test_purchases_on_hold_count_against_the_loss_limit(alice: User, bob: User, croupier: User) -> None:
    """The audit's run: a 1.00 EUR limit at a 0.50 ante table, then draws and redeals in a
    row. Accepted until the limit, refused past it, whatever the clock captured."""
    now = timezone.now()
    fund(croupier, alice, bob)
    loss_limit(alice, 100, now)
    table = euro_table()
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)  # ante 0.50: lost 0.50
    client = logged_in(alice)
    assert buy(client, table, "draws") == (200, None)  # 0.75, on hold
    assert buy(client, table, "draws") == (200, None)  # 1.00, on hold: at the limit
    assert held(alice) == 2 * DRAW
    assert buy(client, table, "draws") == (409, "loss_limit")
    assert buy(client, table, "redeals") == (409, "loss_limit")
    assert buy(client, table, "draws") == (409, "loss_limit")
    entry = Entry.objects.get(hand=hand, user=alice)
    assert (entry.draws_bought, len(entry.redeals), entry.paid_minor) == (3, 0, ANTE + 2 * DRAW)
    assert FundsHold.objects.filter(account__user=alice).count() == 2
    settle(table)
    assert held(alice) == 0
    assert check_books().ok


def test_draws_and_redeals_captured_together_still_count(alice: User, bob: User, croupier: User) -> None:
    """The clock moves a batch of draws and redeals in one transfer of kind ``capture``: the
    purchases in it stay lost (before: they vanished from the loss once captured)."""
    now = timezone.now()
    fund(croupier, alice, bob)
    loss_limit(alice, ANTE + DRAW + REDEAL, now)
    table = euro_table()
    seat_players(table, [alice, bob], now)
    deal(table, now)
    client = logged_in(alice)
    assert buy(client, table, "draws") == (200, None)
    assert buy(client, table, "redeals") == (200, None)  # at the limit
    assert capture_running_purchases() == DRAW + REDEAL
    assert Transfer.objects.filter(kind=TransferKind.CAPTURE).count() == 1
    assert held(alice) == 0
    assert buy(client, table, "draws") == (409, "loss_limit")
    assert protection.get_session_summary(user_id=alice.pk, now=timezone.now()).net_minor == {  # type: ignore[union-attr]
        "EUR": -(ANTE + DRAW + REDEAL)
    }
    assert check_books().ok


def test_the_deal_at_another_table_counts_the_purchases_on_hold(
    alice: User, bob: User, carol: User, croupier: User
) -> None:
    """Every table together: draws on hold at one table keep the player out of the next
    deal at another when its ante would take him past his limit."""
    now = timezone.now()
    fund(croupier, alice, bob, carol)
    loss_limit(alice, ANTE + 4 * DRAW, now)
    first, second = euro_table("First"), euro_table("Second")
    seat_players(first, [alice, bob], now)
    seat_players(second, [alice, bob, carol], now)
    deal(first, now)
    client = logged_in(alice)
    for _ in range(4):
        assert buy(client, first, "draws") == (200, None)  # at the limit, all on hold
    hand = deal(second, now)
    assert sorted(hand.entries.values_list("user__username", flat=True)) == ["bob", "carol"]
    seat = Seat.objects.get(table=second, user=alice)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "loss limit")
    assert check_books().ok


def test_hold_em_chips_count_from_the_buy_in_to_the_cash_out(alice: User, bob: User, croupier: User) -> None:
    """Money moved to a Hold'em table's escrow is at risk: the buy-in counts as lost until
    the chips come back. A player who bought in up to his limit plays his chips (a hand
    stakes nothing new); he cannot add chips or stake elsewhere; once he leaves, the chips
    he takes back count no more."""
    now = timezone.now()
    fund(croupier, alice, bob)
    loss_limit(alice, 500, now)
    table = holdem_table(mode="cash", currency="EUR")
    a, b = logged_in(alice), logged_in(bob)
    url = f"/api/tables/{table.pk}/holdem"
    joined = a.post(f"{url}/join/", {"seat": 0, "buy_in_minor": 500}, content_type="application/json")
    assert joined.status_code == 200, joined.json()
    assert b.post(f"{url}/join/", {"seat": 1, "buy_in_minor": 500}, content_type="application/json").status_code == 200
    more = a.post(f"{url}/add_chips/", {"amount_minor": 1}, content_type="application/json")
    assert (more.status_code, more.json()["code"]) == (409, "loss_limit")
    wider = euro_table()
    refused = a.post(f"/api/tables/{wider.pk}/join/", {}, content_type="application/json")
    assert (refused.status_code, refused.json()["code"]) == (409, "loss_limit")
    assert tick(table, timezone.now())  # the hand is dealt with her chips in it
    hand = HoldemHand.objects.get(table=table)
    assert {int(player["seat"]) for player in hand.players} == {0, 1}
    assert Seat.objects.get(table=table, user=alice).status == SeatStatus.ACTIVE
    recover_table(table_id=table.pk, now=now, reason="test: the hand is cancelled")  # stacks as bought
    assert a.post(f"{url}/leave/", {}, content_type="application/json").status_code == 200
    assert protection.losses_minor(user_ids=[alice.pk], currency="EUR", since=now) == {alice.pk: 0}
    rejoined = a.post(f"/api/tables/{wider.pk}/join/", {}, content_type="application/json")
    assert rejoined.status_code == 200, rejoined.json()
    assert_books(table)


def test_a_limit_lowered_below_the_chips_at_risk_sits_the_player_out(alice: User, bob: User, croupier: User) -> None:
    now = timezone.now()
    fund(croupier, alice, bob)
    table = holdem_table(mode="cash", currency="EUR")
    for user, position in ((alice, 0), (bob, 1)):
        take_seat(table_id=table.pk, user_id=user.pk, position=position, buy_in_minor=500, now=now)
    loss_limit(alice, 400, now)  # lowering applies at once
    tick(table, now)
    seat = Seat.objects.get(table=table, user=alice)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "loss limit")
    assert not HoldemHand.objects.filter(table=table).exists()
    refused = logged_in(alice).post(f"/api/tables/{table.pk}/holdem/sit_in/", {}, content_type="application/json")
    assert (refused.status_code, refused.json()["code"]) == (409, "loss_limit")
    assert_books(table)


# --- two stakes at once ------------------------------------------------------------------------


def at_once(*calls: Callable[[], tuple[int, str | None]], monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Run ``calls`` in threads started together, with the protection's read made slow: a
    stake that read the losses before another committed would pass beside it. Each thread
    closes its own database connection."""
    original = protection.barred_players

    def slow(**kwargs: Any) -> Any:
        barred = original(**kwargs)
        time.sleep(0.4)  # between the read and the decision's write
        return barred

    monkeypatch.setattr(protection, "barred_players", slow)
    start = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        try:
            start.wait()
            results[i] = calls[i]()
        except Exception as error:  # reported by the assertion below
            results[i] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@postgres_only()
def test_two_purchases_at_once_on_two_tables_cannot_both_pass(
    alice: User, bob: User, croupier: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = timezone.now()
    fund(croupier, alice, bob)
    loss_limit(alice, 2 * ANTE + DRAW, now)
    first, second = euro_table("First"), euro_table("Second")
    for table in (first, second):
        seat_players(table, [alice, bob], now)
        deal(table, now)  # two antes: 1.00, room for one draw
    a1, a2 = logged_in(alice), logged_in(alice)
    results = at_once(lambda: buy(a1, first, "draws"), lambda: buy(a2, second, "draws"), monkeypatch=monkeypatch)
    assert sorted(results) == [(200, None), (409, "loss_limit")]
    assert held(alice) == DRAW
    assert connection.vendor == "postgresql" and check_books().ok


@postgres_only()
def test_a_buy_in_and_a_purchase_at_once_cannot_both_pass(
    alice: User, bob: User, croupier: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = timezone.now()
    fund(croupier, alice, bob)
    loss_limit(alice, ANTE + 200, now)
    wider = euro_table()
    seat_players(wider, [alice, bob], now)
    deal(wider, now)  # 0.50 lost: room for a buy-in of 2.00 or a draw, not both
    holdem = holdem_table(mode="cash", currency="EUR")
    a1, a2 = logged_in(alice), logged_in(alice)

    def buy_in() -> tuple[int, str | None]:
        response = a2.post(
            f"/api/tables/{holdem.pk}/holdem/join/", {"seat": 0, "buy_in_minor": 200}, content_type="application/json"
        )
        return response.status_code, None if response.status_code == 200 else response.json()["code"]

    results = at_once(lambda: buy(a1, wider, "draws"), buy_in, monkeypatch=monkeypatch)
    assert sorted(results) == [(200, None), (409, "loss_limit")]
    assert protection.losses_minor(user_ids=[alice.pk], currency="EUR", since=now)[alice.pk] <= ANTE + 200
    assert_books(holdem)
