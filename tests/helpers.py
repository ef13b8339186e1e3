"""Plain helpers shared by the test suite: a fun table, a logged-in client, and hands seated,
dealt and settled through the real table services with an injected clock (no real time passes).

Fixtures live in ``tests/conftest.py``; these are ordinary functions, imported where needed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import F
from django.test import Client

from tables.clock import advance_table
from tables.models import Hand, Table
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.seating import join_table


def create_fun_table(name: str = "Test Rail", **config: Any) -> Table:
    """A fun table: ante 1.00, draws half the ante (0.50), redeals 0.80, 30 s change phase; the model defaults
    for the rest (5% rake, 5 draws, 2 redeals in the first 20 s). ``config`` overrides any."""
    return create_table(
        name=name,
        mode="fun",
        currency="FUN",
        **{
            "ante_minor": 100,
            "draw_price_bps": 5000,
            "redeal_price_minor": 80,
            "change_seconds": 30,
            **config,
        },
    )


WIDERPOKER_CONDITIONS_FORM = {
    "ante": "1.00",
    "draw_price_percent": "50.00",
    "max_draws": "5",
    "redeal_price": "0.80",
    "max_redeals": "2",
    "redeal_seconds": "20",
    "change_seconds": "30",
    "results_seconds": "8",
    "rake_percent": "5.00",
    "paid_percent": "15.00",
    "min_prize": "0.00",
}
"""A WiderPoker table's conditions as the admin's table form posts them (decimal units, as
typed by staff): the fields a croupier's change or a new table submits."""


def logged_in(user: User) -> Client:
    """A test client with ``user``'s session."""
    client = Client()
    client.force_login(user)
    return client


def seat_players(table: Table, users: list[User], now: datetime) -> None:
    """Seat ``users`` at ``table`` at ``now``, in order."""
    for user in users:
        join_table(table_id=table.pk, user_id=user.pk, now=now)


def deal(table: Table, now: datetime) -> Hand:
    """Advance the table clock at ``now`` and return the hand it dealt."""
    assert advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()
    assert table.current_hand is not None, f"no hand dealt (phase {table.phase})"
    return table.current_hand


def deal_hand(table: Table, players: list[User], at: datetime) -> Hand:
    """Seat ``players`` and deal a hand at ``at``; return it."""
    seat_players(table, players, at)
    return deal(table, at)


def settle(table: Table) -> Hand:
    """Advance the table clock one second past the current hand's change deadline; return the
    settled hand."""
    table.refresh_from_db()
    hand = table.current_hand
    assert hand is not None
    assert advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=1))
    hand.refresh_from_db()
    return hand


GUARDED_TABLES = (
    "wallet_transfer",
    "wallet_ledgerentry",
    "tables_hand",
    "tables_entry",
    "tables_holdemhand",
    "tables_holdemhandplayer",
)


@contextmanager
def behind_the_apps_back() -> Iterator[None]:
    """Switch off the triggers that keep the ledger append-only and finished hands final, as
    a database superuser can (to test that tampering is found, not merely prevented).

    PostgreSQL: ``session_replication_role = replica``; SQLite: the triggers are dropped and
    created again from their own SQL.
    """
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET session_replication_role = replica")
            try:
                yield
            finally:
                cursor.execute("SET session_replication_role = DEFAULT")
            return
        names = ", ".join(f"'{table}'" for table in GUARDED_TABLES)
        cursor.execute(f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ({names})")
        triggers = cursor.fetchall()
        for name, _sql in triggers:
            cursor.execute(f"DROP TRIGGER {name}")
        try:
            yield
        finally:
            for _name, sql in triggers:
                cursor.execute(sql)


def steer_next_hand(table: Table, players: list[User], wanted: Callable[[bytes], bool], *, now: datetime) -> bytes:
    """Choose the first player's client seed so that the table's next hand seed satisfies
    ``wanted``, as any player may (docs/provably-fair.md, "Algorithm 2"), and return that
    hand seed. Every player must be dealt into the next hand."""
    from tables.engine import fairness
    from tables.models import SeedChain
    from tables.services import fairness as fairness_services

    table.refresh_from_db()
    chain = SeedChain.objects.filter(table=table, next_index__lte=F("length")).order_by("created_at", "pk").first()
    assert chain is not None, "the table has no seed chain"
    chain_seed = fairness.chain_seed(bytes.fromhex(chain.terminal_seed), chain.length, chain.next_index)
    seeds = fairness_services.client_seeds([user.pk for user in players], now=now)
    for attempt in range(100_000):
        candidate = f"steer-{attempt}"
        pairs = [(user.username, candidate if i == 0 else seeds[user.pk]) for i, user in enumerate(players)]
        seed = fairness.hand_seed(chain_seed, table.pk, table.hands_dealt + 1, pairs)
        if wanted(seed):
            fairness_services.set_client_seed(user_id=players[0].pk, seed=candidate, now=now)
            return seed
    raise AssertionError("no client seed gives the hand wanted")
