"""What the schema of a hand of 100,000 players gave up, and what holds in its place
(tables/migrations/0017_entries_at_scale.py, wallet/migrations/0009_ledger_at_scale.py):
fewer entry indexes, results written as heap-only updates, no per-row foreign-key checks on
entries and ledger legs. Runs on SQLite and, with ``DATABASE_URL``, on PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, InternalError, ProgrammingError, connection, transaction

from tables.bulk import array_literal
from tables.engine.widerpoker import combination_index, redeal_combination
from tables.models import Entry, Hand
from tables.widerpoker.services.play import buy_redeal, set_hold
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal, deal_hand, seat_players, settle
from wallet.models import Account, LedgerEntry
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="PostgreSQL's triggers and statistics (production path)"
)


def test_a_redeal_never_hands_out_an_initial_combination_redealt_away(now: datetime, settings: Any) -> None:
    """An initial combination stays taken after its entry redealt it away: the check reads
    the partial index of redealt entries, not an index of every initial combination."""
    settings.PURCHASE_CAPTURE = "batch"
    table = create_fun_table()
    players = [make_player(f"away{i}") for i in range(3)]
    seat_players(table, players, now)
    hand = deal(table, now)
    seed = bytes.fromhex(hand.server_seed)
    initial = set(Entry.objects.filter(hand=hand).values_list("initial_combination", flat=True))
    # The first free candidate of redeal 0, given to player 2 as an initial combination he
    # has since redealt away (his current combination stays his old one, still unique).
    first = combination_index(redeal_combination(seed, initial, 0))
    Entry.objects.filter(hand=hand, user=players[2]).update(initial_combination=first)
    taken = set(Entry.objects.filter(hand=hand).values_list("initial_combination", flat=True))
    taken |= set(Entry.objects.filter(hand=hand).values_list("combination", flat=True))
    entry = buy_redeal(table_id=table.pk, user_id=players[0].pk, now=now + timedelta(seconds=1))
    assert entry.combination != first
    assert entry.combination == combination_index(redeal_combination(seed, taken, 0))


def test_the_books_check_finds_a_ledger_leg_whose_account_does_not_exist(alice: User, now: datetime) -> None:
    table = create_fun_table()
    deal_hand(table, [alice, make_player("legs-b")], now)
    assert check_books().ok
    leg = LedgerEntry.objects.order_by("pk").first()
    assert leg is not None
    missing = (Account.objects.order_by("-pk").values_list("pk", flat=True).first() or 0) + 1000
    with connection.cursor() as cursor:  # no foreign key stops it any more: the check must
        cursor.execute(
            "INSERT INTO wallet_ledgerentry (transfer_id, account_id, delta_minor, balance_after_minor) "
            "VALUES (%s, %s, 0, 0)",
            [leg.transfer_id, missing],
        )
    books = check_books()
    assert not books.ok
    assert len(books.broken_references) == 1


@on_postgresql
def test_an_account_with_legs_and_a_player_with_entries_cannot_be_deleted(alice: User, now: datetime) -> None:
    table = create_fun_table()
    hand = deal_hand(table, [alice, make_player("keep-b")], now)
    account_id = LedgerEntry.objects.filter(transfer__reference=f"ante:{hand.pk}").values_list("account_id").first()
    assert account_id is not None
    for statement, params in (
        ("DELETE FROM wallet_account WHERE id = %s", [account_id[0]]),
        ("DELETE FROM auth_user WHERE id = %s", [alice.pk]),
    ):
        with (
            pytest.raises((IntegrityError, InternalError, ProgrammingError)),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, params)
    assert User.objects.filter(pk=alice.pk).exists()


@on_postgresql
def test_settlement_writes_every_entry_s_result_as_a_heap_only_update(now: datetime) -> None:
    """A settlement's results touch no indexed column and fit in the page the entry was
    dealt into (fillfactor 40): every updated entry is a HOT update. An index on a result
    column, or a table without the room, makes this fail (and a settlement of 100,000
    entries ten times slower, docs/benchmarks.md)."""
    table = create_fun_table()
    deal_hand(table, [make_player(f"hot{i}") for i in range(120)], now)

    def counts() -> tuple[int, int]:
        with connection.cursor() as cursor:
            # Counted per partition (tables 0018): summed over the entries' partitions.
            cursor.execute(
                "SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0) FROM pg_stat_xact_user_tables "
                "WHERE relid = 'tables_entry'::regclass "
                "OR relid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'tables_entry'::regclass)"
            )
            row = cursor.fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    updated, hot = counts()
    hand = settle(table)
    assert Hand.objects.get(pk=hand.pk).status == "settled"
    updated_after, hot_after = counts()
    assert updated_after - updated >= 120
    assert hot_after - hot == updated_after - updated


@on_postgresql
@pytest.mark.parametrize(
    "values",
    [
        ["[1,2,3]", "[4]", "", "NULL", " spaced ", "{braces}", "città"],
        ['a"quote', "plain"],
        ["back\\slash", "x"],
        [True, False, None],
        [0, -7, 2**40],
    ],
)
def test_bulk_array_parameters_reach_postgresql_unchanged(values: list[Any]) -> None:
    """``array_literal`` (every bulk update's parameters): quoting, NULLs and the fast paths."""
    kind = "text" if isinstance(values[0], str) else "boolean" if isinstance(values[0], bool) else "bigint"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT unnest(%s::{kind}[])", [array_literal(values)])
        assert [row[0] for row in cursor.fetchall()] == values


def test_a_player_s_probability_panel_is_computed_once_per_hand_and_never_altered(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each private frame of a running hand carries the player's panel (~2 ms over the
    board's 100,000 cells); a hand of 10,000 sockets sends one per player at the deal and
    again after every hold and purchase. It is kept per (hand, combination): computed once,
    the same on every frame, and a table without tips blanks its copy, not the kept one."""
    from tables.widerpoker import panel_cache, selectors

    calls: list[tuple[int, ...]] = []
    from tables.engine.widerpoker import panel as real

    def counted(grid: Any, combination: tuple[int, ...]) -> Any:
        calls.append(tuple(combination))
        return real(grid, combination)

    from tables.widerpoker import panel_tables

    monkeypatch.setattr(panel_tables, "panel", counted)
    table = create_fun_table()
    alice, bob = make_player("panel-a"), make_player("panel-b")
    deal_hand(table, [alice, bob], now)
    first = selectors.get_entry_state(table_id=table.pk, user_id=alice.pk)
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[True] * 5, now=now + timedelta(seconds=1))
    again = selectors.get_entry_state(table_id=table.pk, user_id=alice.pk)
    assert first["entry"] is not None and again["entry"] is not None
    assert first["entry"]["panel"] == again["entry"]["panel"] and first["entry"]["panel"]["tip1"] is not None
    assert len(calls) == 1
    hand_id = first["hand_id"]
    assert hand_id is not None
    hand = Hand.objects.get(pk=hand_id)
    hand.config = {**hand.config, "tips": False}
    hand.save(update_fields=["config"])
    blank = selectors.get_entry_state(table_id=table.pk, user_id=alice.pk)
    assert blank["entry"] is not None and blank["entry"]["panel"]["tip1"] is None
    assert selectors.get_entry_state(table_id=table.pk, user_id=bob.pk)["entry"] is not None
    assert len(calls) == 2  # bob's; alice's kept panel still has its tips:
    assert panel_cache.PANELS[(hand.pk, tuple(first["entry"]["combination"]))].data["tip1"] is not None
