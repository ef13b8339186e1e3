"""verify_hands re-checks Hold'em hands (security audit 2026-11-26, M4 and its Info line):
the action log replayed through the engine (also for the hands PHH cannot express, a
timed-out all-in: they are counted), the PHH text, the players' rows, the recorded results
(stacks at start - chips put in + won = stacks at end) and the rake the ledger moved."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db.models import F
from django.utils import timezone

from handhistory.management.commands.verify_hands import report_digest
from tables.holdem.services import take_seat
from tables.models import HoldemHand, HoldemHandPlayer, HoldemHandStatus, Table
from tests.helpers import behind_the_apps_back
from tests.tables.holdem_helpers import holdem_table, play_hand_out, run_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(alice: User, bob: User) -> tuple[Table, HoldemHand, HoldemHand]:
    """Two hands of alice and bob: the first times out (the small blind, who has chips in,
    goes all-in on the clock: no PHH), the second is played out to a raked showdown."""
    now = timezone.now()
    table = holdem_table("Verified Rail")
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=now)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=now)
    later: datetime = run_until(table, now, hands=1)
    timed_out = HoldemHand.objects.get(table=table, number=1)
    table.refresh_from_db()
    assert table.phase_deadline is not None
    played = play_hand_out(table, {0: alice, 3: bob}, max(later, table.phase_deadline))
    return table, timed_out, played


def run(*args: str) -> tuple[int, str]:
    try:
        call_command("verify_hands", *args)
    except CommandError as error:
        return error.returncode, str(error)
    return 0, ""


def test_honest_hold_em_hands_verify_and_those_without_phh_are_counted(
    played: tuple[Table, HoldemHand, HoldemHand], capsys: pytest.CaptureFixture[str]
) -> None:
    from handhistory.holdem_verification import verify_holdem_hand_records

    _, timed_out, raked = played
    assert any(action["kind"] == "timeout_all_in" for action in timed_out.actions)
    assert timed_out.status == HoldemHandStatus.SETTLED and not timed_out.phh and timed_out.phh_error
    assert raked.phh and raked.rake_minor > 0
    for hand in (timed_out, raked):
        report = verify_holdem_hand_records(hand)
        assert report.ok, report.mismatches
    assert not verify_holdem_hand_records(timed_out).phh_checked
    names = {check.name for check in verify_holdem_hand_records(raked).checks}
    assert "PHH replays to the finishing stacks" in names
    assert "the ledger moved the rake, and only it, from the escrow" in names
    assert run() == (0, "")
    out = capsys.readouterr().out
    assert "Verified 2 Hold'em hand(s): 2 ok, 0 with mismatches; 1 settled with no PHH text" in out


@pytest.mark.parametrize(
    "tamper, check",
    [
        (
            lambda hand: HoldemHandPlayer.objects.filter(hand=hand, seat=0).update(
                finishing_minor=F("finishing_minor") + 100
            ),
            "players' rows",
        ),
        (
            lambda hand: HoldemHand.objects.filter(pk=hand.pk).update(
                results={**hand.results, "won": {seat: won + 100 for seat, won in hand.results["won"].items()}}
            ),
            "recorded winnings",
        ),
        (
            lambda hand: HoldemHand.objects.filter(pk=hand.pk).update(
                results={
                    **hand.results,
                    "starting_stacks": {s: v + 50 for s, v in hand.results["starting_stacks"].items()},
                }
            ),
            "stacks at start",
        ),
        (lambda hand: HoldemHand.objects.filter(pk=hand.pk).update(pot_minor=F("pot_minor") + 10), "pot ="),
        (lambda hand: HoldemHand.objects.filter(pk=hand.pk).update(rake_minor=0), "the ledger moved the rake"),
        (lambda hand: HoldemHand.objects.filter(pk=hand.pk).update(phh="", phh_error=""), "a PHH text"),
    ],
)
def test_verify_hands_names_a_tampered_hold_em_hand(
    played: tuple[Table, HoldemHand, HoldemHand],
    tamper: object,
    check: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    table, _, raked = played
    assert callable(tamper)
    with behind_the_apps_back():
        tamper(raked)
    status, summary = run("--table", str(table.pk))
    assert status == 1
    assert "Verified 2 Hold'em hand(s): 1 ok, 1 with mismatches" in summary
    out = capsys.readouterr().out
    assert f"Hold'em hand {raked.pk} (Verified Rail #{raked.number})" in out
    assert check in out


def test_a_timed_out_hand_s_log_is_still_replayed(
    played: tuple[Table, HoldemHand, HoldemHand], capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand with no PHH is not a hand left unchecked: its stored log goes through the
    engine, so a changed action is caught."""
    table, timed_out, _ = played
    actions = [dict(action) for action in timed_out.actions]
    actions[-1]["kind"] = "fold" if actions[-1]["kind"] != "fold" else "check"
    with behind_the_apps_back():
        HoldemHand.objects.filter(pk=timed_out.pk).update(actions=actions)
    status, _ = run("--table", str(table.pk))
    assert status == 1
    assert f"Hold'em hand {timed_out.pk}" in capsys.readouterr().out


def test_the_report_lists_the_hold_em_hands_with_their_counts(
    played: tuple[Table, HoldemHand, HoldemHand], tmp_path: Path
) -> None:
    _, timed_out, raked = played
    path = tmp_path / "report.json"
    call_command("verify_hands", "--report", str(path))
    report = json.loads(path.read_text())
    assert report["holdem_summary"] == {"checked": 2, "ok": 2, "failed": 0, "without_phh": 1}
    lines = {line["hand_id"]: line for line in report["holdem_hands"]}
    assert lines[timed_out.pk]["phh_checked"] is False and lines[raked.pk]["phh_checked"] is True
    assert lines[raked.pk]["rake_minor"] == raked.rake_minor and lines[raked.pk]["ok"] is True
    body = {k: v for k, v in report.items() if k not in {"generated_at", "digest"}}
    assert report["digest"] == report_digest(body)
