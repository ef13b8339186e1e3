"""The house's models: tables, seats, sockets, seed chains, beacon rounds and the staff's
configuration log. Fields and constraints only: the hand lifecycle lives in tables.services,
the rules in tables.engine. The games' models are tables.models.widerpoker and
tables.models.holdem (one app label, ``tables``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from wallet.models import CHIP_CURRENCY_PREFIX, CURRENCY_MAX_LENGTH, Currency


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
    """A table of the house, whatever its game (``game``): its name, mode and currency, and
    the state machine of its current hand. Each game keeps its conditions in a row of its
    own, one-to-one with the table (``table.widerpoker``: tables.models.widerpoker
    .WiderPokerConditions; ``table.holdem``: tables.models.holdem.HoldemConditions).

    The clock (tables.clock.advance_due_tables) moves ``phase`` when ``phase_deadline``
    has passed; ``version`` grows by one on every change a client must see, and every push
    carries it.
    """

    name = models.CharField(max_length=60, unique=True)
    game = models.CharField(max_length=12, choices=TableGame.choices, default=TableGame.WIDERPOKER)
    mode = models.CharField(max_length=8, choices=TableMode.choices, default=TableMode.FUN)
    # A tournament's table plays its chips, a currency of their own (``T<id>``: tables/tournaments).
    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH, choices=Currency.choices, default=Currency.FUN)
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
        ordering = ["name"]
        constraints = [
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
        indexes = [
            models.Index(fields=["table", "status"], name="seat_table_status"),
            # Who left a table lately (the deal round's players gone since the freeze, the
            # sessions counted after a hand): seats that ever left a table pile up.
            models.Index(fields=["table", "left_at"], condition=Q(status="left"), name="seat_left_recent"),
        ]

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
