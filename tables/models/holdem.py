"""Texas Hold'em's models: a table's conditions, hands, freezes, the players dealt in, and
the BigHoldem practice games. Fields and constraints only: the hand lifecycle lives in
tables.holdem.services, the rules in tables.engine.holdem."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from tables.models.house import SeedChain, Table

HOLDEM_CONFIG_FIELDS = (
    "betting",
    "small_blind_minor",
    "big_blind_minor",
    "big_bet_minor",
    "seats",
    "min_buy_in_minor",
    "max_buy_in_minor",
    "rake_bps",
    "rake_cap_minor",
    "time_bank_seconds",
    "bot_seats",
    "show_probabilities",
    "ante_minor",
    "max_raises",
)
"""The Hold'em conditions staff change through tables.services.change_table_config
(audit-logged in TableConfigChange, applied between hands)."""


class HoldemBetting(models.TextChoices):
    """Betting structures (seed 003; values are tables.engine.holdem.Betting's)."""

    FIXED_LIMIT = "fixed-limit", "Limit"
    POT_LIMIT = "pot-limit", "Pot limit"
    NO_LIMIT = "no-limit", "No limit"


class HoldemConditions(models.Model):
    """The conditions of a Hold'em table (DESIGN.md, "Texas Hold'em tables"). Chips are
    minor units of the table's currency (1 chip = 1 minor unit).

    ``big_blind_minor`` is the lower stake (the limit small bet), ``big_bet_minor`` the upper
    stake (limit only; no limit and pot limit ignore it). ``time_bank_seconds`` is the
    countdown after the 10 s to act (seed 003: 20 s). ``bot_seats``: house bots a fun table
    fills up to (cash tables never have bots: seed 001 Notes 4).
    """

    table = models.OneToOneField(Table, on_delete=models.CASCADE, primary_key=True, related_name="holdem")
    betting = models.CharField(max_length=12, choices=HoldemBetting.choices, default=HoldemBetting.NO_LIMIT)
    small_blind_minor = models.BigIntegerField()
    big_blind_minor = models.BigIntegerField()
    big_bet_minor = models.BigIntegerField(help_text="Upper stake (limit: the big bet).")
    seats = models.PositiveSmallIntegerField(default=6)
    min_buy_in_minor = models.BigIntegerField()
    max_buy_in_minor = models.BigIntegerField()
    rake_bps = models.PositiveIntegerField(default=500, help_text="Rake in basis points, at most 10%.")
    rake_cap_minor = models.BigIntegerField(null=True, blank=True, help_text="Rake cap per hand (empty: none).")
    time_bank_seconds = models.PositiveIntegerField(default=20)
    bot_seats = models.PositiveSmallIntegerField(default=0, help_text="House bots (fun tables only).")
    show_probabilities = models.BooleanField(default=False)
    ante_minor = models.BigIntegerField(default=0, help_text="Ante from every player dealt in (seed 004); 0: none.")
    max_raises = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="Raises per betting round (seed 004, rilanci); empty: seed 003's limit cap, none in (pot) no limit.",
    )

    class Meta:
        verbose_name_plural = "Hold'em conditions"
        constraints = [
            models.CheckConstraint(condition=Q(seats__gte=2, seats__lte=10), name="holdem_seats_2_to_10"),
            models.CheckConstraint(condition=Q(rake_bps__lte=1000), name="holdem_rake_at_most_10_percent"),
            models.CheckConstraint(
                condition=Q(small_blind_minor__gte=0, big_blind_minor__gt=0, big_bet_minor__gt=0),
                name="holdem_stakes_positive",
            ),
            models.CheckConstraint(
                condition=Q(min_buy_in_minor__gt=0, max_buy_in_minor__gte=F("min_buy_in_minor")),
                name="holdem_buy_in_range",
            ),
        ]

    def __str__(self) -> str:
        return f"Hold'em conditions of {self.table_id}"

    def snapshot(self) -> dict[str, Any]:
        """The conditions as plain values, stored with every hand."""
        return {field: getattr(self, field) for field in HOLDEM_CONFIG_FIELDS}


class HoldemHandStatus(models.TextChoices):
    PLAYING = "playing", _("Playing")
    SETTLED = "settled", _("Settled")
    CANCELLED = "cancelled", _("Cancelled and refunded")


class HoldemHand(models.Model):
    """One Hold'em hand, kept for good: enough to replay it action by action.

    ``setup``: ``{"stacks": [chips or null per seat], "button": seat, "waiting": [seats],
    "posting": [seats]}``; with ``config`` (the conditions) and the deck of ``server_seed``
    it is the engine's HandSetup. ``players``: ``[{"seat", "user_id", "name", "bot"}]``.
    ``actions``: ``[{"kind", "seat", "amount", "at"}]`` in order, the clock's timeouts
    included (``timeout_all_in``). ``server_seed`` is secret until the hand is terminal;
    ``commitment`` (SHA-256 of the chain seed) is public from the deal. Algorithm 3 (since
    2026-11-26): the inputs froze at ``frozen_at`` (``HoldemFreeze``, digest
    ``freeze_digest``) and ``server_seed`` mixes in ``deal_beacon_value``, the value of the
    first beacon round after the freeze (``deal_round``; docs/provably-fair.md, 12).
    """

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="holdem_hands")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=HoldemHandStatus.choices, default=HoldemHandStatus.PLAYING)
    server_seed = models.CharField(max_length=64)
    commitment = models.CharField(max_length=64)
    algorithm = models.PositiveSmallIntegerField(default=2)
    chain = models.ForeignKey(SeedChain, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    chain_index = models.PositiveIntegerField(null=True, blank=True)
    chain_seed = models.CharField(max_length=64, blank=True)
    client_seeds = models.JSONField(default=list, blank=True, help_text="[[name, client seed]] in seat order.")
    config = models.JSONField()
    setup = models.JSONField()
    players = models.JSONField()
    actions = models.JSONField(default=list, blank=True)
    turn_started_at = models.DateTimeField(null=True, blank=True)
    turn_extended = models.BooleanField(default=False, help_text="The reconnection time was added to this turn.")
    turn_grace_until = models.DateTimeField(
        null=True,
        blank=True,
        help_text="The turn's deadline moved this late because the platform was degraded (platform grace).",
    )
    started_at = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)
    board = models.JSONField(default=list, blank=True, help_text="Board card codes, at the end of the hand.")
    results = models.JSONField(default=dict, blank=True)
    pot_minor = models.BigIntegerField(default=0)
    rake_minor = models.BigIntegerField(default=0)
    phh = models.TextField(blank=True)
    phh_error = models.CharField(max_length=200, blank=True)
    cancel_reason = models.CharField(max_length=200, blank=True)
    frozen_at = models.DateTimeField(
        null=True, blank=True, help_text="When the hand's inputs froze (algorithm 3; null for older hands)."
    )
    deal_round = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The beacon round mixed into the hand seed: the first after the freeze."
    )
    deal_beacon_value = models.CharField(max_length=64, blank=True, help_text="That round's value (hex).")
    freeze_digest = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the frozen inputs (hex).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "number"], name="holdem_hand_number_unique")]
        indexes = [models.Index(fields=["table", "-number"], name="holdem_hand_table_recent")]

    def __str__(self) -> str:
        return f"{self.table_id}#{self.number} (Hold'em)"

    @property
    def is_terminal(self) -> bool:
        return self.status != HoldemHandStatus.PLAYING


class HoldemFreezeStatus(models.TextChoices):
    PENDING = "pending", "Waiting for its beacon round"
    DEALT = "dealt", "Dealt"
    VOID = "void", "Void (the beacon did not answer)"


class HoldemFreeze(models.Model):
    """The inputs of a Hold'em table's next hand, frozen and published before the beacon
    round that completes its seed (algorithm 3, docs/provably-fair.md section 12).

    ``inputs``: ``{"button", "waiting", "posting", "players": [{"seat", "user_id", "name",
    "bot", "personality", "client_seed"}]}`` (client seeds secret until the hand's seeds are
    public; only their commitments are shown). ``chain_seed`` is secret like the hand's.
    Pending until ``deal_at`` (the round released), then dealt (``hand``), or void with the
    beacon's ``evidence`` when the round never came (nothing was dealt or staked)."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="holdem_freezes")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=HoldemFreezeStatus.choices, default=HoldemFreezeStatus.PENDING)
    frozen_at = models.DateTimeField()
    deal_round = models.PositiveBigIntegerField()
    deal_at = models.DateTimeField()
    chain = models.ForeignKey(SeedChain, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    chain_index = models.PositiveIntegerField(null=True, blank=True)
    chain_seed = models.CharField(max_length=64, blank=True)
    commitment = models.CharField(max_length=64)
    inputs = models.JSONField()
    digest = models.CharField(max_length=64)
    hand = models.OneToOneField(
        HoldemHand, null=True, blank=True, on_delete=models.PROTECT, related_name="freeze_record"
    )
    evidence = models.JSONField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["table", "status"], name="holdem_freeze_table_status")]

    def __str__(self) -> str:
        return f"{self.table_id}#{self.number} freeze ({self.status})"


class HoldemHandPlayer(models.Model):
    """One player dealt into a Hold'em hand (the hand history's index: "my hands"), with
    his stack before and after, in minor units; ``finishing_minor`` is NULL until the hand
    is settled (a cancelled hand keeps the starting stack)."""

    hand = models.ForeignKey(HoldemHand, on_delete=models.PROTECT, related_name="seat_rows")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="holdem_hands")
    seat = models.PositiveSmallIntegerField()
    is_bot = models.BooleanField(default=False)
    starting_minor = models.BigIntegerField()
    finishing_minor = models.BigIntegerField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hand", "user"], name="holdem_hand_player_once")]
        indexes = [models.Index(fields=["user", "-hand"], name="holdem_hand_player_recent")]

    def __str__(self) -> str:
        return f"{self.user_id} at seat {self.seat} of {self.hand_id}"

    @property
    def net_minor(self) -> int | None:
        """Chips won (> 0) or lost in the hand; None until it is settled."""
        return None if self.finishing_minor is None else self.finishing_minor - self.starting_minor


class PracticeStatus(models.TextChoices):
    RUNNING = "running", "Running"
    FINISHED = "finished", "Finished"


class PracticeEnd(models.TextChoices):
    """Why a BigHoldem practice game ended (seed 004, *Termine del gioco*)."""

    ONE_LEFT = "one_left", "One player holds all the chips"
    HANDS = "hands", "The number of hands was played"
    TIME = "time", "The maximum duration passed"
    PLAYER_OUT = "player_out", "The player was eliminated"
    ABANDONED = "abandoned", "The player left the game"


class PracticeGame(models.Model):
    """A BigHoldem practice game (seed 004): a private fun Hold'em table seated with house
    bots, with its setup items and how it stands. ``nickname`` empty: an automatic game of
    bots only (seed 004, *Gioco automatico*). Chips are minor units of FUN, issued by the
    FUN cashier into the table's escrow and returned to it at the end: no wallet of the
    player ever pays or receives them (seed 004: "Non si vincono soldi, ma nemmeno si perdono").
    The workflow is ``tables.holdem.practice.services``."""

    table = models.OneToOneField(Table, on_delete=models.PROTECT, related_name="practice")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="practice_games"
    )
    nickname = models.CharField(max_length=24, blank=True)
    players = models.PositiveSmallIntegerField()
    max_hands = models.PositiveIntegerField(null=True, blank=True)
    max_minutes = models.PositiveIntegerField()
    max_raises = models.PositiveSmallIntegerField()
    currency_label = models.CharField(max_length=16)
    action_seconds = models.PositiveSmallIntegerField()
    ante = models.BooleanField(default=False)
    betting = models.CharField(max_length=12, choices=HoldemBetting.choices)
    stakes = models.CharField(max_length=10)
    show_probabilities = models.BooleanField(default=True)
    felt = models.CharField(max_length=10)
    starting_stack_minor = models.BigIntegerField()
    base_minor = models.BigIntegerField(help_text="The minimum chip with every player in (seed 004, Fiches).")
    minimum_minor = models.BigIntegerField(help_text="The minimum chip now (small blind; big blind twice it).")
    status = models.CharField(max_length=10, choices=PracticeStatus.choices, default=PracticeStatus.RUNNING)
    end_reason = models.CharField(max_length=12, choices=PracticeEnd.choices, blank=True)
    hands_played = models.PositiveIntegerField(default=0)
    eliminations = models.JSONField(default=list, blank=True, help_text="[{name, seat, hand, stack_minor}] in order.")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(players__gte=2, players__lte=10), name="practice_players_2_to_10"),
        ]
        indexes = [models.Index(fields=["status", "-started_at"], name="practice_status_recent")]

    def __str__(self) -> str:
        return f"practice {self.pk} ({self.nickname or 'automatic'})"

    @property
    def interactive(self) -> bool:
        """A person plays seat N.1 (seed 004, *Gioco interattivo*)."""
        return bool(self.nickname)


class PracticeResult(models.Model):
    """One player's result in a finished practice game: hands dealt in, net chips won
    (minor units), final place. The public leaderboard reads the people's rows of
    interactive games (seed 004, *Termine del gioco*)."""

    game = models.ForeignKey(PracticeGame, on_delete=models.CASCADE, related_name="results")
    name = models.CharField(max_length=40)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="practice_results"
    )
    is_bot = models.BooleanField(default=False)
    seat = models.PositiveSmallIntegerField()
    hands = models.PositiveIntegerField()
    net_minor = models.BigIntegerField()
    final_stack_minor = models.BigIntegerField()
    place = models.PositiveSmallIntegerField()
    eliminated_at_hand = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["place"]
        constraints = [models.UniqueConstraint(fields=["game", "seat"], name="practice_result_once_per_seat")]
        indexes = [models.Index(fields=["is_bot", "name"], name="practice_result_board")]

    def __str__(self) -> str:
        return f"{self.name} in {self.game_id}: {self.place}"
