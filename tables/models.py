"""Tables, seats, hands and entries. Fields and constraints only: the hand lifecycle lives in
tables.services, the rules in tables.engine."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from tables.engine.widerpoker.conditions import CONDITION_FIELDS, MAX_DRAW_PRICE_BPS, draw_price
from wallet.models import CHIP_CURRENCY_PREFIX, CURRENCY_MAX_LENGTH, Currency

# The fields of a table's conditions (the engine's rules name them): snapshotted into every
# hand, changed by staff only through tables.services.change_table_config (audit-logged,
# applied between hands).
CONFIG_FIELDS = CONDITION_FIELDS


class TableMode(models.TextChoices):
    """Cash tables play for real money, fun tables for FUN chips (DESIGN 18)."""

    CASH = "cash", _("Cash")
    FUN = "fun", _("Fun")


class TableGame(models.TextChoices):
    """The game a table deals (DESIGN.md, "Two games, one house")."""

    WIDERPOKER = "widerpoker", "WiderPoker"
    HOLDEM = "holdem", "Texas Hold'em"


class TablePhase(models.TextChoices):
    """Where the table's hand lifecycle stands (rules B: ante, change phase, settlement).

    Hold'em tables use WAITING, PLAYING (a hand is being played, ``phase_deadline`` is the
    deadline of the player to act), RESULTS (the pause after a hand) and CLOSED."""

    WAITING = "waiting", _("Waiting for players")
    CHANGE = "change", _("Change phase")
    PLAYING = "playing", _("Hand in play")
    RESULTS = "results", _("Results")
    CLOSED = "closed", _("Closed")


class Table(models.Model):
    """A WiderPoker table: its configuration and the state machine of its current hand.

    The clock (tables.services.advance_due_tables) moves ``phase`` when ``phase_deadline``
    has passed; ``version`` grows by one on every change a client must see, and every push
    carries it.
    """

    name = models.CharField(max_length=60, unique=True)
    game = models.CharField(max_length=12, choices=TableGame.choices, default=TableGame.WIDERPOKER)
    mode = models.CharField(max_length=8, choices=TableMode.choices, default=TableMode.FUN)
    # A tournament's table plays its chips, a currency of their own (``T<id>``: tables/tournaments).
    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH, choices=Currency.choices, default=Currency.FUN)
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
    is_open = models.BooleanField(default=True)
    jackpots = models.ManyToManyField(
        "jackpots.Jackpot",
        blank=True,
        related_name="tables",
        help_text="Jackpots this table feeds and can win (one table or a network); same currency as the table.",
    )

    phase = models.CharField(max_length=10, choices=TablePhase.choices, default=TablePhase.WAITING)
    phase_deadline = models.DateTimeField(null=True, blank=True, db_index=True)
    version = models.PositiveBigIntegerField(default=0)
    current_hand = models.ForeignKey("Hand", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    hands_dealt = models.PositiveIntegerField(default=0)
    pending_changes = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["ante_minor", "name"]
        constraints = [
            models.CheckConstraint(condition=Q(rake_bps__lte=1000), name="table_rake_at_most_10_percent"),
            models.CheckConstraint(condition=Q(max_draws__gte=1, max_draws__lte=5), name="table_max_draws_1_to_5"),
            models.CheckConstraint(condition=Q(ante_minor__gt=0), name="table_ante_positive"),
            models.CheckConstraint(
                condition=Q(draw_price_bps__lte=MAX_DRAW_PRICE_BPS, redeal_price_minor__gte=0, min_prize_minor__gte=0),
                name="table_prices_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(paid_fraction_bps__gte=1, paid_fraction_bps__lte=10000),
                name="table_paid_fraction_valid",
            ),
            models.CheckConstraint(
                condition=(
                    Q(mode="fun", currency="FUN")
                    | (Q(mode="cash") & ~Q(currency="FUN"))
                    | Q(currency__startswith=CHIP_CURRENCY_PREFIX)
                ),
                name="table_mode_matches_currency",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def config_snapshot(self) -> dict[str, Any]:
        """The configuration a hand is played under, stored with the hand for good. Tips and the
        probability panel are on at every table; a special hand may switch them off."""
        return (
            {"mode": self.mode, "currency": self.currency}
            | {field: getattr(self, field) for field in CONFIG_FIELDS}
            | {"draw_price_minor": self.draw_price_minor, "tips": True, "panel": True}
        )

    @property
    def draw_price_minor(self) -> int:
        """The price of each draw after the first: ``floor(ante x draw_price_bps / 10000)``
        (seed 001, C.1: "an amount proportional to the ante")."""
        return draw_price(self.ante_minor, self.draw_price_bps)


class SeatStatus(models.TextChoices):
    ACTIVE = "active", _("Playing")
    SITTING_OUT = "sitting_out", _("Sitting out")
    LEFT = "left", _("Left")


class Seat(models.Model):
    """A player's place at a table (one row per player and table, reused on re-joining).

    Presence (tables.services.is_connected): ``last_seen_at`` is the last request, socket or
    heartbeat; ``ws_connections`` counts open game sockets (per process in ``SeatSockets``, so
    the sockets of a process that died are taken off); ``socket_closed_at`` is when the last
    one closed, or when the process that held it was last alive.
    """

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="seats")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="seats")
    status = models.CharField(max_length=12, choices=SeatStatus.choices, default=SeatStatus.ACTIVE)
    status_reason = models.CharField(max_length=40, blank=True)
    joined_at = models.DateTimeField()
    left_at = models.DateTimeField(null=True, blank=True)
    ws_connections = models.IntegerField(default=0)
    last_seen_at = models.DateTimeField()
    socket_closed_at = models.DateTimeField(null=True, blank=True)
    # Hold'em tables only (tables/holdem/services/seating.py): the seat number 0..seats-1
    # (None when the player has no place at the table), the chips he has at the table (held
    # in the table's escrow account), how a new player enters (wait for the big blind or
    # post one now), and the house bot marks.
    position = models.PositiveSmallIntegerField(null=True, blank=True)
    stack_minor = models.BigIntegerField(default=0)
    blind_choice = models.CharField(max_length=8, blank=True, help_text="Hold'em: '', 'wait' or 'post'.")
    leaving = models.BooleanField(default=False, help_text="Hold'em: leaves (cash-out) when the hand ends.")
    is_bot = models.BooleanField(default=False)
    bot_personality = models.CharField(max_length=8, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "user"], name="one_seat_per_player_and_table"),
            models.UniqueConstraint(
                fields=["table", "position"], condition=Q(position__isnull=False), name="one_player_per_holdem_seat"
            ),
            models.CheckConstraint(condition=Q(stack_minor__gte=0), name="seat_stack_non_negative"),
        ]
        indexes = [models.Index(fields=["table", "status"], name="seat_table_status")]

    def __str__(self) -> str:
        return f"{self.user_id}@{self.table_id} ({self.status})"


class AsgiProcess(models.Model):
    """An ASGI (daphne) process that holds game sockets, with its heartbeat.

    Each process beats every ``PRESENCE_HEARTBEAT_SECONDS``; one silent for
    ``PRESENCE_PROCESS_TIMEOUT_SECONDS`` is dead (killed, crashed), and the clock takes its
    sockets off the seats' counts (tables/services/presence.py; security audit F11).
    """

    id = models.CharField(max_length=32, primary_key=True)
    hostname = models.CharField(max_length=100, blank=True)
    pid = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.hostname}:{self.pid} ({self.id[:8]})"


class SeatSockets(models.Model):
    """How many of a seat's open game sockets one ASGI process holds; the seat's
    ``ws_connections`` is the sum over live processes."""

    process = models.ForeignKey(AsgiProcess, on_delete=models.CASCADE, related_name="seat_sockets")
    seat = models.ForeignKey(Seat, on_delete=models.CASCADE, related_name="process_sockets")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "seat sockets"
        constraints = [models.UniqueConstraint(fields=["process", "seat"], name="seat_sockets_once_per_process")]

    def __str__(self) -> str:
        return f"{self.count} socket(s) of seat {self.seat_id} in {self.process_id}"


class PlatformFaultKind(models.TextChoices):
    """What a process saw go wrong (tables/services/degradation.py)."""

    REDIS = "redis", "Redis unreachable"
    CLOCK_LATE = "clock_late", "Clock late"


class PlatformFault(models.Model):
    """A moment when a process knew the platform was degraded: a web process could not
    reach Redis, or the clock found a table's deadline long past. At most one row per
    process and kind every few seconds (``degradation.record_degradation``); the clock reads
    them so a person is not timed out for a turn the platform could not take
    (docs/deployment.md, "When Redis is down")."""

    kind = models.CharField(max_length=12, choices=PlatformFaultKind.choices)
    seen_at = models.DateTimeField(db_index=True)
    process = models.CharField(max_length=120, blank=True, help_text="host:pid of the process that saw it.")

    def __str__(self) -> str:
        return f"{self.kind} at {self.seen_at.isoformat()} ({self.process})"


class SeedChain(models.Model):
    """A table's chain of hand seeds (docs/provably-fair.md, "Algorithm 2";
    tables.engine.fairness): the anchor is public from creation, before any hand uses the
    chain; ``terminal_seed`` is secret for good (each hand reveals only its own element).
    ``next_index`` is the index the next hand dealt from this chain uses (1 .. length).
    Chains created since 2026-11-26 have no ``terminal_seed`` here: the signer derives it
    from ``signer_nonce`` and a key the database never holds (tables/signer.py)."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="seed_chains")
    length = models.PositiveIntegerField()
    terminal_seed = models.CharField(max_length=64, blank=True)
    signer_nonce = models.CharField(
        max_length=64, blank=True, help_text="The signer's name of the chain (tables/signer.py); no secret."
    )
    anchor = models.CharField(max_length=64)
    next_index = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField()
    published_round = models.PositiveBigIntegerField(
        null=True, blank=True, help_text="The last beacon round released when the anchor was published."
    )
    published_round_value = models.CharField(
        max_length=128, blank=True, help_text="That round's value (empty if the beacon was silent at publication)."
    )

    class Meta:
        ordering = ["table", "-created_at", "-id"]

    def __str__(self) -> str:
        return (
            f"chain {self.pk} of table {self.table_id}: {self.anchor[:12]}… ({self.next_index - 1}/{self.length} used)"
        )


class PlayerClientSeed(models.Model):
    """A player's client seed (random by default; he may set his own and always sees it).
    It enters the seed of every hand he is dealt into (docs/provably-fair.md)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="client_seed")
    seed = models.CharField(max_length=64)
    updated_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"client seed of {self.user_id}"


class BeaconRound(models.Model):
    """A randomness beacon round used by hands, kept for the public commitments page."""

    source = models.CharField(max_length=10)
    round = models.PositiveBigIntegerField()
    value = models.CharField(max_length=128)
    signature = models.CharField(max_length=192, blank=True, help_text="drand: the round's BLS signature (hex).")
    fetched_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "round"], name="beacon_round_once")]

    def __str__(self) -> str:
        return f"{self.source} round {self.round}"


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
        then on staff may see every player's cards and choices (tables/admin/secrets.py)."""
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

    # No single-column indexes (every index of the entry leads with ``hand``, and
    # ``entry_user_recent`` with ``user``) and no per-row foreign-key check: the deal inserts
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
            models.UniqueConstraint(fields=["hand", "user"], name="one_entry_per_player_and_hand"),
            models.UniqueConstraint(fields=["hand", "combination"], name="entry_combination_unique_in_hand"),
            models.CheckConstraint(condition=Q(draws_bought__gte=1, draws_bought__lte=5), name="entry_draws_1_to_5"),
            models.CheckConstraint(condition=Q(combination__lt=100000), name="entry_combination_in_range"),
        ]
        indexes = [
            # A player's history, newest hand first (handhistory.selectors.list_player_hands).
            # The only index besides the unique ones: a deal of 100,000 writes every index
            # 100,000 times, and none of the columns settlement writes is indexed, so results
            # are heap-only updates (fillfactor 40; 0017_entries_at_scale.py).
            models.Index(fields=["user", "-hand"], name="entry_user_recent"),
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


class TableConfigChange(models.Model):
    """Audit log of every staff change to a table's configuration (DESIGN 14), and of the
    staff changes that are no one table's: a jackpot's settings (one row per table it feeds
    or fed, and one without a table), the power-up rules, house funding. ``field`` names
    what changed (``rake_bps``, ``special_hand:<id>``, ``jackpot:<id>``, ``powerups``,
    ``house:<kind>:<currency>``); ``old_value``/``new_value`` are the before and after."""

    table = models.ForeignKey(Table, on_delete=models.PROTECT, null=True, blank=True, related_name="config_changes")
    changed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    changed_at = models.DateTimeField()
    field = models.CharField(max_length=40)
    old_value = models.JSONField()
    new_value = models.JSONField()
    reason = models.CharField(max_length=255)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-changed_at", "-id"]

    def __str__(self) -> str:
        return f"{self.table_id or '-'}.{self.field}: {self.old_value} -> {self.new_value}"


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


# --- Texas Hold'em ------------------------------------------------------------------------------

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


# Tournaments live in their own module of this app (tables/tournaments); imported here so the
# app registry and the migrations see their models.
from tables.tournaments.models import Entrant, Tournament, TournamentRound  # noqa: E402, F401
