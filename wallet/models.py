"""Accounts, transfers and ledger entries. Balances are a cache of the entries, kept in step
by wallet.services inside the same transaction; the database refuses negative player balances
and any edit of a ledger entry."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from wallet.money import format_minor


class Currency(models.TextChoices):
    """Cash currency and the virtual FUN chips that can never become cash (DESIGN 18)."""

    EUR = "EUR", "Euro"
    FUN = "FUN", "Fun chips"


CHIP_CURRENCY_PREFIX = "T"
"""A tournament's chips are a currency of their own, ``T<tournament id>`` (e.g. ``T42``):
their accounts, hash chain and books are the tournament's alone (docs/tournaments.md)."""

CURRENCY_MAX_LENGTH = 12


def chip_currency(tournament_id: int) -> str:
    """The currency code of tournament ``tournament_id``'s chips, e.g. ``T42``."""
    return f"{CHIP_CURRENCY_PREFIX}{int(tournament_id)}"


def is_chip_currency(code: str) -> bool:
    """Whether ``code`` names a tournament's chips (``T`` followed by digits)."""
    return len(code) > 1 and code[0] == CHIP_CURRENCY_PREFIX and code[1:].isdigit()


def is_currency(code: str) -> bool:
    """Whether the ledger knows ``code``: a currency of ``Currency`` or a tournament's chips."""
    return code in Currency.values or is_chip_currency(code)


class AccountKind(models.TextChoices):
    PLAYER = "player", "Player wallet"
    CASHIER = "cashier", "Cashier (money in and out of the platform)"
    RAKE = "rake", "House rake"
    ESCROW = "escrow", "Hand prize-pool escrow"
    CARRY = "carry", "Table carry-over (rounding remainder for the next hand)"
    JACKPOT = "jackpot", "Jackpot pool"
    RESERVE = "reserve", "House jackpot reserve (pays jackpot resets)"
    PROMOTIONS = "promotions", "House promotions (pays free draws and redeals)"
    TOURNAMENT = "tournament", "Tournament prize pool (buy-ins until the prizes are paid)"


class Account(models.Model):
    """One balance in one currency. ``key`` names it uniquely, e.g. ``player:12:FUN``,
    ``cashier:EUR``, ``escrow:hand:981``. Only the cashier may go negative: it mirrors every
    deposit and withdrawal, so the sum of all accounts of a currency is always zero."""

    key = models.CharField(max_length=80, unique=True)
    kind = models.CharField(max_length=16, choices=AccountKind.choices)
    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH, choices=Currency.choices)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="accounts",
    )
    balance_minor = models.BigIntegerField(default=0)
    held_minor = models.BigIntegerField(
        default=0,
        help_text="Part of the balance promised to holds not yet captured (FundsHold): not spendable.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(balance_minor__gte=0) | Q(kind="cashier"),
                name="account_balance_non_negative",
            ),
            models.CheckConstraint(
                condition=Q(held_minor__gte=0) & (Q(balance_minor__gte=F("held_minor")) | Q(kind="cashier")),
                name="account_holds_covered",
            ),
            models.UniqueConstraint(
                fields=["user", "currency"],
                condition=Q(kind="player"),
                name="one_player_account_per_currency",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({format_minor(self.balance_minor, self.currency)})"


class TransferKind(models.TextChoices):
    DEPOSIT = "deposit", _("Cash deposit (staff)")
    WITHDRAWAL = "withdrawal", _("Cash withdrawal (staff)")
    FUN_GRANT = "fun_grant", _("Fun chips at sign-up")
    FUN_TOP_UP = "fun_top_up", _("Fun chips top-up")
    ANTE = "ante", _("Ante")
    DRAW = "draw", _("Draw bought")
    REDEAL = "redeal", _("Redeal bought")
    SETTLEMENT = "settlement", _("Hand settlement (rake and prizes)")
    REFUND = "refund", _("Refund of a cancelled hand")
    JACKPOT = "jackpot", _("Spin jackpot drawn, or a jackpot's reset")
    HOUSE_FUNDING = "house_funding", _("House money into the jackpot reserve or promotions")
    PROMOTION = "promotion", _("Free draw or redeal paid by promotions")
    CAPTURE = "capture", _("Draws and redeals bought, captured into the hand's escrow in a batch")
    BUY_IN = "buy_in", _("Hold'em chips bought: wallet to the table's escrow")
    CASH_OUT = "cash_out", _("Hold'em chips returned: the table's escrow to the wallet")
    HOLDEM_RAKE = "holdem_rake", _("Hold'em rake: the table's escrow to the rake account")
    TOURNAMENT_BUY_IN = "tourney_buy_in", _("Tournament buy-ins captured into its prize pool")
    TOURNAMENT_FEE = "tourney_fee", _("Tournament fees: the prize pool to the house")
    TOURNAMENT_PRIZE = "tourney_prize", _("Tournament prizes paid")
    TOURNAMENT_REFUND = "tourney_refund", _("Tournament buy-ins and fees refunded (cancelled)")
    CHIPS_ISSUED = "chips_issued", _("Tournament chips issued to entrants")
    CHIPS_RETIRED = "chips_retired", _("Tournament chips retired at its end")


class Transfer(models.Model):
    """One business event that moves money; ``reference`` makes it happen at most once.

    ``sequence`` and ``chain_hash`` seal it into its currency's hash chain (wallet/chain.py);
    until it is sealed (moments after its commit) they are null and empty, and
    ``commit_mac`` proves the application wrote it. Sealing sets them once; nothing else
    ever changes a transfer (a database trigger refuses it).
    """

    reference = models.CharField(max_length=120, unique=True)
    kind = models.CharField(max_length=16, choices=TransferKind.choices)
    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH, choices=Currency.choices)
    memo = models.CharField(max_length=255, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Set by post_transfer before sealing (the seal covers it), hence a default, not auto_now_add.
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    sequence = models.BigIntegerField(null=True, blank=True)
    chain_hash = models.CharField(max_length=64, blank=True)
    commit_mac = models.CharField(max_length=64, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["currency", "sequence"], name="transfer_sequence_unique_per_currency")
        ]
        # The sealer's queue: the few transfers committed and not yet sealed.
        indexes = [
            models.Index(fields=["currency", "id"], condition=Q(sequence__isnull=True), name="transfer_unsealed")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference}"


class LedgerEntry(models.Model):
    """One leg of a transfer: a signed change of one account. Append-only (a trigger refuses
    UPDATE and DELETE); the entries of a transfer sum to zero."""

    # No per-row foreign-key checks (a hand's ante or prizes are 100,000 legs): ``_post`` writes
    # the transfer and locks every leg's account in the same transaction, transfers are
    # append-only and accounts with legs cannot be deleted (migrations/0009_ledger_at_scale.py);
    # ``check_books`` checks the references.
    # Indexed on PostgreSQL by the primary key (transfer_id, id) of the partitioned legs
    # (docs/platform.md, "Partitioning"); SQLite keeps its plain index (wallet 0011).
    transfer = models.ForeignKey(
        Transfer, on_delete=models.PROTECT, related_name="entries", db_index=False, db_constraint=False
    )
    # Indexed by ``ledger_account_recent`` (account, -id), which serves every lookup by account.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="entries", db_index=False, db_constraint=False
    )
    delta_minor = models.BigIntegerField()
    balance_after_minor = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["account", "-id"], name="ledger_account_recent")]
        verbose_name_plural = "ledger entries"

    def __str__(self) -> str:
        return f"{self.account_id}: {self.delta_minor:+d}"


class LedgerHead(models.Model):
    """The end of one currency's hash chain: the last sealed transfer's sequence and hash
    (wallet/chain.py). Locked by whoever seals (``SKIP LOCKED``: nobody waits for it)."""

    currency = models.CharField(max_length=CURRENCY_MAX_LENGTH, choices=Currency.choices, unique=True)
    sequence = models.BigIntegerField(default=0)
    chain_hash = models.CharField(max_length=64, default="0" * 64)

    def __str__(self) -> str:
        return f"{self.currency} #{self.sequence}"


# --- player protection (issue #11; wallet/protection.py) ------------------------------------


class LimitKind(models.TextChoices):
    """Limits a player sets on himself. Money limits are per currency over a rolling 24 hours;
    time limits in minutes."""

    DEPOSIT = "deposit", _("Deposit limit (24 hours)")
    LOSS = "loss", _("Loss limit (24 hours)")
    SESSION = "session", _("Session time limit (minutes)")
    REALITY_CHECK = "reality_check", _("Reality check (every N minutes)")


class PlayerLimit(models.Model):
    """One limit of one player. ``value`` is in force (None: no limit); a raise waits for the
    cooling period in ``pending_value`` until ``pending_at`` (``pending_at`` set with
    ``pending_value`` None: the limit is being removed)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="limits")
    kind = models.CharField(max_length=16, choices=LimitKind.choices)
    currency = models.CharField(max_length=3, blank=True)
    value = models.BigIntegerField(null=True, blank=True)
    pending_value = models.BigIntegerField(null=True, blank=True)
    pending_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind", "currency"], name="one_limit_per_kind_and_currency"),
            models.CheckConstraint(condition=Q(value__isnull=True) | Q(value__gt=0), name="limit_value_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind} {self.currency} {self.value}"


class ExclusionKind(models.TextChoices):
    TIME_OUT = "time_out", _("Time-out")
    SELF_EXCLUSION = "self_exclusion", _("Self-exclusion")


class Exclusion(models.Model):
    """A break the player took from playing, from ``starts_at`` to ``ends_at``. Nobody can
    end it early, staff included: there is no service for it and the admin is read-only."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="exclusions")
    kind = models.CharField(max_length=16, choices=ExclusionKind.choices)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["user", "-ends_at"], name="exclusion_user_end")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of {self.user_id} until {self.ends_at:%Y-%m-%d %H:%M}"


class Suspension(models.Model):
    """Staff suspended the account (e.g. seed 001, Notes 4: players found using bots), with a
    reason; lifted by staff with a reason. In force while ``lifted_at`` is empty."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="suspensions")
    reason = models.CharField(max_length=255)
    suspended_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    suspended_at = models.DateTimeField(default=timezone.now)
    lifted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    lifted_at = models.DateTimeField(null=True, blank=True)
    lift_reason = models.CharField(max_length=255, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user"], condition=Q(lifted_at__isnull=True), name="one_open_suspension")
        ]

    def __str__(self) -> str:
        state = "lifted" if self.lifted_at else "in force"
        return f"Suspension of {self.user} ({state})"


class ProtectionLog(models.Model):
    """Append-only audit log of player protection: limits set, breaks taken, suspensions."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="protection_log")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    action = models.CharField(max_length=32)
    detail = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action}: {self.detail}"


class PlaySession(models.Model):
    """A spell of play across tables: opens with the first hand dealt to the player after a
    break of ``POKER_SESSION_BREAK_MINUTES`` without a hand. Session time limits and reality
    checks count from ``started_at``."""

    # Read by player (the foreign key's index: a player has a session per break); no index on
    # ``last_play_at``, so the deal's extension of 100,000 open sessions is a heap-only update
    # (fillfactor 45, migrations/0009_ledger_at_scale.py).

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="play_sessions")
    started_at = models.DateTimeField()
    last_play_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.user_id} from {self.started_at:%H:%M}"


class FundsHold(models.Model):
    """A purchase confirmed against a wallet and not yet moved: ``amount_minor`` of
    ``account`` is promised to ``destination`` (wallet.services.hold_funds). The account's
    ``held_minor`` covers it, so it cannot be spent twice; ``capture_holds`` later moves a
    destination's holds in one sealed transfer and records it in ``transfer``.

    ``reference`` names the business event (``draw:<hand>:<player>:<n>``) and makes it happen
    at most once, as a transfer's reference does."""

    reference = models.CharField(max_length=120, unique=True)
    kind = models.CharField(max_length=16, choices=TransferKind.choices)
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="holds")
    destination = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="incoming_holds")
    amount_minor = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)
    transfer = models.ForeignKey(Transfer, null=True, blank=True, on_delete=models.PROTECT, related_name="holds")

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(amount_minor__gt=0), name="funds_hold_positive")]
        indexes = [
            models.Index(fields=["destination", "id"], condition=Q(transfer__isnull=True), name="funds_hold_uncaptured")
        ]

    def __str__(self) -> str:
        return f"hold {self.reference}: {self.amount_minor}"
