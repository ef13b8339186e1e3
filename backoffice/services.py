"""The back office's writes: the players' play patterns for the review of automated play,
and suspending or reinstating an account from that review (seed 001, Notes 4)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Final

from axes.models import AccessLog
from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token

from backoffice.automation import PlayFigures, ReactionTally, automation_flags
from backoffice.models import PlayerDay, PlayPattern, PlayReviewMark
from lobby.services import EndedSessions, end_player_sessions
from tables.models import Entry, Hand, HandStatus, HoldemHand, HoldemHandPlayer, HoldemHandStatus, Seat
from wallet import protection
from wallet.models import PlaySession

PLAY_REVIEW_DAYS: Final = 7
"""The review window: the figures cover the hands started in the last seven days."""

LAST_HAND_SECONDS: Final = 60
"""Play time counted for a session's last hand (a session runs from its first hand dealt to
its last one dealt: a one-hand session would otherwise last 0 s)."""


READ_MARGIN: Final = timedelta(minutes=1)
"""Hands finished in the last minute wait for the next run: a hand is stamped
``settled_at`` before its transaction commits, so a run never reads up to the very present."""

Key = tuple[int, date]
"""(player id, day of the hand's start, UTC)."""


class _DayTally:
    """What one run adds to one ``PlayerDay``."""

    __slots__ = ("actions", "hands", "times")

    def __init__(self) -> None:
        self.hands = 0
        self.actions = 0
        self.times: list[float] = []


def _widerpoker(since: datetime, until: datetime, days: dict[Key, _DayTally]) -> None:
    """WiderPoker hands finished in (``since``, ``until``]: one reaction per entry whose
    hold was received (``hold_at`` - the deal, ``Hand.started_at``: the change phase opens
    when the hand is dealt); actions: the hold, each draw bought beyond the first (included
    in the ante) and each redeal."""
    hands = Hand.objects.filter(settled_at__gt=since, settled_at__lte=until).exclude(status=HandStatus.CHANGE)
    started = dict(hands.values_list("id", "started_at"))
    if not started:
        return
    rows = (
        Entry.objects.filter(hand_id__gte=min(started), hand_id__lte=max(started), hand_id__in=list(started))
        .values_list("user_id", "hand_id", "hold_at", "draws_bought", "redeals")
        .iterator(chunk_size=5000)
    )
    for user_id, hand_id, hold_at, draws_bought, redeals in rows:
        start = started[hand_id]
        tally = days.setdefault((user_id, start.date()), _DayTally())
        tally.hands += 1
        tally.actions += max(0, draws_bought - 1) + len(redeals or ())
        if hold_at is not None:
            tally.actions += 1
            tally.times.append((hold_at - start).total_seconds() * 1000)


def _holdem(since: datetime, until: datetime, days: dict[Key, _DayTally]) -> None:
    """Hold'em hands finished in (``since``, ``until``]: one reaction per action a person
    took (not the clock's timeout actions, not the house bots'): its time - the start of his
    turn, i.e. the previous action's time, or the hand's start for the first."""
    hands = HoldemHand.objects.filter(settled_at__gt=since, settled_at__lte=until).exclude(
        status=HoldemHandStatus.PLAYING
    )
    seats: dict[int, dict[int, int]] = defaultdict(dict)
    players = HoldemHandPlayer.objects.filter(is_bot=False, hand__in=hands)
    for hand_id, seat, user_id in players.values_list("hand_id", "seat", "user_id").iterator(chunk_size=5000):
        seats[hand_id][seat] = user_id
    if not seats:
        return
    logs = hands.filter(pk__in=list(seats)).values_list("id", "started_at", "actions")
    for hand_id, started_at, log in logs.iterator(chunk_size=1000):
        for user_id in seats[hand_id].values():
            days.setdefault((user_id, started_at.date()), _DayTally()).hands += 1
        turn_started = started_at
        for action in log or ():
            at = datetime.fromisoformat(action["at"])
            person = seats[hand_id].get(action.get("seat", -1))
            if person is not None and not action.get("timeout"):
                tally = days[(person, started_at.date())]
                tally.actions += 1
                tally.times.append((at - turn_started).total_seconds() * 1000)
            turn_started = at


def _add_days(days: dict[Key, _DayTally]) -> None:
    """Add this run's tallies to the ``PlayerDay`` rows (created where missing)."""
    if not days:
        return
    users = {user_id for user_id, _ in days}
    stored = {
        (row.user_id, row.day): row
        for row in PlayerDay.objects.filter(user_id__in=list(users), day__in={day for _, day in days})
    }
    new, changed = [], []
    for (user_id, day), tally in days.items():
        row = stored.get((user_id, day))
        if row is None:
            row = PlayerDay(user_id=user_id, day=day, reaction_counts=list(ReactionTally.empty().counts))
            new.append(row)
        else:
            changed.append(row)
        total = _tally_of(row) + ReactionTally.of(tally.times)
        row.hands += tally.hands
        row.actions += tally.actions
        row.reaction_count, row.reaction_total_ms, row.reaction_total_sq = total.count, total.total_ms, total.total_sq
        row.reaction_counts = list(total.counts)
    PlayerDay.objects.bulk_create(new, batch_size=2000)
    fields = ["hands", "actions", "reaction_count", "reaction_total_ms", "reaction_total_sq", "reaction_counts"]
    PlayerDay.objects.bulk_update(changed, fields, batch_size=2000)


def _tally_of(row: PlayerDay) -> ReactionTally:
    counts = tuple(row.reaction_counts) or ReactionTally.empty().counts
    return ReactionTally(row.reaction_count, row.reaction_total_ms, row.reaction_total_sq, counts)


def _sessions(since: datetime, user_ids: Iterable[int]) -> dict[int, tuple[int, int, int]]:
    """Per player: (sessions, seconds of play in the window, longest session in seconds)
    from the player protection's play sessions (wallet.PlaySession: a break of
    ``SESSION_BREAK_MINUTES`` ends one)."""
    figures: dict[int, tuple[int, int, int]] = {}
    rows = PlaySession.objects.filter(user_id__in=list(user_ids), last_play_at__gte=since)
    for user_id, started_at, last_play_at in rows.values_list("user_id", "started_at", "last_play_at"):
        played = int((last_play_at - max(started_at, since)).total_seconds()) + LAST_HAND_SECONDS
        length = int((last_play_at - started_at).total_seconds())
        count, total, longest = figures.get(user_id, (0, 0, 0))
        figures[user_id] = (count + 1, total + played, max(longest, length))
    return figures


def _doors_at_tables(since: datetime, user_ids: Iterable[int]) -> dict[int, tuple[int, int]]:
    """Per player: (tables seen at since ``since`` with a game socket open in the window,
    tables seen at without any), from the seats' presence (a seat counts its open game
    sockets and stamps when the last one closed: tables.models.Seat)."""
    doors: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    seats = Seat.objects.filter(user_id__in=list(user_ids), is_bot=False, last_seen_at__gte=since)
    for user_id, sockets, closed_at in seats.values_list("user_id", "ws_connections", "socket_closed_at"):
        with_socket = sockets > 0 or (closed_at is not None and closed_at >= since)
        doors[user_id][0 if with_socket else 1] += 1
    return {user_id: (socket, rest) for user_id, (socket, rest) in doors.items()}


def _logins(since: datetime) -> dict[str, tuple[int, int]]:
    """Per username: (logins through the API token endpoint, logins through the site's or
    the admin's form) since ``since``, from django-axes' access log of successful logins."""
    doors: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for username, path in AccessLog.objects.filter(attempt_time__gte=since).values_list("username", "path_info"):
        doors[username][0 if str(path).startswith("/api/") else 1] += 1
    return {name: (api, browser) for name, (api, browser) in doors.items()}


@transaction.atomic(durable=True)
def record_play_patterns(*, now: datetime, days: int = PLAY_REVIEW_DAYS) -> int:
    """Add the hands finished since the last run to the players' days (``PlayerDay``), then
    recompute the ``PlayPattern`` of every player who played in the ``days`` before ``now``
    from his days, his play sessions, his seats' socket presence, the login log and his API
    token. Reads only what is stored, each finished hand once (``PlayReviewMark``, locked:
    two runs at once add nothing twice); nothing is counted while a player plays. Called by
    beat every hour (``backoffice.tasks.record_play_patterns``). Returns the number of
    players recorded."""
    since = now - timedelta(days=days)
    PlayReviewMark.objects.get_or_create(pk=1, defaults={"until": since})
    mark = PlayReviewMark.objects.select_for_update().get(pk=1)
    until = now - READ_MARGIN
    if until > mark.until:
        tallies: dict[Key, _DayTally] = {}
        _widerpoker(max(mark.until, since), until, tallies)
        _holdem(max(mark.until, since), until, tallies)
        _add_days(tallies)
        mark.until = until
        mark.save(update_fields=["until"])
    PlayerDay.objects.filter(day__lt=since.date()).delete()
    merged: dict[int, tuple[int, int, ReactionTally]] = {}
    for row in PlayerDay.objects.filter(day__gte=since.date()):
        hands, actions, tally = merged.get(row.user_id, (0, 0, ReactionTally.empty()))
        merged[row.user_id] = (hands + row.hands, actions + row.actions, tally + _tally_of(row))
    sessions = _sessions(since, merged)
    tables = _doors_at_tables(since, merged)
    logins = _logins(since)
    names = dict(get_user_model().objects.filter(pk__in=list(merged)).values_list("pk", "username"))
    tokens = set(Token.objects.filter(user_id__in=list(merged)).values_list("user_id", flat=True))
    rows = []
    for user_id, (count, actions, tally) in merged.items():
        summary = tally.summary()
        session_count, play_seconds, longest = sessions.get(user_id, (0, 0, 0))
        api, browser = logins.get(names.get(user_id, ""), (0, 0))
        socket_tables, rest_tables = tables.get(user_id, (0, 0))
        figures = PlayFigures(
            reactions=summary,
            hands=count,
            actions=actions,
            play_seconds=play_seconds,
            longest_session_seconds=longest,
            socket_tables=socket_tables,
            rest_tables=rest_tables,
            api_logins=api,
            browser_logins=browser,
            has_api_token=user_id in tokens,
        )
        flags = automation_flags(figures)
        rows.append(
            PlayPattern(
                user_id=user_id,
                window_start=since,
                computed_at=now,
                hands=count,
                actions=actions,
                decisions=summary.count,
                reaction_median_ms=summary.median_ms,
                reaction_p10_ms=summary.p10_ms,
                reaction_mean_ms=summary.mean_ms,
                reaction_stdev_ms=summary.stdev_ms,
                reaction_buckets=list(summary.buckets),
                sessions=session_count,
                play_seconds=play_seconds,
                longest_session_seconds=longest,
                socket_tables=socket_tables,
                rest_tables=rest_tables,
                api_logins=api,
                browser_logins=browser,
                has_api_token=figures.has_api_token,
                flags=flags,
                flagged=bool(flags),
            )
        )
    PlayPattern.objects.all().delete()
    PlayPattern.objects.bulk_create(rows, batch_size=2000)
    return len(rows)


def suspend_account(*, user_id: int, reason: str, staff_user_id: int, now: datetime) -> EndedSessions:
    """Staff suspend a player's account with a reason (seed 001, Notes 4; audit-logged in
    the player protection log, wallet.ProtectionLog: who, when, why), then log him out
    everywhere: his sessions and API tokens end, his seats are left
    (lobby.services.end_player_sessions). Raises InvalidLimitError (code ``invalid_limit``)
    without a reason; a suspended account stays suspended (the first reason stands)."""
    protection.suspend_player(user_id=user_id, reason=reason, staff_user_id=staff_user_id, now=now)
    return end_player_sessions(user_id=user_id, reason="This account is suspended: contact support.", now=now)


def reinstate_account(*, user_id: int, reason: str, staff_user_id: int, now: datetime) -> bool:
    """Staff lift the player's suspension with a reason (audit-logged as above). Returns
    whether one was in force. Raises InvalidLimitError (code ``invalid_limit``) without a
    reason."""
    return protection.lift_suspension(user_id=user_id, reason=reason, staff_user_id=staff_user_id, now=now) is not None
