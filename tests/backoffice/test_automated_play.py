"""The review of automated play (seed 001, Notes 4: bots are forbidden and their users
suspended). Until now suspension existed but nothing helped staff find a bot, and only a
superuser could suspend: croupiers and auditors got 403 (security audit 2026-11-26,
attack 10). The figures come from what the hands store (backoffice.services), the
heuristics are backoffice/automation.py, the review is an admin list where a Croupier
suspends or reinstates with a reason, audited; an Auditor reads it and cannot."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from backoffice.automation import PlayFigures, automation_flags, summarise_reactions
from backoffice.models import PlayPattern
from backoffice.services import record_play_patterns as record_patterns
from backoffice.tasks import record_play_patterns
from tables.clock import advance_table
from tables.holdem.records import replay
from tables.holdem.services.player import act_in_hand, take_seat
from tables.models import HoldemHand, Table
from tables.services.seating import touch_presence
from tables.widerpoker.services.play import set_hold
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal, logged_in, seat_players, settle
from tests.tables.holdem_helpers import holdem_table, tick
from tests.tables.test_bad_input import socket_codes
from wallet.models import ProtectionLog, Suspension

PASSWORD = "correct horse battery"
BOT_HOLD = [True, True, False, False, True]


def staff_member(username: str, group: str) -> User:
    """A staff user in one of the groups ``create_staff_groups`` makes (not a superuser)."""
    call_command("create_staff_groups", verbosity=0)
    user = User.objects.create_user(username=username, password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return user


def admin_login(user: User) -> Client:
    """A client logged in through the admin's login form."""
    client = Client()
    response = client.post("/admin/login/?next=/admin/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302, response.content[:300]
    return client


def play(table: Table, robo: User, bob: User, *, hands: int, start: datetime) -> None:
    """``hands`` hands back to back: robo sets his hold 150-170 ms after each deal, bob
    after 1.5 to 12 seconds, as people do; bob has the game screen open (a game socket)."""
    seat_players(table, [robo, bob], start)
    assert socket_codes(bob, table, ['{"type": "ping"}']) == ["ok"]
    hand = deal(table, start)
    for number in range(hands):
        set_hold(
            table_id=table.pk,
            user_id=robo.pk,
            hold=BOT_HOLD,
            now=hand.started_at + timedelta(milliseconds=150 + number % 3 * 10),
        )
        set_hold(
            table_id=table.pk,
            user_id=bob.pk,
            hold=[True, False, False, False, False],
            now=hand.started_at + timedelta(milliseconds=1500 + (number * 3700) % 10500),
        )
        settle(table)
        if number == hands - 1:
            return
        table.refresh_from_db()
        at = table.phase_deadline
        assert at is not None
        for user in (robo, bob):
            touch_presence(table_id=table.pk, user_id=user.pk, now=at)
        assert advance_table(table_id=table.pk, now=at)
        table.refresh_from_db()
        assert table.current_hand is not None
        hand = table.current_hand


@pytest.mark.django_db(transaction=True)
def test_a_croupier_finds_the_bot_suspends_it_with_a_reason_and_its_token_and_session_are_refused() -> None:
    robo, bob = make_player("robo"), make_player("bob")
    token = APIClient().post("/api/auth/token/", {"username": "robo", "password": PASSWORD}, format="json")
    assert token.status_code == 200
    key = token.json()["token"]
    # bob has a token too (an API client of his own), but plays on the game screen
    bobs = APIClient().post("/api/auth/token/", {"username": "bob", "password": PASSWORD}, format="json")
    assert bobs.status_code == 200
    play(create_fun_table(), robo, bob, hands=20, start=timezone.now() - timedelta(hours=1))
    with CaptureQueriesContext(connection) as queries:
        record_play_patterns.delay()
    assert len(queries) <= 30  # a fixed number of reads and writes, whatever the hands (22 here)

    record_play_patterns.delay()  # a second run (or a second beat) adds no hand twice
    pattern = PlayPattern.objects.get(user=robo)
    assert pattern.flags == ["superhuman_reactions", "regular_reactions", "api_only"]
    assert (pattern.hands, pattern.decisions, pattern.actions) == (20, 20, 20)
    assert 150 <= (pattern.reaction_median_ms or 0) < 200 and pattern.reaction_mean_ms == 160
    human = PlayPattern.objects.get(user=bob)
    assert (human.flags, human.has_api_token, human.socket_tables) == ([], True, 1)
    assert (pattern.socket_tables, pattern.rest_tables, pattern.api_logins) == (0, 1, 1)

    session = logged_in(robo)  # the bot's browser session too (after the figures: not a login of the window)
    assert session.get("/api/wallet/").status_code == 200

    auditor = admin_login(staff_member("audrey", "Auditors"))
    page = auditor.get("/admin/backoffice/playpattern/?flagged__exact=1")
    assert page.status_code == 200
    text = page.content.decode()
    median = f"{(pattern.reaction_median_ms or 0) / 1000:.2f} s"
    assert "robo" in text and "superhuman reactions" in text and median in text
    assert ">bob<" not in text
    assert "suspend_players" not in text  # no such action offered
    refused = auditor.post(
        "/admin/backoffice/playpattern/",
        {"action": "suspend_players", "_selected_action": [robo.pk], "apply": "yes", "reason": "bot"},
    )
    assert refused.status_code in (200, 302)
    assert (
        auditor.post(
            "/admin/wallet/suspension/add/", {"username": "robo", "action": "suspend", "reason": "x"}
        ).status_code
        == 403
    )
    assert not Suspension.objects.exists()

    cris = staff_member("cris", "Croupiers")
    croupier = admin_login(cris)
    listing = croupier.get("/admin/backoffice/playpattern/?flagged__exact=1").content.decode()
    assert "robo" in listing and "suspend_players" in listing
    form = {"action": "suspend_players", "_selected_action": [robo.pk]}
    asked = croupier.post("/admin/backoffice/playpattern/", form)
    assert asked.status_code == 200 and "Reason" in asked.content.decode()
    blank = croupier.post("/admin/backoffice/playpattern/", {**form, "apply": "yes", "reason": "  "})
    assert blank.status_code == 200 and "A reason is required" in blank.content.decode()
    assert not Suspension.objects.exists()
    reason = "holds 0.16 s after every deal, API only"
    done = croupier.post("/admin/backoffice/playpattern/", {**form, "apply": "yes", "reason": reason})
    assert done.status_code == 302

    suspension = Suspension.objects.get(user=robo, lifted_at__isnull=True)
    assert (suspension.suspended_by_id, suspension.reason) == (cris.pk, reason)
    log = ProtectionLog.objects.get(user=robo, action="suspended")
    assert (log.actor_id, log.detail) == (cris.pk, reason) and log.created_at is not None
    assert LogEntry.objects.filter(user=cris, object_id=str(robo.pk), change_message__contains=reason).exists()
    by_token = APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/wallet/")
    assert (by_token.status_code, by_token.json()["code"]) == (403, "authentication_failed")  # the token is gone
    by_session = session.get("/api/wallet/")
    assert (by_session.status_code, by_session.json()["code"]) == (403, "not_authenticated")  # the session too
    again = APIClient().post("/api/auth/token/", {"username": "robo", "password": PASSWORD}, format="json")
    assert (again.status_code, again.json()["code"]) == (403, "suspended")
    assert bob.pk not in set(Suspension.objects.values_list("user_id", flat=True))

    back = croupier.post(
        "/admin/backoffice/playpattern/",
        {"action": "reinstate_players", "_selected_action": [robo.pk], "apply": "yes", "reason": "owner explained"},
    )
    assert back.status_code == 302
    assert not Suspension.objects.filter(user=robo, lifted_at__isnull=True).exists()
    assert ProtectionLog.objects.filter(user=robo, action="unsuspended", actor=cris).exists()


@pytest.mark.django_db(transaction=True)
def test_a_croupier_may_use_the_suspension_form_too() -> None:
    robo = make_player("robo")
    cris = staff_member("cris", "Croupiers")
    answer = admin_login(cris).post(
        "/admin/wallet/suspension/add/", {"username": "robo", "action": "suspend", "reason": "bot seen by support"}
    )
    assert answer.status_code == 302
    assert Suspension.objects.get(user=robo).suspended_by_id == cris.pk
    assert LogEntry.objects.filter(user=cris, object_id=str(robo.pk)).exists()


def figures(times_ms: Sequence[float], **overrides: object) -> PlayFigures:
    values: dict[str, object] = {
        "reactions": summarise_reactions(times_ms),
        "hands": 40,
        "actions": 60,
        "play_seconds": 3600,
        "longest_session_seconds": 3600,
        "socket_tables": 1,
        "rest_tables": 0,
        "api_logins": 0,
        "browser_logins": 1,
        "has_api_token": False,
        **overrides,
    }
    return PlayFigures(**values)  # type: ignore[arg-type]  # test values of the right types


def test_people_are_not_flagged_and_each_sign_is_named() -> None:
    human = [900 + (n * 1337) % 9000 for n in range(40)]
    assert automation_flags(figures(human)) == []
    assert automation_flags(figures([120.0] * 40)) == ["superhuman_reactions", "regular_reactions"]
    assert automation_flags(figures([2000 + n % 5 * 50 for n in range(40)])) == ["regular_reactions"]
    assert automation_flags(figures([120.0] * 19)) == []  # too few decisions to say
    assert automation_flags(figures(human, longest_session_seconds=9 * 3600)) == ["long_sessions"]
    assert automation_flags(figures(human, actions=2000)) == ["tireless_pace"]
    assert automation_flags(figures(human, api_logins=2, socket_tables=0, rest_tables=2)) == ["api_only"]
    assert automation_flags(figures(human, has_api_token=True, socket_tables=0, rest_tables=1)) == ["api_only"]
    assert automation_flags(figures(human, has_api_token=True, rest_tables=1)) == []  # the game screen too
    assert automation_flags(figures(human, socket_tables=0, rest_tables=1)) == []  # no token: nothing says API


@pytest.mark.django_db(transaction=True)
def test_holdem_reactions_run_from_the_start_of_each_turn(alice: User, bob: User) -> None:
    table = holdem_table()
    start = timezone.now() - timedelta(minutes=10)
    take_seat(table_id=table.pk, user_id=alice.pk, position=0, buy_in_minor=1_000, now=start)
    take_seat(table_id=table.pk, user_id=bob.pk, position=3, buy_in_minor=1_000, now=start)
    assert tick(table, start)
    hand = HoldemHand.objects.get(table=table)
    to_act = replay(hand).to_act
    assert to_act is not None
    first = {0: alice, 3: bob}[to_act]
    second = bob if first == alice else alice
    raised_at = hand.started_at + timedelta(milliseconds=250)
    act_in_hand(table_id=table.pk, user_id=first.pk, kind="raise", amount=100, now=raised_at)
    act_in_hand(table_id=table.pk, user_id=second.pk, kind="fold", now=raised_at + timedelta(milliseconds=1200))
    assert record_patterns(now=timezone.now()) == 2
    patterns = {p.user_id: p for p in PlayPattern.objects.all()}
    assert (patterns[first.pk].reaction_mean_ms, patterns[second.pk].reaction_mean_ms) == (250, 1200)
    assert 250 <= (patterns[first.pk].reaction_median_ms or 0) < 300
    assert patterns[first.pk].hands == patterns[second.pk].hands == 1
    assert patterns[first.pk].actions == patterns[second.pk].actions == 1
