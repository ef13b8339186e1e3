"""Security audit F6: the application runs as a least-privilege database role. As that role a
whole hand plays and settles, and nothing can truncate, rewrite or delete the ledger or a
finished hand, nor switch off the triggers that guard them. Finished hands are final for
every role that does not own the tables. The same holds for Hold'em hands (audit
2026-11-26, M3: tables migration 0019).

PostgreSQL only: the embedded SQLite default has no roles."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import psycopg
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections
from django.utils import timezone

from config.infra.partitions import ensure_partitions
from tables.holdem.services import take_seat
from tables.models import Hand, HandStatus, HoldemHand, HoldemHandPlayer, HoldemHandStatus
from tables.widerpoker.services.play import buy_draw, buy_redeal
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand, settle
from tests.tables.holdem_helpers import assert_books, holdem_table, play_hand_out, run_until
from wallet.models import LedgerEntry
from wallet.selectors import check_books

ROLE = "wp_app_suite"

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="needs PostgreSQL (DATABASE_URL)"),
]


@contextmanager
def as_role(role: str) -> Iterator[None]:
    """Run the Django code inside as ``role`` (the default connection reconnects as it)."""
    default = connections["default"]
    saved = default.settings_dict["USER"]
    default.close()
    default.close_pool()  # type: ignore[attr-defined]  # Django 5.1+, not in django-stubs yet
    default.settings_dict["USER"] = role
    try:
        yield
    finally:
        default.close()
        default.close_pool()  # type: ignore[attr-defined]  # Django 5.1+, not in django-stubs yet
        default.settings_dict["USER"] = saved


def raw_as(role: str) -> psycopg.Connection[tuple[object, ...]]:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params["user"] = role
    params["autocommit"] = True
    return psycopg.connect(**params)


@pytest.fixture
def app_role() -> str:
    call_command("grant_app_role", ROLE, "--create", stdout=io.StringIO())
    return ROLE


def test_a_whole_hand_plays_and_settles_as_the_app_role(app_role: str) -> None:
    with as_role(app_role):
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_user")
            assert cursor.fetchone() == (app_role,)
        table = create_fun_table("Role Rail")
        alice, bob = make_player("role-alice"), make_player("role-bob")
        now = timezone.now()
        hand = deal_hand(table, [alice, bob], now)
        buy_draw(table_id=table.pk, user_id=alice.pk, now=now + timedelta(seconds=1))
        buy_redeal(table_id=table.pk, user_id=bob.pk, now=now + timedelta(seconds=2))
        settled = settle(table)
        assert settled.status == HandStatus.SETTLED and settled.pk == hand.pk
        assert check_books().ok


FORBIDDEN = [
    "TRUNCATE wallet_ledgerentry",
    "TRUNCATE wallet_transfer CASCADE",
    "UPDATE wallet_ledgerentry SET delta_minor = 0",
    "DELETE FROM wallet_ledgerentry",
    "DELETE FROM wallet_transfer",
    "UPDATE wallet_transfer SET memo = 'x'",
    "ALTER TABLE wallet_ledgerentry DISABLE TRIGGER ALL",
    "SET session_replication_role = replica",
    "UPDATE tables_hand SET server_seed = 'x' WHERE status = 'settled'",
    "UPDATE tables_entry SET place = 1 WHERE hand_id IN (SELECT id FROM tables_hand WHERE status = 'settled')",
    "DELETE FROM tables_entry",
    "DELETE FROM tables_hand",
    "TRUNCATE tables_hand CASCADE",
    "INSERT INTO django_migrations (app, name, applied) VALUES ('x', 'y', now())",
    "DROP TABLE wallet_ledgerentry",
    # Partitions are reached through their parent only (its triggers and grants): the app
    # role has no right on one (tables 0018, wallet 0010; config/infra/partitions.py).
    "SELECT count(*) FROM tables_entry_p0",
    "UPDATE tables_entry_p0 SET place = 1",
    "DELETE FROM tables_entry_default",
    "INSERT INTO wallet_ledgerentry_p0 (delta_minor, balance_after_minor, account_id, transfer_id) VALUES (0, 0, 1, 1)",
    "DELETE FROM wallet_ledgerentry_p0",
]


def test_the_app_role_cannot_rewrite_the_ledger_or_a_finished_hand(app_role: str) -> None:
    table = create_fun_table("Guarded Rail")
    alice, bob = make_player("guard-alice"), make_player("guard-bob")
    deal_hand(table, [alice, bob], timezone.now())
    settle(table)
    legs = LedgerEntry.objects.count()
    with raw_as(app_role) as raw:
        assert raw.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (False,)
        for statement in FORBIDDEN:
            with pytest.raises(psycopg.Error):
                raw.execute(statement)
                # A statement that matched no row would "succeed": make sure there were rows.
                raise AssertionError(f"allowed: {statement}")
        # What the app needs still works: reading, and inserting into an append-only table's peer.
        assert raw.execute("SELECT count(*) FROM wallet_ledgerentry").fetchone() == (legs,)
    assert LedgerEntry.objects.count() == legs
    assert check_books().ok


def test_the_app_role_adds_partitions_through_the_owner_s_function_only(app_role: str) -> None:
    """Celery beat runs the partitions' upkeep as the app role, which owns no table: the
    owner's SECURITY DEFINER ``partition_add_range`` creates and attaches them (owned by the
    owner; the app role gets no right on them), for partitioned tables only."""
    try:
        with as_role(app_role):
            created = ensure_partitions(ahead=4)
        assert created == [
            "tables_entry_p300000",
            "tables_entry_p400000",
            "wallet_ledgerentry_p3000000",
            "wallet_ledgerentry_p4000000",
        ]
        with raw_as(app_role) as raw:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                raw.execute("SELECT count(*) FROM tables_entry_p400000")
            with pytest.raises(psycopg.errors.InvalidParameterValue, match="partition_error"):
                raw.execute("SELECT partition_add_range('wallet_account', 0, 10)")
        with connection.cursor() as cursor:
            cursor.execute("SELECT tableowner FROM pg_tables WHERE tablename = 'tables_entry_p400000'")
            assert cursor.fetchone() == (connection.settings_dict["USER"],)
    finally:
        with connection.cursor() as cursor:
            for name in ("tables_entry_p300000", "tables_entry_p400000"):
                cursor.execute(f"DROP TABLE IF EXISTS {name}")
            for name in ("wallet_ledgerentry_p3000000", "wallet_ledgerentry_p4000000"):
                cursor.execute(f"DROP TABLE IF EXISTS {name}")


def test_a_finished_hand_is_final_even_for_the_owner_unless_it_disables_triggers(db: None) -> None:
    from django.db import IntegrityError, InternalError, ProgrammingError, transaction

    table = create_fun_table("Final Rail")
    hand = deal_hand(table, [make_player("final-a"), make_player("final-b")], timezone.now())
    Hand.objects.filter(pk=hand.pk).update(cancel_reason="")  # a running hand may change
    settle(table)
    for attempt in (
        lambda: Hand.objects.filter(pk=hand.pk).update(rake_minor=0),
        lambda: hand.entries.update(place=1),
        lambda: Hand.objects.filter(pk=hand.pk).delete(),
    ):
        with pytest.raises((IntegrityError, InternalError, ProgrammingError)), transaction.atomic():
            attempt()


def test_grant_app_role_refuses_a_superuser_and_a_missing_role() -> None:
    with pytest.raises(CommandError, match="superuser"):
        call_command("grant_app_role", "postgres", stdout=io.StringIO())
    with pytest.raises(CommandError, match="does not exist"):
        call_command("grant_app_role", "wp_no_such_role_at_all", stdout=io.StringIO())


def test_hold_em_hands_play_and_settle_as_the_app_role_with_two_players_and_with_bots(app_role: str) -> None:
    """The triggers of tables 0019 let a running Hold'em hand change (actions, turns, the
    settlement's writes to the hand and its players' rows) and the app role has what the
    deal and the settlement need."""
    with as_role(app_role):
        now = timezone.now()
        table = holdem_table("Role Hold'em")
        alice, bob = make_player("role-h-alice"), make_player("role-h-bob")
        take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
        take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
        hand = play_hand_out(table, {0: alice, 3: bob}, now)
        assert hand.rake_minor > 0 and hand.server_seed
        assert set(HoldemHandPlayer.objects.filter(hand=hand).values_list("finishing_minor", flat=True)) != {None}
        assert_books(table)
        bots = holdem_table("Role Bots", bot_seats=2)
        take_seat(table_id=bots.pk, user_id=make_player("role-h-carol").pk, position=0, buy_in_minor=1_000, now=now)
        run_until(bots, now, hands=3)
        assert HoldemHand.objects.filter(table=bots, status=HoldemHandStatus.SETTLED).count() >= 3
        assert_books(bots)
        assert check_books().ok
        call_command("verify_hands", stdout=io.StringIO())  # the auditors' re-check runs as this role too


def test_the_app_role_cannot_rewrite_or_delete_a_finished_hold_em_hand(app_role: str) -> None:
    """Audit 2026-11-26, M3: as the app role the audit rewrote a settled Hold'em hand's
    results and seed, then deleted its players' rows and the hand."""
    now = timezone.now()
    table = holdem_table("Guarded Hold'em")
    alice, bob, carol = make_player("guard-h-alice"), make_player("guard-h-bob"), make_player("guard-h-carol")
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    hand = play_hand_out(table, {0: alice, 3: bob}, now)
    before = HoldemHand.objects.filter(pk=hand.pk).values().get()
    rows = list(HoldemHandPlayer.objects.filter(hand=hand).order_by("pk").values())
    forbidden = [
        f"UPDATE tables_holdemhand SET results = '{{}}', server_seed = repeat('0', 64) WHERE id = {hand.pk}",
        f"UPDATE tables_holdemhand SET status = 'playing' WHERE id = {hand.pk}",
        f"UPDATE tables_holdemhand SET rake_minor = 0 WHERE id = {hand.pk}",
        f"UPDATE tables_holdemhandplayer SET finishing_minor = finishing_minor + 100 WHERE hand_id = {hand.pk}",
        f"DELETE FROM tables_holdemhandplayer WHERE hand_id = {hand.pk}",
        f"DELETE FROM tables_holdemhand WHERE id = {hand.pk}",
        "INSERT INTO tables_holdemhandplayer (hand_id, user_id, seat, is_bot, starting_minor, finishing_minor) "
        f"VALUES ({hand.pk}, {carol.pk}, 5, false, 100, 5000)",
    ]
    with raw_as(app_role) as raw:
        for statement in forbidden:
            with pytest.raises(psycopg.Error):
                raw.execute(statement)
                raise AssertionError(f"allowed: {statement}")
    assert HoldemHand.objects.filter(pk=hand.pk).values().get() == before
    assert list(HoldemHandPlayer.objects.filter(hand=hand).order_by("pk").values()) == rows
