"""Jackpots: progressive pools fed by a share of every hand's gross and won by a royal flush
or a spin draw (seed 001, Jackpots; DESIGN item 12).

Fields and constraints only: the money moves through ``jackpots.services`` (contributions
and awards are legs of the hand's own ledger transfers), the draw and the arithmetic live in
the engine (``tables.engine.widerpoker``).
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from wallet.models import Currency

MAX_CONTRIBUTION_BPS = 1000
"""One jackpot takes at most 10% of a hand's gross; all of a table's jackpots together too."""


def feed_key(jackpot_id: int) -> str:
    """The name a hand's conditions and arithmetic give a jackpot: ``jackpot:<id>``."""
    return f"jackpot:{int(jackpot_id)}"


def account_key(feed: str, currency: str) -> str:
    """The wallet account holding the balance of the jackpot named ``feed``."""
    return f"{feed}:{currency}"


class JackpotKind(models.TextChoices):
    """The royal jackpot (won by a royal flush) and the three spin jackpots (won by a draw at
    the start of the hand; seed 001, Jackpots 1-2)."""

    ROYAL = "royal", "Royal"
    GOLD = "gold", "Spin gold"
    SILVER = "silver", "Spin silver"
    BRONZE = "bronze", "Spin bronze"


DEFAULT_ONE_IN = {JackpotKind.GOLD: 6000, JackpotKind.SILVER: 300, JackpotKind.BRONZE: 30}
"""Seed 001, Jackpots 2: gold 1 in 6000 hands, silver 1 in 300, bronze 1 in 30."""


class Jackpot(models.Model):
    """A progressive jackpot: its balance is the wallet account ``jackpot:<id>:<currency>``.

    ``contribution_bps``: share of each hand's gross set aside for it before rake, at every
    table it feeds on (``Table.jackpots``: one table or a network). ``reset_minor``: what it
    restarts from after a win, paid from the house's jackpot reserve. ``one_in``: a spin
    jackpot is drawn 1 in N hands (empty for the royal jackpot). ``spin_overrides``: rules a
    hand that wins this spin jackpot changes, like a special hand (keys of
    ``tables.engine.widerpoker.conditions.OVERRIDABLE``). Changes apply from the next hand dealt.
    """

    name = models.CharField(max_length=60, unique=True)
    kind = models.CharField(max_length=8, choices=JackpotKind.choices)
    currency = models.CharField(max_length=3, choices=Currency.choices)
    contribution_bps = models.PositiveIntegerField(
        default=50, help_text="Share of each hand's gross set aside for this jackpot (50 = 0.5%), at most 10%."
    )
    reset_minor = models.BigIntegerField(default=0, help_text="Amount the jackpot restarts from after a win.")
    one_in = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Spin jackpots only: drawn once in this many hands (gold 6000, silver 300, bronze 30).",
    )
    spin_overrides = models.JSONField(
        default=dict, blank=True, help_text="Spin jackpots only: rules changed in a hand that wins it."
    )
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["currency", "kind", "name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(contribution_bps__lte=MAX_CONTRIBUTION_BPS), name="jackpot_contribution_at_most_10_percent"
            ),
            models.CheckConstraint(condition=Q(reset_minor__gte=0), name="jackpot_reset_non_negative"),
            models.CheckConstraint(
                condition=(Q(kind="royal", one_in__isnull=True) | (~Q(kind="royal") & Q(one_in__gte=2))),
                name="jackpot_one_in_only_for_spins",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()}, {self.currency})"

    @property
    def account_key(self) -> str:
        """The wallet account that holds this jackpot's balance."""
        return account_key(self.feed_key, self.currency)

    @property
    def feed_key(self) -> str:
        """The name the hand arithmetic and the hand records use for this jackpot."""
        return feed_key(self.pk)


class JackpotEventKind(models.TextChoices):
    SPIN_WON = "spin_won", "Spin jackpot drawn"
    ROYAL_WON = "royal_won", "Royal jackpot won"
    RESET = "reset", "Restarted from the reset amount"
    SEEDED = "seeded", "Funded by the house"


class JackpotEvent(models.Model):
    """What happened to a jackpot beside the contributions (which are legs of every hand's
    settlement): wins, resets and house funding, each with the ledger transfer that moved the
    money (``transfer_reference``) and the hand (``hand_id``: table hands are in the tables app,
    which depends on this one, so it is a plain id)."""

    jackpot = models.ForeignKey(Jackpot, on_delete=models.PROTECT, related_name="events")
    kind = models.CharField(max_length=12, choices=JackpotEventKind.choices)
    amount_minor = models.BigIntegerField()
    hand_id = models.PositiveBigIntegerField(null=True, blank=True)
    winners = models.JSONField(default=list, blank=True)
    transfer_reference = models.CharField(max_length=80)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["jackpot", "kind", "hand_id"], name="jackpot_event_once_per_hand"),
        ]

    def __str__(self) -> str:
        return f"{self.jackpot_id} {self.kind} {self.amount_minor}"
