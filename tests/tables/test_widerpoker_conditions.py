"""WiderPoker's conditions live in their own row, ``WiderPokerConditions`` (one per WiderPoker
table, ``table.widerpoker``; issue 21): tables 0028 moves them off ``Table`` and back again,
Hold'em and coin-flip tables have none, and the croupier's admin forms write the row."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tables.models import HoldemConditions, Table, WiderPokerConditions
from tests.helpers import WIDERPOKER_CONDITIONS_FORM, create_fun_table, logged_in
from tests.tables.coinflip import game as coinflip
from tests.tables.holdem_helpers import holdem_table

BEFORE = ("tables", "0027_merge_deal")
MOVED = ("tables", "0028_s4conds_widerpoker_conditions")

VALUES = {
    "ante_minor": 250,
    "change_seconds": 45,
    "results_seconds": 6,
    "rake_bps": 700,
    "paid_fraction_bps": 2000,
    "min_prize_minor": 30,
    "draw_price_bps": 4000,
    "max_draws": 4,
    "redeal_price_minor": 90,
    "max_redeals": 3,
    "redeal_seconds": 12,
}


def _conditions(table: Table) -> dict[str, Any]:
    row = WiderPokerConditions.objects.get(table=table)
    return {field: getattr(row, field) for field in VALUES}


@pytest.mark.django_db(transaction=True)  # SQLite's schema editor runs outside a transaction
def test_the_conditions_migration_goes_back_and_forth_and_keeps_every_value() -> None:
    """Backwards, the table's own columns get its values (and a Hold'em table the neutral
    values it held before: the big blind as its ante, its rake); forwards again, the
    conditions row has them all, and a Hold'em table still has none."""
    table = create_fun_table("Migrating Rail", **VALUES)
    holdem = holdem_table("Migrating Hold'em")
    executor = MigrationExecutor(connection)
    leaves = [node for node in executor.loader.graph.leaf_nodes() if node[0] == "tables"]
    try:
        executor.migrate([BEFORE])
        old_table = MigrationExecutor(connection).loader.project_state(BEFORE).apps.get_model("tables", "Table")
        assert old_table.objects.filter(pk=table.pk).values(*VALUES).get() == VALUES
        neutral = old_table.objects.filter(pk=holdem.pk).values("ante_minor", "rake_bps", "max_redeals").get()
        assert neutral == {"ante_minor": 10, "rake_bps": 500, "max_redeals": 0}
        with connection.cursor() as cursor:  # the conditions table is gone with the migration
            assert "tables_widerpokerconditions" not in connection.introspection.table_names(cursor)
    finally:
        MigrationExecutor(connection).migrate(leaves)
    assert MigrationExecutor(connection).loader.applied_migrations.keys() >= {MOVED}
    assert _conditions(table) == VALUES
    assert not WiderPokerConditions.objects.filter(table=holdem).exists()
    assert HoldemConditions.objects.filter(table=holdem).exists()


@pytest.mark.django_db
def test_a_holdem_table_and_a_coin_flip_table_have_no_widerpoker_conditions() -> None:
    holdem = holdem_table("No WiderPoker here")
    flip = coinflip.create(name="Heads or tails", mode="fun", currency="FUN")
    widerpoker = create_fun_table("WiderPoker here")
    assert set(WiderPokerConditions.objects.values_list("table_id", flat=True)) == {widerpoker.pk}
    assert not hasattr(Table.objects.get(pk=holdem.pk), "widerpoker")
    assert not hasattr(Table.objects.get(pk=flip.pk), "widerpoker")


@pytest.mark.django_db(transaction=True)
def test_the_croupiers_admin_forms_write_the_conditions_row(croupier: User) -> None:
    """Through the admin door, logged in as a Croupier: the add form creates the table and
    its conditions row; the conditions form (an idle table: applied at once) changes the row."""
    client = logged_in(croupier)
    created = client.post(
        "/admin/tables/table/add/",
        {**WIDERPOKER_CONDITIONS_FORM, "name": "Admin Rail", "mode": "cash", "currency": "EUR", "ante": "2.50"},
    )
    assert created.status_code == 302
    table = Table.objects.get(name="Admin Rail")
    assert _conditions(table) == {
        **VALUES,
        "ante_minor": 250,
        "change_seconds": 30,
        "results_seconds": 8,
        "rake_bps": 500,
        "paid_fraction_bps": 1500,
        "min_prize_minor": 0,
        "draw_price_bps": 5000,
        "max_draws": 5,
        "redeal_price_minor": 80,
        "max_redeals": 2,
        "redeal_seconds": 20,
    }
    changed = client.post(
        f"/admin/tables/table/{table.pk}/conditions/",
        {
            **WIDERPOKER_CONDITIONS_FORM,
            "ante": "2.50",
            "rake_percent": "3.00",
            "max_draws": "3",
            "reason": "quieter rail",
        },
    )
    assert changed.status_code == 302
    after = _conditions(table)
    assert (after["rake_bps"], after["max_draws"], after["ante_minor"]) == (300, 3, 250)
    assert Table.objects.get(pk=table.pk).pending_changes == {}
    page = client.get(f"/admin/tables/table/{table.pk}/change/").content.decode()
    assert "Draws per hand 3" in page  # the table's page reads the row too


@pytest.mark.django_db
def test_the_lobby_reads_every_tables_conditions_with_the_tables() -> None:
    """``GET /api/tables/``'s lines join each game's conditions row (``ConditionsSpec.relation``):
    a WiderPoker and a Hold'em table more cost no conditions query of their own."""
    from django.db import connection as db
    from django.test.utils import CaptureQueriesContext

    from tables.selectors import list_lobby_tables

    create_fun_table("Lobby Rail A")
    holdem_table("Lobby Hold'em A")

    def conditions_reads() -> int:
        with CaptureQueriesContext(db) as queries:
            rows = list_lobby_tables()
        assert all(isinstance(row["ante_minor"], int) for row in rows)
        return sum(
            1
            for query in queries.captured_queries
            if query["sql"].lstrip().upper().startswith("SELECT")
            and (
                'FROM "tables_widerpokerconditions"' in query["sql"] or 'FROM "tables_holdemconditions"' in query["sql"]
            )
        )

    assert conditions_reads() == 0
    create_fun_table("Lobby Rail B", ante_minor=300)
    holdem_table("Lobby Hold'em B")
    assert conditions_reads() == 0
    antes = [row["ante_minor"] for row in list_lobby_tables()]
    assert antes == sorted(antes)
