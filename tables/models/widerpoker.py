"""WiderPoker's models: hands, entries, freezes, redeals, purchases' refs, special hands,
power-up rules and gaming sessions. Fields and constraints only: the hand lifecycle lives in
tables.widerpoker.services, the rules in tables.engine.widerpoker."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from tables.engine.widerpoker.conditions import CONDITION_FIELDS, MAX_DRAW_PRICE_BPS, draw_price
from tables.models.house import SeedChain, Table

# The fields of a table's conditions (the engine's rules name them): snapshotted into every
# hand, changed by staff only through tables.services.change_table_config (audit-logged,
# applied between hands).
CONFIG_FIELDS = CONDITION_FIELDS


class WiderPokerConditions(models.Model):
    """The conditions of a WiderPoker table (seed 001, C.1; DESIGN items 12 and 16), one row per
    WiderPoker table (``table.widerpoker``); Hold'em and other games' tables have none.
    Amounts in minor units of the table's currency, shares in basis points (1 bps = 0.01 %),
    times in whole seconds. Snapshotted into every hand (``Hand.config``), which is what
    prices and limits a player's actions from then on."""

    table = models.OneToOneField(Table, on_delete=models.CASCADE, primary_key=True, related_name="widerpoker")
    ante_minor = models.BigIntegerField()
    change_seconds = models.PositiveIntegerField(default=30, help_text="Length of the change phase.")
    results_seconds = models.PositiveIntegerField(default=8, help_text="How long results stay on screen.")
    rake_bps = models.PositiveIntegerField(default=500, help_text="Rake in basis points (500 = 5%), at most 10%.")
    paid_fraction_bps = models.PositiveIntegerField(default=1500, help_text="Share of entries paid (1500 = 15%).")
    min_prize_minor = models.BigIntegerField(default=0, help_text="Smallest prize of a paid place.")
    draw_price_bps = models.PositiveIntegerField(
        default=5000,
        help_text="Price of each draw after the first as a share of the ante (5000 = half the ante; seed 001, C.1).",
    )
    max_draws = models.PositiveSmallIntegerField(default=5, help_text="Draws per hand, the first included (1-5).")
    redeal_price_minor = models.BigIntegerField()
    max_redeals = models.PositiveSmallIntegerField(default=2)
    redeal_seconds = models.PositiveIntegerField(
        default=20, help_text="Redeals are sold during the first N seconds of the change phase."
    )

    class Meta:
        verbose_name_plural = "WiderPoker conditions"
        constraints = [
            models.CheckConstraint(condition=Q(rake_bps__lte=1000), name="widerpoker_rake_at_most_10_percent"),
            models.CheckConstraint(condition=Q(max_draws__gte=1, max_draws__lte=5), name="widerpoker_max_draws_1_to_5"),
            models.CheckConstraint(condition=Q(ante_minor__gt=0), name="widerpoker_ante_positive"),
            models.CheckConstraint(
                condition=Q(draw_price_bps__lte=MAX_DRAW_PRICE_BPS, redeal_price_minor__gte=0, min_prize_minor__gte=0),
                name="widerpoker_prices_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(paid_fraction_bps__gte=1, paid_fraction_bps__lte=10000),
                name="widerpoker_paid_fraction_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"WiderPoker conditions of {self.table_id}"

    def values(self) -> dict[str, Any]:
        """The conditions as plain values (``CONFIG_FIELDS``)."""
        return {field: getattr(self, field) for field in CONFIG_FIELDS}

    def snapshot(self) -> dict[str, Any]:
        """The configuration a hand is played under, stored with the hand for good: the
        table's mode and currency, the conditions and the draw price. Tips and the
        probability panel are on at every table; a special hand may switch them off. Reads
        ``self.table`` (one query unless it came with the row)."""
        table = self.table
        return (
            {"mode": table.mode, "currency": table.currency}
            | self.values()
            | {"draw_price_minor": self.draw_price_minor, "tips": True, "panel": True}
        )

    @property
    def draw_price_minor(self) -> int:
        """The price of each draw after the first: ``floor(ante x draw_price_bps / 10000)``
        (seed 001, C.1: "an amount proportional to the ante")."""
        return draw_price(self.ante_minor, self.draw_price_bps)


class HandStatus(models.TextChoices):
    CHANGE = "change", _("Change phase")
    SETTLED = "settled", _("Settled")
    CANCELLED = "cancelled", _("Cancelled and refunded")


class Hand(models.Model):
    """One hand (game event) of a table, kept for good as its hand history.

    ``server_seed`` is secret until the hand is terminal (settled or cancelled); its SHA-256
    ``commitment`` is public from the deal (docs/provably-fair.md).
    """

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="hands")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=HandStatus.choices, default=HandStatus.CHANGE)
    server_seed = models.CharField(
        max_length=64, help_text="The seed of every stream of the hand (algorithm 2: the hand seed)."
    )
    commitment = models.CharField(max_length=64)
    algorithm = models.PositiveSmallIntegerField(default=1, help_text="docs/provably-fair.md algorithm version.")
    chain = models.ForeignKey(SeedChain, null=True, blank=True, on_delete=models.PROTECT, related_name="hands")
    chain_index = models.PositiveIntegerField(null=True, blank=True)
    chain_seed = models.CharField(
        max_length=64, blank=True, help_text="Algorithm 2: the chain element; secret until over."
    )
    beacon_round = models.PositiveBigIntegerField(null=True, blank=True)
    beacon_value = models.CharField(max_length=128, blank=True)
    board = models.JSONField(help_text='{"columns": [[codes] x 5], "out": [code, code]}')
    config = models.JSONField()
    started_at = models.DateTimeField()
    change_deadline = models.DateTimeField()
    redeal_deadline = models.DateTimeField()
    settled_at = models.DateTimeField(null=True, blank=True)
    entry_count = models.PositiveIntegerField(default=0)
    redeal_count = models.PositiveIntegerField(default=0)
    antes_minor = models.BigIntegerField(default=0)
    draws_minor = models.BigIntegerField(default=0)
    redeals_minor = models.BigIntegerField(default=0)
    gross_minor = models.BigIntegerField(default=0)
    rake_minor = models.BigIntegerField(default=0)
    carry_in_minor = models.BigIntegerField(default=0)
    pool_minor = models.BigIntegerField(default=0)
    breakage_minor = models.BigIntegerField(default=0)
    change_keys = models.JSONField(null=True, blank=True)
    spin_jackpot = models.ForeignKey(
        "jackpots.Jackpot", null=True, blank=True, on_delete=models.PROTECT, related_name="spin_hands"
    )
    spin_award_minor = models.BigIntegerField(default=0, help_text="Spin jackpot added to this hand's pool.")
    not_dealt = models.JSONField(
        default=list, blank=True, help_text="Seated players not dealt in, and why: [{player, reason}]."
    )
    jackpot_contributions_minor = models.BigIntegerField(default=0, help_text="Set aside for jackpots at settlement.")
    jackpot_awards_minor = models.BigIntegerField(
        default=0, help_text="Jackpot money won in the hand: the spin award plus royal shares paid."
    )
    jackpot_results = models.JSONField(
        default=dict, blank=True, help_text="Contributions, royal awards and resets, as settled."
    )
    leaderboard = models.JSONField(default=list, blank=True)
    cancel_reason = models.CharField(max_length=200, blank=True)
    sessions_counted = models.BooleanField(
        null=True,
        blank=True,
        help_text=(
            "Whether the hand is counted in its players' gaming and play sessions: a WiderPoker "
            "deal writes False and counts them after its commit (or settlement does), then True; "
            "null for hands that never wait for it."
        ),
    )
    beacon_evidence = models.JSONField(
        null=True,
        blank=True,
        help_text="A hand cancelled once its beacon round was due: what was awaited and what the beacon answered.",
    )
    # Algorithm 3 (docs/provably-fair.md): the inputs froze at ``frozen_at`` with the digest
    # ``inputs_digest`` of the players' client seeds; the deal round's value decided the hand.
    frozen_at = models.DateTimeField(null=True, blank=True)
    inputs_digest = models.CharField(max_length=64, blank=True)
    deal_round = models.PositiveBigIntegerField(null=True, blank=True)
    deal_beacon_value = models.CharField(max_length=64, blank=True)
    deal_beacon_signature = models.CharField(max_length=192, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "number"], name="hand_number_unique_per_table")]
        indexes = [
            models.Index(fields=["table", "-number"], name="hand_table_recent"),
            # Auditors' and back-office date ranges (backoffice/auditing.py, selectors.py).
            models.Index(fields=["settled_at"], name="hand_settled_at"),
            # A table's hands of the last day (tables.selectors.find_missed_result).
            models.Index(fields=["table", "settled_at"], name="hand_table_settled"),
            # The commitments page's hands cancelled after their beacon round (few, public).
            models.Index(
                fields=["settled_at"], name="hand_beacon_cancelled", condition=Q(beacon_evidence__isnull=False)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.table_id}#{self.number}"

    @property
    def is_terminal(self) -> bool:
        return self.status in (HandStatus.SETTLED, HandStatus.CANCELLED)

    def change_phase_over(self, now: datetime | None = None) -> bool:
        """Whether the change phase has ended (deadline passed, or the hand is terminal): from
        then on staff may see every player's cards and choices (tables/adminkit/secrets.py)."""
        return self.is_terminal or (now or timezone.now()) >= self.change_deadline

    @property
    def currency(self) -> str:
        return str(self.config["currency"])


class Entry(models.Model):
    """One player's participation in one hand: combinations, choices, purchases and result.

    ``combination`` is the current initial combination as an index 0..99999 (digits p0..p4,
    docs/provably-fair.md); ``redeals`` lists ``[redeal_number, combination]`` pairs in the
    order bought. ``hold_mask`` has bit c set when column c is held; NULL = no choice received.
    """

    # No single-column indexes (every index of the entry leads with ``hand``, but the
    # unique ``entry_user_recent`` with ``user``) and no per-row foreign-key check: the deal inserts
    # the hand and takes the players from their seats in one transaction, and neither hands
    # nor players with entries can be deleted (tables/migrations/0017_entries_at_scale.py).
    hand = models.ForeignKey(
        Hand, on_delete=models.PROTECT, related_name="entries", db_index=False, db_constraint=False
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="entries",
        db_index=False,
        db_constraint=False,
    )
    join_order = models.PositiveIntegerField()
    initial_combination = models.PositiveIntegerField()
    combination = models.PositiveIntegerField()
    redeals = models.JSONField(default=list, blank=True)
    hold_mask = models.PositiveSmallIntegerField(null=True, blank=True)
    client_seed = models.CharField(max_length=64, blank=True, help_text="The player's client seed for this hand.")
    hold_at = models.DateTimeField(null=True, blank=True, help_text="When the hold played was received.")
    draws_bought = models.PositiveSmallIntegerField(default=1)
    paid_minor = models.BigIntegerField(default=0)
    # Filled at settlement.
    connected_at_end = models.BooleanField(null=True, blank=True)
    hold_used = models.PositiveSmallIntegerField(null=True, blank=True)
    draw_strengths = models.JSONField(null=True, blank=True)
    best_draw = models.PositiveSmallIntegerField(null=True, blank=True)
    strength = models.PositiveIntegerField(null=True, blank=True)
    category = models.PositiveSmallIntegerField(null=True, blank=True)
    place = models.PositiveIntegerField(null=True, blank=True)
    prize_minor = models.BigIntegerField(default=0)
    promo_minor = models.BigIntegerField(
        default=0, help_text="Part of paid_minor the house promotions paid (free draws and redeals)."
    )
    jackpot_minor = models.BigIntegerField(default=0, help_text="Royal jackpot share won with this entry.")

    class Meta:
        verbose_name_plural = "entries"
        constraints = [
            # One entry per player and hand, and a player's history newest hand first
            # (handhistory.widerpoker.list_player_hands): one index for both (tables 0032;
            # issue 23: a deal of 100,000 writes every index 100,000 times).
            models.UniqueConstraint(F("user"), F("hand").desc(), name="entry_user_recent"),
            models.UniqueConstraint(fields=["hand", "combination"], name="entry_combination_unique_in_hand"),
            models.CheckConstraint(condition=Q(draws_bought__gte=1, draws_bought__lte=5), name="entry_draws_1_to_5"),
            models.CheckConstraint(condition=Q(combination__lt=100000), name="entry_combination_in_range"),
        ]
        indexes = [
            # None of the columns settlement writes is indexed, so results are heap-only
            # updates (fillfactor 40; 0017_entries_at_scale.py).
            # The initial combinations redealt away, still taken in their hand (a redeal's
            # free combination, tables.widerpoker.services.play): empty for entries that never redealt,
            # so the deal does not write it.
            models.Index(
                fields=["hand", "initial_combination"],
                condition=~Q(combination=F("initial_combination")),
                name="entry_redealt_initial",
            ),
        ]

    def __str__(self) -> str:
        return f"entry {self.user_id} in hand {self.hand_id}"


class HandFreeze(models.Model):
    """Algorithm 3: a table's next hand, its inputs frozen and waiting for its deal round
    (docs/provably-fair.md, "Algorithm 3"). ``players``: ``[[user_id, name, client_seed],
    ...]`` of every player frozen into the hand; ``digest``: their ``client_seeds_digest``;
    ``not_dealt``: the seated players left out at the freeze, and why. The deal deletes
    the row; a freeze whose round never came keeps it, with ``abandoned_at`` and the
    beacon's ``evidence``, in public."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="freezes")
    number = models.PositiveIntegerField()
    chain = models.ForeignKey(SeedChain, on_delete=models.PROTECT, related_name="+")
    chain_index = models.PositiveIntegerField()
    players = models.JSONField()
    digest = models.CharField(max_length=64)
    not_dealt = models.JSONField(default=list, blank=True)
    deal_round = models.PositiveBigIntegerField()
    frozen_at = models.DateTimeField()
    # When the hand is dealt: the deal round's time, or the end of the previous hand's
    # results if later (the freeze ran ``freeze_lead`` before it). NULL: the round's time
    # (freezes made before 2026-11-27).
    deal_at = models.DateTimeField(null=True, blank=True)
    abandoned_at = models.DateTimeField(null=True, blank=True)
    evidence = models.JSONField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["table"], condition=Q(abandoned_at__isnull=True), name="one_open_freeze_per_table"
            )
        ]
        indexes = [
            # The commitments page's abandoned freezes (few, public).
            models.Index(fields=["abandoned_at"], name="freeze_abandoned", condition=Q(abandoned_at__isnull=False))
        ]

    def __str__(self) -> str:
        return f"freeze of {self.table_id}#{self.number}"


class RedealCounter(models.Model):
    """The number of redeals bought in a hand so far: the row whose lock orders the hand's
    redeals (``redeal:<n>`` streams need one order per hand). Apart from the hand row, so
    that the clock's capture, which locks the hand, never holds redeals up. Created by the
    first redeal; the hand's ``redeal_count`` follows it at each capture and at settlement."""

    hand = models.OneToOneField(Hand, on_delete=models.PROTECT, primary_key=True, related_name="+")
    count = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.count} redeals in hand {self.hand_id}"


class Redeal(models.Model):
    """One redeal of a hand, in the order bought: ``number`` n drew ``combination`` from the
    seed's ``redeal:<n>`` stream (docs/provably-fair.md). The hand's ``redeal_count`` is the
    counter that numbers them; the unique constraints make a number, and a combination,
    impossible to hand out twice."""

    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="redeal_log")
    number = models.PositiveIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # Algorithm 3: NULL while the redeal waits for ``beacon_round``, the first beacon round
    # released strictly after its purchase (``created_at``); ``resolved_at`` when it came.
    combination = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField()
    beacon_round = models.PositiveBigIntegerField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["hand", "number"], name="redeal_number_unique_in_hand"),
            models.UniqueConstraint(fields=["hand", "combination"], name="redeal_combination_unique_in_hand"),
        ]
        indexes = [
            # The clock's pending redeals (few at any moment).
            models.Index(fields=["beacon_round"], name="redeal_pending", condition=Q(combination__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"redeal {self.number} of hand {self.hand_id}"


class PurchaseRef(models.Model):
    """The client's ``ref`` of a purchase that was committed (a socket frame's ``ref``, a REST
    request's ``Idempotency-Key``): the purchase writer (tables/widerpoker/services/purchases.py) looks
    it up under the entry's lock before charging, so a purchase resent with the same ``ref``
    after a lost confirmation is answered again, never charged twice. One row per purchase
    sent with a ``ref``; none for a purchase without one."""

    hand = models.ForeignKey(Hand, on_delete=models.CASCADE, db_constraint=False, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, db_constraint=False, db_index=False, related_name="+"
    )
    ref = models.CharField(max_length=64)
    kind = models.CharField(max_length=8)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hand", "user", "ref"], name="purchase_ref_unique")]

    def __str__(self) -> str:
        return f"{self.kind} {self.ref!r} of user {self.user_id} in hand {self.hand_id}"


class SpecialHandKind(models.TextChoices):
    """How a special hand is scheduled (seed 001, D; DESIGN item 16)."""

    EVERY_N = "every_n", "Every N hands"
    TIMES = "times", "At times of day"
    CHANCE = "chance", "1 in N hands, drawn from the hand's seed"


class SpecialHandSchedule(models.Model):
    """A table's special hands: when they come and which rules they change.

    ``every_n``: hands whose number is a multiple of N. ``times``: the first hand dealt at or
    after each listed time of day (``"HH:MM"``, the platform's time zone). ``one_in``: a hand
    is special when ``randbelow(N) == 0`` on its stream ``special-hand``
    (docs/provably-fair.md). ``overrides``: the rules changed (keys of
    ``tables.engine.widerpoker.conditions.OVERRIDABLE``). Staff edit schedules in the admin with a
    reason (audit-logged in TableConfigChange); a hand reads them when it is dealt, so a
    change applies between hands.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="special_schedules")
    name = models.CharField(max_length=60, help_text="What players read, e.g. 'Turbo hand'.")
    kind = models.CharField(max_length=8, choices=SpecialHandKind.choices)
    every_n = models.PositiveIntegerField(null=True, blank=True)
    times = models.JSONField(default=list, blank=True, help_text='Times of day, e.g. ["12:00", "21:30"].')
    one_in = models.PositiveIntegerField(null=True, blank=True)
    overrides = models.JSONField(default=dict)
    is_active = models.BooleanField(default=True)

    class Meta:
        ordering = ["table", "kind", "pk"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()}) at {self.table_id}"


class PowerUpRules(models.Model):
    """The power-up rules staff configure (one row, pk 1; seed 001, E; DESIGN item 17).

    A player's **level** in a gaming session is ``min(max_level, 1 + points //
    points_per_level)`` with ``points = hands x points_per_hand + draws x points_per_draw +
    redeals x points_per_redeal`` (draws and redeals bought with his own money). At level L a
    free draw is released every ``max(1, draw_every_hands - (L - 1) x draw_step)`` hands
    played, a free redeal every ``max(1, redeal_every_hands - (L - 1) x redeal_step)``; a
    player holds at most ``max_stock`` of each. A session ends when the player leaves the
    table or plays no hand for ``idle_minutes``.
    """

    is_active = models.BooleanField(default=True)
    points_per_hand = models.PositiveIntegerField(default=1)
    points_per_draw = models.PositiveIntegerField(default=1)
    points_per_redeal = models.PositiveIntegerField(default=2)
    points_per_level = models.PositiveIntegerField(default=10)
    max_level = models.PositiveSmallIntegerField(default=5)
    draw_every_hands = models.PositiveIntegerField(default=10)
    draw_step = models.PositiveIntegerField(default=2)
    redeal_every_hands = models.PositiveIntegerField(default=20)
    redeal_step = models.PositiveIntegerField(default=3)
    max_stock = models.PositiveSmallIntegerField(default=3)
    idle_minutes = models.PositiveIntegerField(default=10)

    class Meta:
        verbose_name = "power-up rules"
        verbose_name_plural = "power-up rules"
        constraints = [
            models.CheckConstraint(
                condition=Q(points_per_level__gte=1, max_level__gte=1, max_level__lte=20, draw_every_hands__gte=1)
                & Q(redeal_every_hands__gte=1, max_stock__gte=1, max_stock__lte=10, idle_minutes__gte=1),
                name="powerup_rules_in_range",
            ),
        ]

    def __str__(self) -> str:
        return "Power-up rules"


class GamingSession(models.Model):
    """A player's gaming session at a table (seed 001, E: "linked to their current game
    session"): from sitting down to leaving or going idle. It counts what raises the
    power-up level and holds the free draws and redeals released and not yet used."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="gaming_sessions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="gaming_sessions")
    started_at = models.DateTimeField()
    last_hand_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    hands_played = models.PositiveIntegerField(default=0)
    draws_bought = models.PositiveIntegerField(default=0)
    redeals_bought = models.PositiveIntegerField(default=0)
    free_draws = models.PositiveSmallIntegerField(default=0)
    free_redeals = models.PositiveSmallIntegerField(default=0)
    free_draws_used = models.PositiveIntegerField(default=0)
    free_redeals_used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["table", "user"],
                condition=Q(ended_at__isnull=True),
                name="one_open_session_per_player_and_table",
            ),
        ]

    def __str__(self) -> str:
        return f"session of {self.user_id} at {self.table_id} from {self.started_at:%Y-%m-%d %H:%M}"
