"""Purchases at scale (issue 12): confirmed as holds on the buyer's wallet, captured into the
hand's escrow in batches, every one of them in the settlement (docs/platform.md, "Purchases
at scale")."""

from __future__ import annotations

import random
import threading
from collections import Counter
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from tables.errors import LimitReachedError
from tables.models import Entry, Hand, HandStatus, Redeal
from tables.widerpoker.services.play import buy_draw, buy_redeal
from tables.widerpoker.services.settlement import capture_running_purchases
from tests.conftest import make_player, postgres_only
from tests.helpers import create_fun_table, deal, seat_players, settle
from wallet import services as wallet_services
from wallet.errors import InsufficientFundsError
from wallet.models import Account, AccountKind, Currency, FundsHold, TransferKind
from wallet.selectors import check_books, get_balance_minor

ANTE, DRAW, REDEAL = 100, 50, 80


def drain_to(user: User, amount_minor: int) -> None:
    """Leave ``amount_minor`` in the player's FUN wallet (the rest goes to the cashier)."""
    wallet = wallet_services.ensure_player_account(user_id=user.pk, currency=Currency.FUN)
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    wallet.refresh_from_db()
    wallet_services.transfer_between(
        source=wallet,
        destination=cashier,
        amount_minor=wallet.balance_minor - amount_minor,
        kind=TransferKind.WITHDRAWAL,
        reference=f"drain:{user.pk}",
    )


def test_a_purchase_left_uncaptured_when_its_worker_dies_is_settled_with_the_hand(
    alice: User, bob: User, now: datetime, settings: Any
) -> None:
    settings.PURCHASE_CAPTURE = "batch"
    table = create_fun_table()
    seat_players(table, [alice, bob], now)
    hand = deal(table, now)
    before = get_balance_minor(user_id=alice.pk, currency=Currency.FUN)
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    buy_redeal(table_id=table.pk, user_id=alice.pk, now=now)
    # Confirmed at once: what alice may spend fell, the escrow and the hand's totals wait.
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == before - DRAW - REDEAL
    hand.refresh_from_db()
    assert (hand.gross_minor, hand.redeal_count) == (2 * ANTE, 0)
    assert FundsHold.objects.filter(transfer__isnull=True).count() == 2
    assert check_books().ok  # held money is accounted for while it waits
    # No clock tick ran (its worker died): settlement captures the holds first.
    hand = settle(table)
    assert hand.status == HandStatus.SETTLED
    assert (hand.gross_minor, hand.draws_minor, hand.redeals_minor) == (2 * ANTE + DRAW + REDEAL, DRAW, REDEAL)
    assert hand.redeal_count == 1
    assert not FundsHold.objects.filter(transfer__isnull=True).exists()
    assert Account.objects.get(key=f"escrow:hand:{hand.pk}").balance_minor == 0
    assert not Account.objects.filter(held_minor__gt=0).exists()
    assert check_books().ok


def test_the_clock_captures_purchases_in_one_transfer_and_the_totals_follow(
    db: Any, now: datetime, settings: Any
) -> None:
    settings.PURCHASE_CAPTURE = "batch"
    table = create_fun_table()
    players = [make_player(f"batch{i}") for i in range(4)]
    seat_players(table, players, now)
    hand = deal(table, now)
    for player in players:
        buy_draw(table_id=table.pk, user_id=player.pk, now=now)
    assert capture_running_purchases() == 4 * DRAW
    assert capture_running_purchases() == 0  # nothing twice
    hand.refresh_from_db()
    assert (hand.gross_minor, hand.draws_minor) == (4 * ANTE + 4 * DRAW, 4 * DRAW)
    assert Account.objects.get(key=f"escrow:hand:{hand.pk}").balance_minor == hand.gross_minor
    assert check_books().ok


def test_a_hold_never_spends_what_another_hold_promised(alice: User, bob: User, now: datetime, settings: Any) -> None:
    settings.PURCHASE_CAPTURE = "batch"
    table = create_fun_table()
    seat_players(table, [alice, bob], now)
    deal(table, now)
    drain_to(alice, DRAW + DRAW // 2)
    buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    with pytest.raises(InsufficientFundsError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    wallet = wallet_services.ensure_player_account(user_id=alice.pk, currency=Currency.FUN)
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    with pytest.raises(InsufficientFundsError):  # the held half cannot leave by a transfer either
        wallet_services.transfer_between(
            source=wallet, destination=cashier, amount_minor=DRAW, kind=TransferKind.WITHDRAWAL, reference="x"
        )
    assert Entry.objects.get(user=alice).draws_bought == 2
    assert check_books().ok


@postgres_only()
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_purchases_from_many_players_are_exact(db: Any, settings: Any) -> None:
    """Many players buy draws and redeals at one hand from 8 threads (each its own database
    connection) while the clock captures batches: nobody overspends or passes a limit, no
    confirmed purchase is lost or doubled, every one is in the settlement, the books balance."""
    settings.PURCHASE_CAPTURE = "batch"
    now = timezone.now()
    table = create_fun_table("Massive Rail", max_draws=5, max_redeals=2)
    players = [make_player(f"m{i}") for i in range(40)]
    seat_players(table, players, now)
    hand = deal(table, now)
    # A third of the players can afford only some of what they try to buy.
    budgets = {p.pk: (DRAW * 2 + REDEAL if i % 3 == 0 else None) for i, p in enumerate(players)}
    for player in players:
        if budgets[player.pk] is not None:
            drain_to(player, int(budgets[player.pk] or 0))
    start = {p.pk: get_balance_minor(user_id=p.pk, currency=Currency.FUN) for p in players}
    attempts = [(p.pk, "draw") for p in players for _ in range(6)] + [
        (p.pk, "redeal") for p in players for _ in range(3)
    ]
    random.Random(12).shuffle(attempts)
    confirmed: list[tuple[int, str]] = []
    refused: Counter[str] = Counter()
    errors: list[BaseException] = []
    lock = threading.Lock()
    done = threading.Event()

    def buyer(share: list[tuple[int, str]]) -> None:
        try:
            for user_id, action in share:
                buy = buy_draw if action == "draw" else buy_redeal
                try:
                    buy(table_id=table.pk, user_id=user_id, now=now + timedelta(seconds=1))
                except (LimitReachedError, InsufficientFundsError) as error:
                    with lock:
                        refused[type(error).__name__] += 1
                    continue
                with lock:
                    confirmed.append((user_id, action))
        except BaseException as error:  # reported below, not lost in the thread
            errors.append(error)
        finally:
            connection.close()

    def clock() -> None:
        try:
            while not done.is_set():
                capture_running_purchases()
        except BaseException as error:
            errors.append(error)
        finally:
            connection.close()

    capturer = threading.Thread(target=clock)
    capturer.start()
    threads = [threading.Thread(target=buyer, args=(attempts[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done.set()
    capturer.join()
    assert not errors, errors

    draws = Counter(user_id for user_id, action in confirmed if action == "draw")
    redeals = Counter(user_id for user_id, action in confirmed if action == "redeal")
    for player in players:
        entry = Entry.objects.get(hand=hand, user=player)
        assert entry.draws_bought - 1 == draws[player.pk] <= 4  # never past the limit
        assert len(entry.redeals) == redeals[player.pk] <= 2
        spent = DRAW * draws[player.pk] + REDEAL * redeals[player.pk]
        assert entry.paid_minor == ANTE + spent
        assert spent <= start[player.pk]  # never overspent
        assert get_balance_minor(user_id=player.pk, currency=Currency.FUN) == start[player.pk] - spent
    assert refused["InsufficientFundsError"] > 0 and refused["LimitReachedError"] > 0
    numbers = sorted(Redeal.objects.filter(hand=hand).values_list("number", flat=True))
    assert numbers == list(range(sum(redeals.values())))  # one order, no gap, no repeat
    combinations = list(Redeal.objects.filter(hand=hand).values_list("combination", flat=True))
    initial = set(Entry.objects.filter(hand=hand).values_list("initial_combination", flat=True))
    assert len(set(combinations)) == len(combinations) and not initial & set(combinations)

    hand = settle(table)
    total_draws, total_redeals = sum(draws.values()), sum(redeals.values())
    assert hand.redeal_count == total_redeals
    assert hand.gross_minor == ANTE * len(players) + DRAW * total_draws + REDEAL * total_redeals
    assert (hand.draws_minor, hand.redeals_minor) == (DRAW * total_draws, REDEAL * total_redeals)
    assert sum(Entry.objects.filter(hand=hand).values_list("paid_minor", flat=True)) == hand.gross_minor
    assert not FundsHold.objects.filter(transfer__isnull=True).exists()
    captured = sum(
        FundsHold.objects.filter(destination__key=f"escrow:hand:{hand.pk}").values_list("amount_minor", flat=True)
    )
    assert captured == DRAW * total_draws + REDEAL * total_redeals  # each confirmed purchase once
    assert Account.objects.get(key=f"escrow:hand:{hand.pk}").balance_minor == 0
    assert not Account.objects.filter(held_minor__gt=0).exists()
    assert Hand.objects.get(pk=hand.pk).status == HandStatus.SETTLED
    assert check_books().ok
