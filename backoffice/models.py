"""What the back office records of its own: each player's play pattern, for the review of
automated play (seed 001, Notes 4: bots are forbidden; docs/platform.md, "Automated play")."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PlayPattern(models.Model):
    """A player's figures over the review window (``PLAY_REVIEW_DAYS`` up to
    ``computed_at``), recomputed by ``backoffice.services.record_play_patterns`` from what
    the hands already store (nothing is written while a player plays).

    Reaction times are in milliseconds, from the moment a decision became possible (a
    WiderPoker hand dealt; a Hold'em turn started) to the action; ``reaction_buckets``
    counts them per ``automation.REACTION_BUCKETS_MS`` interval. ``actions`` per
    ``play_seconds`` gives actions per hour; sessions are the player protection's
    (wallet.PlaySession: a break of ``SESSION_BREAK_MINUTES`` ends one). ``socket_tables`` /
    ``rest_tables``: the tables he was seen at in the window with a game socket open (the
    game screen) or without any (REST calls only). ``api_logins`` and ``browser_logins``:
    successful logins by door (an API token issued, the site or admin form). ``flags``: the
    heuristics that matched (``automation.FLAGS`` codes)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="play_pattern"
    )
    window_start = models.DateTimeField()
    computed_at = models.DateTimeField()
    hands = models.PositiveIntegerField(default=0)
    actions = models.PositiveIntegerField(default=0)
    decisions = models.PositiveIntegerField(default=0, help_text="Actions whose reaction time is known.")
    reaction_median_ms = models.PositiveIntegerField(null=True, blank=True)
    reaction_p10_ms = models.PositiveIntegerField(null=True, blank=True)
    reaction_stdev_ms = models.PositiveIntegerField(null=True, blank=True)
    reaction_mean_ms = models.PositiveIntegerField(null=True, blank=True)
    reaction_buckets = models.JSONField(default=list, blank=True)
    sessions = models.PositiveIntegerField(default=0)
    play_seconds = models.PositiveIntegerField(default=0)
    longest_session_seconds = models.PositiveIntegerField(default=0)
    socket_tables = models.PositiveIntegerField(default=0, help_text="Tables played with a game socket open.")
    rest_tables = models.PositiveIntegerField(default=0, help_text="Tables played without any game socket.")
    api_logins = models.PositiveIntegerField(default=0)
    browser_logins = models.PositiveIntegerField(default=0)
    has_api_token = models.BooleanField(default=False)
    flags = models.JSONField(default=list, blank=True)
    flagged = models.BooleanField(default=False, db_index=True)

    class Meta:
        ordering = ["-flagged", "reaction_median_ms"]
        verbose_name = "play pattern (automated play review)"
        verbose_name_plural = "play patterns (automated play review)"

    def __str__(self) -> str:
        return f"play pattern of {self.user}"


class PlayerDay(models.Model):
    """One player's play on one day (UTC, by the hand's start) as sums that add up
    (``automation.ReactionTally``): hands, actions, and reaction times (how many, their sum
    and sum of squares in milliseconds, counts per ``automation.FINE_BOUNDS_MS`` interval).
    ``record_play_patterns`` adds each finished hand once and reads the review window's
    days; days older than the window are deleted."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    hands = models.PositiveIntegerField(default=0)
    actions = models.PositiveIntegerField(default=0)
    reaction_count = models.PositiveIntegerField(default=0)
    reaction_total_ms = models.FloatField(default=0.0)
    reaction_total_sq = models.FloatField(default=0.0)
    reaction_counts = models.JSONField(default=list)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "day"], name="player_day_once")]
        indexes = [models.Index(fields=["day"], name="player_day_day")]

    def __str__(self) -> str:
        return f"play of user {self.user_id} on {self.day}"


class PlayReviewMark(models.Model):
    """How far ``record_play_patterns`` has read: every hand finished (``settled_at``) up to
    ``until`` is in the ``PlayerDay`` rows, and none after. One row (``pk`` 1), locked by
    each run, so two runs (two beats) never add a hand twice."""

    until = models.DateTimeField()

    def __str__(self) -> str:
        return f"hands read up to {self.until:%Y-%m-%d %H:%M:%S}"
