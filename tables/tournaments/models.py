"""A tournament, its entrants and the standings after each of its hands (docs/tournaments.md)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from tables.models.house import Table, TableMode
from tables.models.widerpoker import Hand
from wallet.models import Currency, FundsHold, chip_currency


class TournamentState(models.TextChoices):
    SCHEDULED = "scheduled", _("Scheduled")
    REGISTERING = "registering", _("Registering")
    RUNNING = "running", _("Running")
    FINISHED = "finished", _("Finished")
    CANCELLED = "cancelled", _("Cancelled")


OPEN_STATES = (TournamentState.SCHEDULED, TournamentState.REGISTERING, TournamentState.RUNNING)


CONDITION_FIELDS = (
    "mode",
    "currency",
    "buy_in_minor",
    "fee_minor",
    "guaranteed_minor",
    "starting_chips_minor",
    "hands",
    "duration_minutes",
    "change_seconds",
    "results_seconds",
    "antes",
    "draw_price_bps",
    "max_draws",
    "redeal_price_minor",
    "max_redeals",
    "redeal_seconds",
    "hand_paid_fraction_bps",
    "paid_fraction_bps",
    "min_prize_minor",
    "min_entrants",
    "max_entrants",
    "late_registration_hands",
    "max_reentries",
)
"""A tournament's conditions as staff schedule them and auditors read them, in this order
(``Tournament.describe``, ``services.SCHEDULE_FIELDS``)."""


class Tournament(models.Model):
    """A WiderPoker tournament. Money (``buy_in_minor``, ``fee_minor``, ``guaranteed_minor``)
    is in minor units of ``currency`` (EUR for cash, FUN for fun); chips (starting chips,
    antes, redeal price) are hundredths of a chip of the tournament's own currency
    ``T<id>`` (``chip_currency``). ``antes`` is the schedule of levels, a list of
    ``{"from_hand": n, "ante_minor": a}`` sorted by ``from_hand``, the first from hand 1."""

    name = models.CharField(max_length=80)
    starts_at = models.DateTimeField()
    registration_opens_at = models.DateTimeField(null=True, blank=True, help_text="Empty: registration opens now.")
    mode = models.CharField(max_length=8, choices=TableMode.choices, default=TableMode.FUN)
    currency = models.CharField(max_length=3, choices=Currency.choices, default=Currency.FUN)
    buy_in_minor = models.BigIntegerField(default=0, help_text="Into the prize pool; 0: free entry.")
    fee_minor = models.BigIntegerField(default=0, help_text="The house's fee, on top of the buy-in.")
    guaranteed_minor = models.BigIntegerField(
        default=0, help_text="Smallest prize pool; the house promotions account pays what the buy-ins miss."
    )
    starting_chips_minor = models.BigIntegerField(default=150_000, help_text="Chips each entry starts with.")
    hands = models.PositiveIntegerField(null=True, blank=True, help_text="Hands played (or a duration).")
    duration_minutes = models.PositiveIntegerField(null=True, blank=True, help_text="No hand starts after this.")
    change_seconds = models.PositiveIntegerField(default=30, help_text="Length of each hand's change phase.")
    results_seconds = models.PositiveIntegerField(default=10, help_text="Standings on screen between hands.")
    antes = models.JSONField(default=list, help_text='[{"from_hand": 1, "ante_minor": 1000}, ...]')
    draw_price_bps = models.PositiveIntegerField(default=10_000, help_text="Each extra draw, in ante x bps/10000.")
    max_draws = models.PositiveSmallIntegerField(default=5)
    redeal_price_minor = models.BigIntegerField(default=1000, help_text="In chips.")
    max_redeals = models.PositiveSmallIntegerField(default=2)
    redeal_seconds = models.PositiveIntegerField(default=20)
    hand_paid_fraction_bps = models.PositiveIntegerField(
        default=1500, help_text="Share of a hand's entries paid from its chip pool."
    )
    paid_fraction_bps = models.PositiveIntegerField(default=1500, help_text="Share of entries paid at the end.")
    min_prize_minor = models.BigIntegerField(default=0, help_text="Smallest prize of a paid place at the end.")
    min_entrants = models.PositiveIntegerField(default=2)
    max_entrants = models.PositiveIntegerField(default=100_000)
    late_registration_hands = models.PositiveIntegerField(
        default=0, help_text="Registration and re-entry stay open until this hand has been dealt (0: until the start)."
    )
    max_reentries = models.PositiveSmallIntegerField(default=0)
    state = models.CharField(max_length=12, choices=TournamentState.choices, default=TournamentState.REGISTERING)
    table = models.OneToOneField(Table, null=True, blank=True, on_delete=models.PROTECT, related_name="tournament")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    cancel_reason = models.CharField(max_length=200, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    prize_pool_minor = models.BigIntegerField(default=0, help_text="Buy-ins captured plus the guarantee's top-up.")
    hands_played = models.PositiveIntegerField(default=0)
    results = models.JSONField(default=dict, blank=True, help_text="Places and prizes at the end.")

    class Meta:
        ordering = ["starts_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(buy_in_minor__gte=0, fee_minor__gte=0, guaranteed_minor__gte=0, min_prize_minor__gte=0),
                name="tournament_money_non_negative",
            ),
            models.CheckConstraint(condition=Q(starting_chips_minor__gt=0), name="tournament_chips_positive"),
            models.CheckConstraint(
                condition=Q(hands__isnull=False) | Q(duration_minutes__isnull=False), name="tournament_has_an_end"
            ),
            models.CheckConstraint(
                condition=(Q(mode="fun", currency="FUN") | (Q(mode="cash") & ~Q(currency="FUN"))),
                name="tournament_mode_matches_currency",
            ),
        ]
        indexes = [models.Index(fields=["state", "starts_at"], name="tournament_state_start")]

    def __str__(self) -> str:
        return self.name

    @property
    def chips(self) -> str:
        """The currency code of this tournament's chips (``T<id>``)."""
        return chip_currency(self.pk)

    @property
    def entry_price_minor(self) -> int:
        """What an entry costs the player: buy-in plus fee, minor units of ``currency``."""
        return self.buy_in_minor + self.fee_minor

    def ante_for(self, number: int) -> int:
        """The ante of hand ``number`` (1-based), in chips' minor units, from ``antes``."""
        ante = 0
        for level in sorted(self.antes, key=lambda item: int(item["from_hand"])):
            if int(level["from_hand"]) <= number:
                ante = int(level["ante_minor"])
        return ante

    def level_of(self, number: int) -> int:
        """The level (1-based) hand ``number`` plays at."""
        return sum(1 for level in self.antes if int(level["from_hand"]) <= number) or 1

    def describe(self) -> dict[str, Any]:
        """The conditions as a dict of plain values (the export's ``tournament``)."""
        fields = ("name", *CONDITION_FIELDS)
        return {"id": self.pk, "chips": self.chips} | {field: getattr(self, field) for field in fields}


class EntrantStatus(models.TextChoices):
    REGISTERED = "registered", _("Registered")
    WITHDRAWN = "withdrawn", _("Withdrawn")
    PLAYING = "playing", _("Playing")
    ELIMINATED = "eliminated", _("Eliminated")
    FINISHED = "finished", _("Finished")
    REFUNDED = "refunded", _("Refunded")


class Entrant(models.Model):
    """One entry of a player in a tournament (``entry_number`` > 1: a re-entry). ``chips_minor``
    and ``rank`` are his standing after the last hand; ``place`` and ``prize_minor`` are set
    at the end (the prize in minor units of the tournament's ``currency``)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="entrants")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tournament_entries")
    entry_number = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=12, choices=EntrantStatus.choices, default=EntrantStatus.REGISTERED)
    registered_at = models.DateTimeField()
    hold = models.OneToOneField(FundsHold, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    paid_minor = models.BigIntegerField(default=0, help_text="Buy-in plus fee taken from the wallet.")
    joined_hand = models.PositiveIntegerField(default=1, help_text="The first hand this entry can be dealt.")
    chips_minor = models.BigIntegerField(default=0)
    rank = models.PositiveIntegerField(null=True, blank=True)
    eliminated_at_hand = models.PositiveIntegerField(null=True, blank=True)
    place = models.PositiveIntegerField(null=True, blank=True)
    prize_minor = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "user", "entry_number"],
                condition=~Q(status="withdrawn"),
                name="one_entry_per_number",
            ),
        ]
        indexes = [models.Index(fields=["tournament", "status"], name="entrant_tournament_status")]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.tournament_id} (#{self.entry_number})"


class TournamentRound(models.Model):
    """The standings after one hand of a tournament, for the players' live view and the
    auditors' export: ``standings`` is a list of ``[entrant id, chips_minor, rank]`` in rank
    order (rank 1 = most chips; equal chips, equal rank), ``eliminated`` the entrant ids
    eliminated before the next hand (chips below its ante)."""

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="rounds")
    number = models.PositiveIntegerField()
    hand = models.ForeignKey(Hand, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    ante_minor = models.BigIntegerField()
    standings = models.JSONField(default=list)
    eliminated = models.JSONField(default=list)
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tournament", "number"], name="one_round_per_hand")]

    def __str__(self) -> str:
        return f"{self.tournament_id} after hand {self.number}"
