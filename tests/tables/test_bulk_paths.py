"""The set-based paths of issue 12 (docs/platform.md, "Hands of 100,000 players") give what
the row-by-row ones gave. Every test here runs on SQLite (the fallback statements) and, with
``DATABASE_URL`` set, on PostgreSQL (COPY, arrays, data-modifying ``WITH``)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tables.bulk import insert_missing_rows, insert_rows
from tables.engine.widerpoker import combination_index, redeal_combination
from tables.errors import NotInHandError, PhaseClosedError
from tables.models import Entry, GamingSession, PlayerClientSeed, Redeal, Seat
from tables.services import fairness as fairness_services
from tables.widerpoker.services.play import buy_draw, buy_redeal
from tables.widerpoker.services.seating import join_table
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal, seat_players, settle
from wallet import protection
from wallet import services as wallet_services
from wallet.errors import InsufficientFundsError, SuspendedError, TransferConflictError
from wallet.models import Account, Currency, FundsHold, PlaySession, Suspension, TransferKind
from wallet.selectors import check_books, get_balance_minor

DRAW = 50


def test_client_seeds_are_created_once_and_a_seed_set_before_is_kept(
    alice: User, bob: User, carol: User, now: datetime
) -> None:
    fairness_services.set_client_seed(user_id=alice.pk, seed="alices-own-seed", now=now)
    first = fairness_services.client_seeds([alice.pk, bob.pk, carol.pk], now=now)
    assert first[alice.pk] == "alices-own-seed"
    assert len(first[bob.pk]) == 32 and len(first[carol.pk]) == 32 and first[bob.pk] != first[carol.pk]
    assert fairness_services.client_seeds([carol.pk, bob.pk, alice.pk], now=now) == first  # drawn once
    assert PlayerClientSeed.objects.count() == 3


def test_names_and_client_seeds_is_one_read_of_what_the_two_give(
    alice: User, bob: User, carol: User, now: datetime
) -> None:
    fairness_services.set_client_seed(user_id=alice.pk, seed="alices-own-seed", now=now)
    ids = [carol.pk, alice.pk, bob.pk]
    names, seeds = fairness_services.names_and_client_seeds(ids, now=now)  # bob and carol get theirs now
    assert names == fairness_services.usernames(ids) == {alice.pk: "alice", bob.pk: "bob", carol.pk: "carol"}
    assert seeds == fairness_services.client_seeds(ids, now=now) and seeds[alice.pk] == "alices-own-seed"
    with CaptureQueriesContext(connection) as queries:
        assert fairness_services.names_and_client_seeds(ids, now=now) == (names, seeds)
    assert len(queries) == 1


@pytest.mark.parametrize(
    "seeds",
    [
        ["50% off", "tab\there", "back\\slash", "line\nbreak", "%d %s %%"],  # a value per row
        ["100% the same\tfor all"] * 5,  # one value for every row: written into the template once
    ],
)
def test_insert_rows_stores_text_as_given(db: Any, seeds: list[str], now: datetime) -> None:
    """COPY's text format escapes tabs, newlines and backslashes; ``%`` must survive the row
    template (tables/bulk.py, ``_copy_text``)."""
    users = [make_player(f"copy{i}") for i in range(len(seeds))]
    insert_rows(
        PlayerClientSeed._meta.db_table,
        {"user_id": [user.pk for user in users], "seed": seeds, "updated_at": [now] * len(seeds)},
    )
    stored = dict(PlayerClientSeed.objects.values_list("user_id", "seed"))
    assert [stored[user.pk] for user in users] == seeds


def test_insert_missing_rows_skips_the_rows_a_unique_key_already_holds(alice: User, bob: User, now: datetime) -> None:
    PlayerClientSeed.objects.create(user=alice, seed="kept", updated_at=now)
    with transaction.atomic():
        insert_missing_rows(
            PlayerClientSeed._meta.db_table,
            {"user_id": [alice.pk, bob.pk], "seed": ["replaced?", "new"], "updated_at": [now, now]},
        )
    assert dict(PlayerClientSeed.objects.values_list("user__username", "seed")) == {"alice": "kept", "bob": "new"}


def test_record_play_extends_open_sessions_and_opens_the_others(
    alice: User, bob: User, carol: User, now: datetime, settings: Any
) -> None:
    break_minutes = settings.SESSION_BREAK_MINUTES
    protection.record_play(user_ids=[alice.pk], now=now - timedelta(minutes=5))  # still playing
    protection.record_play(user_ids=[bob.pk], now=now - timedelta(minutes=break_minutes + 1))  # took a break
    protection.record_play(user_ids=[alice.pk, bob.pk, carol.pk], now=now)
    alices = list(PlaySession.objects.filter(user=alice).values_list("started_at", "last_play_at"))
    assert alices == [(now - timedelta(minutes=5), now)]
    bobs = sorted(PlaySession.objects.filter(user=bob).values_list("started_at", "last_play_at"))
    assert bobs == [
        (now - timedelta(minutes=break_minutes + 1), now - timedelta(minutes=break_minutes + 1)),
        (now, now),
    ]
    assert list(PlaySession.objects.filter(user=carol).values_list("started_at", "last_play_at")) == [(now, now)]


def test_a_bought_draw_is_three_statements_and_counts_in_the_session(db: Any, now: datetime, settings: Any) -> None:
    """docs/platform.md, "Purchases at scale": lock and read, hold, write (PostgreSQL); the
    same result on SQLite with more statements."""
    settings.PURCHASE_CAPTURE = "batch"
    table = create_fun_table()
    players = [make_player(f"s{i}") for i in range(3)]
    seat_players(table, players, now)
    hand = deal(table, now)
    buyer = players[0]
    before = get_balance_minor(user_id=buyer.pk, currency=Currency.FUN)
    with CaptureQueriesContext(connection) as queries:
        entry = buy_draw(table_id=table.pk, user_id=buyer.pk, now=now + timedelta(seconds=1))
    statements = [q["sql"] for q in queries.captured_queries if "SAVEPOINT" not in q["sql"]]  # the test's
    if connection.vendor == "postgresql":
        assert len(statements) == 3, statements
    stored = Entry.objects.get(pk=entry.pk)
    assert (entry.draws_bought, entry.paid_minor) == (stored.draws_bought, stored.paid_minor) == (2, 100 + DRAW)
    assert GamingSession.objects.get(table=table, user=buyer, ended_at__isnull=True).draws_bought == 1
    assert Seat.objects.get(table=table, user=buyer).last_seen_at == now + timedelta(seconds=1)
    hold = FundsHold.objects.get()
    assert (hold.reference, hold.kind, hold.amount_minor) == (f"draw:{hand.pk}:{buyer.pk}:2", "draw", DRAW)
    assert hold.destination.key == f"escrow:hand:{hand.pk}" and hold.transfer is None
    assert get_balance_minor(user_id=buyer.pk, currency=Currency.FUN) == before - DRAW
    assert check_books().ok


def test_protection_is_still_asked_on_the_fast_path(alice: User, bob: User, now: datetime, settings: Any) -> None:
    settings.PURCHASE_CAPTURE = "batch"
    table = create_fun_table()
    seat_players(table, [alice, bob], now)
    deal(table, now)
    staff = User.objects.create_user("staff", is_staff=True)
    Suspension.objects.create(user=alice, reason="bots", suspended_by=staff, suspended_at=now)
    before = get_balance_minor(user_id=alice.pk, currency=Currency.FUN)
    with pytest.raises(SuspendedError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)
    assert get_balance_minor(user_id=alice.pk, currency=Currency.FUN) == before
    assert Entry.objects.get(user=alice).draws_bought == 1 and not FundsHold.objects.exists()
    buy_draw(table_id=table.pk, user_id=bob.pk, now=now)  # bob has no protection row
    assert Entry.objects.get(user=bob).draws_bought == 2


def test_a_purchase_says_why_it_cannot_happen(alice: User, bob: User, carol: User, now: datetime) -> None:
    table = create_fun_table()
    seat_players(table, [alice, bob], now)
    deal(table, now)
    join_table(table_id=table.pk, user_id=carol.pk, now=now)  # seated after the deal
    with pytest.raises(NotInHandError):
        buy_draw(table_id=table.pk, user_id=carol.pk, now=now)
    settle(table)
    with pytest.raises(PhaseClosedError):
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now)


def test_hold_funds_refuses_a_shortfall_and_a_repeated_reference(alice: User, bob: User) -> None:
    escrow = wallet_services.ensure_account(key="escrow:test", kind="escrow", currency=Currency.FUN)
    balance = get_balance_minor(user_id=alice.pk, currency=Currency.FUN)
    with transaction.atomic():
        hold = wallet_services.hold_funds(
            user_id=alice.pk,
            currency=Currency.FUN,
            destination_id=escrow.pk,
            amount_minor=DRAW,
            kind=TransferKind.DRAW,
            reference="draw:test:1",
        )
    assert FundsHold.objects.get(pk=hold.pk).account_id == hold.account_id
    with pytest.raises(InsufficientFundsError), transaction.atomic():
        wallet_services.hold_funds(
            user_id=alice.pk,
            currency=Currency.FUN,
            destination_id=escrow.pk,
            amount_minor=balance,  # all of it, but DRAW of it is promised already
            kind=TransferKind.DRAW,
            reference="draw:test:2",
        )
    with pytest.raises(TransferConflictError), transaction.atomic():
        wallet_services.hold_funds(
            user_id=bob.pk,
            currency=Currency.FUN,
            destination_id=escrow.pk,
            amount_minor=DRAW,
            kind=TransferKind.DRAW,
            reference="draw:test:1",
        )
    held = dict(Account.objects.filter(user__in=[alice, bob]).values_list("user__username", "held_minor"))
    assert held == {"alice": DRAW, "bob": 0}  # the refused holds changed nothing
    assert FundsHold.objects.count() == 1


def test_redeals_follow_the_engine_rule_and_count_in_the_session(db: Any, now: datetime, settings: Any) -> None:
    """The one-statement redeal (PostgreSQL) and the step-by-step one (SQLite) hand out what
    ``redeal_combination`` gives: the first candidate of ``redeal:<n>`` nobody holds."""
    settings.PURCHASE_CAPTURE = "batch"
    table = create_fun_table()
    players = [make_player(f"r{i}") for i in range(4)]
    seat_players(table, players, now)
    hand = deal(table, now)
    taken = set(Entry.objects.filter(hand=hand).values_list("initial_combination", flat=True))
    seed = bytes.fromhex(hand.server_seed)
    for number, player in enumerate([players[0], players[1], players[0]]):
        entry = buy_redeal(table_id=table.pk, user_id=player.pk, now=now + timedelta(seconds=1))
        expected = combination_index(redeal_combination(seed, taken, number))
        taken.add(expected)
        stored = Entry.objects.get(pk=entry.pk)
        assert entry.combination == stored.combination == expected
        assert entry.redeals == stored.redeals and stored.redeals[-1] == [number, expected]
        assert stored.hold_mask is None
    assert list(Redeal.objects.filter(hand=hand).order_by("number").values_list("number", "user_id")) == [
        (0, players[0].pk),
        (1, players[1].pk),
        (2, players[0].pk),
    ]
    sessions = dict(GamingSession.objects.filter(table=table).values_list("user_id", "redeals_bought"))
    assert (sessions[players[0].pk], sessions[players[1].pk], sessions[players[2].pk]) == (2, 1, 0)
    assert Entry.objects.get(hand=hand, user=players[0]).paid_minor == 100 + 2 * 80
    settle(table)
    assert check_books().ok
