"""How often a WiderPoker deal reads its players (issue 23, item 2: "fewer reads of the
100,000 players"), through the clock, in real transactions.

Algorithm 3 deals in two clock steps: the freeze (who is dealt in, their names and client
seeds) and, at the deal round, the deal (wallets locked, antes taken). The freeze takes the
names and client seeds from the seat read instead of reading every player again; the deal
finds, locks and reads the wallets by one statement and asks which frozen players left by
one array parameter, not one placeholder per player. The hand itself, its seed and the
books are what they were."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from handhistory.verification import verify_hand
from tables.clock import advance_table
from tables.engine import fairness
from tables.models import Entry, HandFreeze, HandStatus, SeedChain, Table
from tables.services import beacon
from tables.services.seating import touch_presence
from tables.widerpoker.services.seating import leave_table
from tests.conftest import make_player
from tests.helpers import seat_players
from wallet.chain import verify_chain
from wallet.selectors import check_books

ALGORITHM_3 = override_settings(DEAL_ALGORITHM=3)


def _reads(queries: list[dict[str, str]], table: str) -> list[str]:
    """The SELECT statements of ``queries`` that read ``table`` (joined or not)."""
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("SELECT", "WITH")) and table in q["sql"]]


def _ids_listed(sql: str) -> int:
    """The most integers one list of ``sql`` holds: an array parameter (``ANY('{…}')`` on
    PostgreSQL, ``json_each('[…]')`` on SQLite) or one placeholder per id (``IN (…)``)."""
    lists = re.findall(r"ANY\('\{([0-9,]*)\}'|json_each\('\[([0-9, ]*)\]'|IN \(([0-9, ]*)\)", sql)
    return max((len([x for x in "".join(found).split(",") if x.strip()]) for found in lists), default=0)


def _step(table: Table, at: datetime) -> list[dict[str, str]]:
    """One clock step of ``table`` at ``at``; the statements it sent."""
    with CaptureQueriesContext(connection) as captured:
        assert advance_table(table_id=table.pk, now=at)
    return captured.captured_queries


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_an_algorithm_3_deal_reads_names_seeds_and_wallets_once_per_step(table: Table, now: datetime) -> None:
    players = [make_player(name) for name in ("ana", "ben", "cy", "dee")]
    seat_players(table, players, now)

    freeze_step = _step(table, now)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    # The names and client seeds come with the seats: one read of the users (the seat read's join).
    assert len(_reads(freeze_step, '"auth_user"')) == 1
    assert len(_reads(freeze_step, "tables_playerclientseed")) == 1
    # Who can pay is read without a row lock written into every wallet (no ante is taken then).
    wallets = [sql for sql in _reads(freeze_step, "wallet_account") if _ids_listed(sql) >= 3]
    assert len(wallets) == (1 if connection.vendor == "postgresql" else 2), wallets
    assert not [sql for sql in wallets if "FOR NO KEY UPDATE" in sql or "FOR UPDATE" in sql]

    leave_table(table_id=table.pk, user_id=players[3].pk, now=now)
    at = beacon.time_of(int(freeze.deal_round))
    for user in players[:3]:
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    deal_step = _step(table, at)
    # The wallets found, locked and read by one statement on PostgreSQL (``lock_and_read_players``;
    # SQLite finds them, locks them, and the ante locks them again); the frozen players asked
    # about as one array.
    wallet_reads = [sql for sql in _reads(deal_step, "wallet_account") if _ids_listed(sql) >= 3]
    assert len(wallet_reads) == (1 if connection.vendor == "postgresql" else 3), wallet_reads
    if connection.vendor == "postgresql":  # the deal round locks them until the ante is taken
        assert "FOR NO KEY UPDATE" in wallet_reads[0]
    seat_reads = [sql for sql in _reads(deal_step, "tables_seat") if _ids_listed(sql) >= 3]
    assert seat_reads and not [sql for sql in seat_reads if re.search(r"IN \([0-9]+, [0-9]+", sql)], seat_reads

    table.refresh_from_db()
    hand = table.current_hand
    assert hand is not None
    # The player who left during the wait pays nothing and stays in the seed; the others' cards hold.
    assert sorted(Entry.objects.filter(hand=hand).values_list("user_id", flat=True)) == sorted(
        u.pk for u in players[:3]
    )
    assert [row["player"] for row in hand.not_dealt] == ["dee"]
    chain = SeedChain.objects.get(pk=freeze.chain_id)
    element = fairness.chain_seed(bytes.fromhex(chain.terminal_seed), chain.length, freeze.chain_index)
    value = beacon.local_value(int(freeze.deal_round))
    assert (
        hand.server_seed
        == fairness.deal_seed(element, table.pk, hand.number, bytes.fromhex(freeze.digest), value).hex()
    )
    names = {int(row[0]): (str(row[1]), str(row[2])) for row in freeze.players}
    assert fairness.client_seeds_digest(list(names.values())).hex() == freeze.digest
    assert {u.username for u in players} == {name for name, _ in names.values()}
    assert verify_chain() == [] and check_books().ok
    assert advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=3))
    hand.refresh_from_db()
    assert hand.status == HandStatus.SETTLED and check_books().ok
    report = verify_hand(hand_id=hand.pk)
    assert report.ok, report.mismatches


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_frozen_player_without_a_client_seed_gets_one_at_the_freeze(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    """A seat older than joining making the client seed: the freeze gives its player one (stored)
    and freezes it, as reading the players again did."""
    from tables.models import PlayerClientSeed

    seat_players(table, [alice, bob], now)
    PlayerClientSeed.objects.filter(user=bob).delete()
    _step(table, now)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    stored = PlayerClientSeed.objects.get(user=bob).seed
    assert [str(row[2]) for row in freeze.players if int(row[0]) == bob.pk] == [stored]
