"""The indexes that keep years of entries and ledger legs fast (tables 0013 and 0017, wallet 0007),
as the migrations leave them on whichever database runs the suite."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, NotSupportedError, connection, models, transaction
from django.utils import timezone

from config.infra.migration_operations import AddIndexOnline

pytestmark = pytest.mark.django_db


def indexes(table: str) -> dict[str, list[str]]:
    """Index name -> columns (unique constraints and the primary key included)."""
    with connection.cursor() as cursor:
        constraints: dict[str, Any] = connection.introspection.get_constraints(cursor, table)
    return {name: list(info["columns"]) for name, info in constraints.items() if info["index"] or info["unique"]}


def test_a_players_history_and_an_audit_range_have_their_indexes() -> None:
    entry = indexes("tables_entry")
    assert entry["entry_user_recent"] == ["user_id", "hand_id"]
    assert indexes("tables_hand")["hand_settled_at"] == ["settled_at"]
    # The missed-result lookup: a table's hands of the last day bound the player's entries.
    assert indexes("tables_hand")["hand_table_settled"] == ["table_id", "settled_at"]
    # Settlement writes no indexed column (its results are heap-only updates, tables 0017).
    written = {"connected_at_end", "hold_used", "draw_strengths", "best_draw", "strength", "category", "place"}
    written |= {"prize_minor", "jackpot_minor"}
    assert not written & {column for columns in entry.values() for column in columns}


def test_no_index_is_written_twice_per_entry_or_leg() -> None:
    """Every entry index leads with hand except one by user; no single-column duplicate of
    either (each costs a write per entry at the deal). The same for the ledger's account."""
    entry = indexes("tables_entry")
    assert ["user_id"] not in entry.values()
    assert ["hand_id"] not in entry.values()
    leg = indexes("wallet_ledgerentry")
    assert ["account_id"] not in leg.values()
    assert leg["ledger_account_recent"] == ["account_id", "id"]
    if connection.vendor == "postgresql":
        # The partitioned legs' primary key leads with the transfer (wallet 0010, 0011).
        assert ["transfer_id", "id"] in leg.values()
        assert ["transfer_id"] not in leg.values()
    else:
        assert ["transfer_id"] in leg.values()  # SQLite's key is id alone: a transfer's legs need it


@pytest.mark.skipif(connection.vendor != "postgresql", reason="CONCURRENTLY is PostgreSQL's")
def test_a_concurrent_index_refuses_to_run_inside_a_transaction() -> None:
    operation = AddIndexOnline(model_name="hand", index=models.Index(fields=["number"], name="never_built"))

    class Editor:
        def __init__(self) -> None:
            self.connection = connection

    with transaction.atomic(), pytest.raises(NotSupportedError, match="atomic = False"):
        operation.database_forwards("tables", Editor(), None, None)


def test_dropping_the_indexes_kept_the_tables_triggers() -> None:
    """The append-only ledger and the final entries are triggers; an ``AlterField`` on SQLite
    rebuilds the table and silently loses them, so the index migrations must not. (On
    SQLite the rebuilt tables get theirs again: tables 0016 and 0017, wallet 0009.)"""
    tables = ["wallet_ledgerentry", "tables_entry"]
    for table in tables:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(
                    "SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal", [table]
                )
            else:
                cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table])
            assert cursor.fetchall(), f"{table} lost its triggers"


def test_one_unique_index_by_player_and_hand_keeps_one_entry_per_player_and_hand() -> None:
    """Tables 0032 (issue 23): the player's history index is the unique one; no second index
    holds the same pairs led by the hand. A second entry of a player in a hand is refused,
    in every partition on PostgreSQL (each partition's index is unique, the parent's valid)."""
    from tables.models import Entry
    from tests.conftest import make_player
    from tests.helpers import create_fun_table, deal_hand

    with connection.cursor() as cursor:
        constraints: dict[str, Any] = connection.introspection.get_constraints(cursor, "tables_entry")
    assert constraints["entry_user_recent"]["unique"] and constraints["entry_user_recent"]["columns"] == [
        "user_id",
        "hand_id",
    ]
    assert "one_entry_per_player_and_hand" not in constraints
    assert ["hand_id", "user_id"] not in indexes("tables_entry").values()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT c.relname, i.indisunique, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                "WHERE c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'entry_user_recent'::regclass) "
                "OR c.relname = 'entry_user_recent'"
            )
            found = cursor.fetchall()
        assert len(found) >= 4 and all(unique and valid for _, unique, valid in found), found

    table = create_fun_table("Unique Rail")
    players = [make_player(f"uniq{i}") for i in range(2)]
    hand = deal_hand(table, players, timezone.now())
    taken = set(Entry.objects.filter(hand=hand).values_list("combination", flat=True))
    free = next(c for c in range(100_000) if c not in taken)
    twin = Entry(hand=hand, user=players[0], join_order=9, initial_combination=free, combination=free)
    with pytest.raises(IntegrityError) as refused, transaction.atomic():
        twin.save()
    assert "user_id" in str(refused.value)  # the player-and-hand index refused it, nothing else
    assert Entry.objects.filter(hand=hand, user=players[0]).count() == 1
