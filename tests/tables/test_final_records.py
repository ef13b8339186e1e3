"""A finished hand's record cannot be rewritten, on whatever database the suite runs (the
triggers of tables/migrations/0003 and 0016, and 0019 for Hold'em hands; PostgreSQL also
refuses DELETE: tests/config/test_db_role.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import IntegrityError, InternalError, ProgrammingError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tables.holdem.services import take_seat
from tables.models import Entry, Hand, HoldemHand, HoldemHandPlayer, HoldemHandStatus
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand, settle
from tests.tables.holdem_helpers import holdem_table, play_hand_out, tick

REFUSED = (IntegrityError, InternalError, ProgrammingError)

pytestmark = pytest.mark.django_db


def test_a_settled_hand_and_its_entries_refuse_updates_but_a_running_hand_does_not() -> None:
    table = create_fun_table("Final Rail")
    hand = deal_hand(table, [make_player("final-a"), make_player("final-b")], timezone.now())
    assert Hand.objects.filter(pk=hand.pk).update(cancel_reason="") == 1  # running: may change
    assert Entry.objects.filter(hand=hand).update(place=None) == 2
    settle(table)
    with pytest.raises((IntegrityError, InternalError, ProgrammingError)), transaction.atomic():
        Hand.objects.filter(pk=hand.pk).update(rake_minor=0)
    with pytest.raises((IntegrityError, InternalError, ProgrammingError)), transaction.atomic():
        Entry.objects.filter(hand=hand).update(place=1)


def _refused(attempt: Callable[[], object]) -> bool:
    try:
        with transaction.atomic():
            attempt()
    except REFUSED:
        return True
    return False


def test_a_finished_hold_em_hand_and_its_players_refuse_changes_but_a_running_hand_does_not() -> None:
    """Audit 2026-11-26, M3 (tables migration 0019), for the owner too: nothing may change a
    settled Hold'em hand or its players' rows, nor add a player to it; PostgreSQL also
    refuses deleting either (SQLite empties its tables with DELETE: tests, flush)."""
    now = timezone.now()
    table = holdem_table()
    alice, bob, carol = make_player("final-h-a"), make_player("final-h-b"), make_player("final-h-c")
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    tick(table, now)
    running = HoldemHand.objects.get(table=table)
    assert running.status == HoldemHandStatus.PLAYING
    assert HoldemHand.objects.filter(pk=running.pk).update(cancel_reason="") == 1  # running: may change
    assert HoldemHandPlayer.objects.filter(hand=running).update(finishing_minor=None) == 2
    hand = play_hand_out(table, {0: alice, 3: bob}, now)
    assert hand.pk == running.pk
    players = HoldemHandPlayer.objects.filter(hand=hand)
    attempts: list[Callable[[], object]] = [
        lambda: HoldemHand.objects.filter(pk=hand.pk).update(server_seed="0" * 64),
        lambda: HoldemHand.objects.filter(pk=hand.pk).update(results={}),
        lambda: HoldemHand.objects.filter(pk=hand.pk).update(status=HoldemHandStatus.PLAYING),
        lambda: players.update(finishing_minor=0),
        lambda: HoldemHandPlayer.objects.create(hand=hand, user=carol, seat=5, starting_minor=100),
    ]
    if connection.vendor == "postgresql":
        attempts += [lambda: players.delete(), lambda: HoldemHand.objects.filter(pk=hand.pk).delete()]
    allowed = [k for k, attempt in enumerate(attempts) if not _refused(attempt)]
    assert allowed == []
    stored = HoldemHand.objects.get(pk=hand.pk)
    assert stored.status == HoldemHandStatus.SETTLED and stored.server_seed == hand.server_seed
    assert stored.results == hand.results and players.count() == 2


@pytest.mark.django_db(transaction=True)  # SQLite's schema editor runs outside a transaction
def test_the_hold_em_triggers_go_away_and_come_back_with_their_migration() -> None:
    """tables 0019 is reversible: back to 0018 a settled Hold'em hand may be updated again
    (the triggers are gone), forwards it is final again."""
    now = timezone.now()
    table = holdem_table("Migrating Hold'em")
    alice, bob = make_player("mig-h-a"), make_player("mig-h-b")
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    hand = play_hand_out(table, {0: alice, 3: bob}, now)
    executor = MigrationExecutor(connection)
    leaves = [node for node in executor.loader.graph.leaf_nodes() if node[0] == "tables"]
    try:
        executor.migrate([("tables", "0018_partitioned_entries")])
        assert not _refused(lambda: HoldemHand.objects.filter(pk=hand.pk).update(cancel_reason="unfrozen"))
    finally:
        MigrationExecutor(connection).migrate(leaves)
    assert _refused(lambda: HoldemHand.objects.filter(pk=hand.pk).update(cancel_reason="frozen"))
    assert _refused(lambda: HoldemHandPlayer.objects.filter(hand=hand).update(finishing_minor=0))
