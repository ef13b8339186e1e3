"""verify_hand recomputes a terminal hand from its revealed seed and finds every tampered fact;
verify_hands runs it over many hands with an exit code for cron and CI."""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db.models import F

from handhistory.errors import HandNotTerminalError
from handhistory.verification import verify_hand
from tables.clock import recover_table
from tables.models import Entry, Hand, HandStatus, Table
from tables.widerpoker.services.play import buy_draw
from tests.helpers import behind_the_apps_back, create_fun_table, deal_hand, settle

pytestmark = pytest.mark.django_db


def mismatched_checks(hand: Hand) -> set[str]:
    return {mismatch.check for mismatch in verify_hand(hand_id=hand.pk).mismatches}


def test_a_settled_hand_verifies_from_its_revealed_seed(settled_hand: Hand) -> None:
    report = verify_hand(hand_id=settled_hand.pk)
    assert report.ok, [str(m) for m in report.mismatches]
    assert report.entries_checked == 2
    for check in (
        "commitment",
        "board",
        "change keys",
        "initial combination",
        "redeal 0 combination",
        "played combination",
        "hold played",
        "draw strengths",
        "place",
        "prize",
        "rake = floor(gross x rate)",
        "prizes + breakage = pool",
    ):
        assert check in report.checks, check


def test_a_tampered_place_is_reported_against_the_entry(settled_hand: Hand, alice: User) -> None:
    entry = Entry.objects.get(hand=settled_hand, user=alice)
    assert entry.place is not None
    with behind_the_apps_back():
        Entry.objects.filter(pk=entry.pk).update(place=entry.place + 1)
    report = verify_hand(hand_id=settled_hand.pk)
    assert not report.ok
    [mismatch] = [m for m in report.mismatches if m.check == "place"]
    assert "alice" in mismatch.subject
    assert (mismatch.stored, mismatch.expected) == (entry.place + 1, entry.place)


def test_a_tampered_prize_breaks_the_pool_balance(settled_hand: Hand, bob: User) -> None:
    with behind_the_apps_back():
        Entry.objects.filter(hand=settled_hand, user=bob).update(prize_minor=F("prize_minor") + 1)
    assert {"prize", "prizes + breakage = pool"} <= mismatched_checks(settled_hand)


def test_a_seed_that_does_not_match_the_commitment_is_caught(settled_hand: Hand) -> None:
    with behind_the_apps_back():
        Hand.objects.filter(pk=settled_hand.pk).update(chain_seed=secrets.token_hex(32))
    assert {"commitment", "chain seed links to the published anchor"} <= mismatched_checks(settled_hand)


def test_a_hand_seed_that_does_not_come_from_the_chain_and_client_seeds_is_caught(settled_hand: Hand) -> None:
    with behind_the_apps_back():
        Hand.objects.filter(pk=settled_hand.pk).update(server_seed=secrets.token_hex(32))
    assert {"hand seed from chain seed and client seeds", "board", "change keys"} <= mismatched_checks(settled_hand)


def test_a_client_seed_changed_after_the_fact_is_caught(settled_hand: Hand) -> None:
    with behind_the_apps_back():
        Entry.objects.filter(hand=settled_hand, join_order=0).update(client_seed="chosen-later")
    assert "hand seed from chain seed and client seeds" in mismatched_checks(settled_hand)


def test_a_beacon_value_that_is_not_its_rounds_is_caught(settled_hand: Hand) -> None:
    with behind_the_apps_back():
        Hand.objects.filter(pk=settled_hand.pk).update(beacon_value=secrets.token_hex(32))
    assert {"beacon value of its round", "change keys"} <= mismatched_checks(settled_hand)


def test_a_rake_above_the_rate_is_caught(settled_hand: Hand) -> None:
    with behind_the_apps_back():
        Hand.objects.filter(pk=settled_hand.pk).update(rake_minor=F("rake_minor") + 1)
    assert "rake = floor(gross x rate)" in mismatched_checks(settled_hand)


def test_a_swapped_initial_combination_is_caught(settled_hand: Hand, alice: User) -> None:
    entry = Entry.objects.get(hand=settled_hand, user=alice)
    with behind_the_apps_back():
        Entry.objects.filter(pk=entry.pk).update(initial_combination=(entry.initial_combination + 1) % 100_000)
    assert "initial combination" in mismatched_checks(settled_hand)


def test_a_hold_that_ignores_the_default_rule_is_caught(settled_hand: Hand, bob: User) -> None:
    # bob chose nothing while connected: the rules change all his cards (hold 0).
    assert Entry.objects.get(hand=settled_hand, user=bob).hold_used == 0
    with behind_the_apps_back():
        Entry.objects.filter(hand=settled_hand, user=bob).update(hold_used=31)
    assert "hold played" in mismatched_checks(settled_hand)


def test_a_running_hand_cannot_be_verified(fun_table: Table, alice: User, bob: User, base: datetime) -> None:
    hand = deal_hand(fun_table, [alice, bob], base)
    with pytest.raises(HandNotTerminalError):
        verify_hand(hand_id=hand.pk)


def test_a_cancelled_hand_verifies_up_to_what_was_paid(
    fun_table: Table, alice: User, bob: User, base: datetime
) -> None:
    hand = deal_hand(fun_table, [alice, bob], base)
    buy_draw(table_id=fun_table.pk, user_id=alice.pk, now=base + timedelta(seconds=1))
    recover_table(table_id=fun_table.pk, now=base + timedelta(seconds=2), reason="test")
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED
    report = verify_hand(hand_id=hand.pk)
    assert report.ok, [str(m) for m in report.mismatches]
    assert "amount paid" in report.checks and "place" not in report.checks


def test_verify_hands_prints_a_summary_and_succeeds_on_honest_hands(
    settled_hand: Hand, capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("verify_hands")
    assert "Verified 1 hand(s): 1 ok, 0 with mismatches." in capsys.readouterr().out


def test_verify_hands_exits_1_and_names_the_tampered_hand(
    settled_hand: Hand, alice: User, capsys: pytest.CaptureFixture[str]
) -> None:
    with behind_the_apps_back():
        Entry.objects.filter(hand=settled_hand, user=alice).update(place=99)
    with pytest.raises(CommandError) as failure:
        call_command("verify_hands", "--table", str(settled_hand.table_id))
    assert failure.value.returncode == 1
    assert "0 ok, 1 with mismatches" in str(failure.value)
    output = capsys.readouterr().out
    assert f"hand {settled_hand.pk}" in output and "place" in output


def test_verify_hands_filters_by_table_and_date(
    settled_hand: Hand, alice: User, bob: User, base: datetime, capsys: pytest.CaptureFixture[str]
) -> None:
    other = create_fun_table("Other Rail")
    deal_hand(other, [alice, bob], base + timedelta(days=2))
    settle(other)
    call_command("verify_hands", "--table", str(other.pk))
    assert "Verified 1 hand(s)" in capsys.readouterr().out
    call_command("verify_hands", "--since", (base + timedelta(days=1)).date().isoformat())
    assert "Verified 1 hand(s)" in capsys.readouterr().out
    call_command("verify_hands", "--since", (base - timedelta(days=1)).date().isoformat())
    assert "Verified 2 hand(s)" in capsys.readouterr().out
    with pytest.raises(CommandError):
        call_command("verify_hands", "--since", "yesterday")
