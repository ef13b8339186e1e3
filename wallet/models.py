"""Accounts, transfers and ledger entries. Balances are a cache of the entries, kept in step
by wallet.services inside the same transaction; the database refuses negative player balances
and any edit of a ledger entry."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone


class Currency(models.TextChoices):
    """Cash currency and the virtual FUN chips that can never become cash (DESIGN 18)."""

    EUR = "EUR", "Euro"
    FUN = "FUN", "Fun chips"


class AccountKind(models.TextChoices):
    PLAYER = "player", "Player wallet"
    CASHIER = "cashier", "Cashier (money in and out of the platform)"
    RAKE = "rake", "House rake"
    ESCROW = "escrow", "Hand prize-pool escrow"
    CARRY = "carry", "Table carry-over (rounding remainder for the next hand)"
    JACKPOT = "jackpot", "Jackpot pool"
    RESERVE = "reserve", "House jackpot reserve (pays jackpot resets)"
    PROMOTIONS = "promotions", "House promotions (pays free draws and redeals)"


class Account(models.Model):
    """One balance in one currency. ``key`` names it uniquely, e.g. ``player:12:FUN``,
    ``cashier:EUR``, ``escrow:hand:981``. Only the cashier may go negative: it mirrors every
    deposit and withdrawal, so the sum of all accounts of a currency is always zero."""

    key = models.CharField(max_length=80, unique=True)
    kind = models.CharField(max_length=16, choices=AccountKind.choices)
    currency = models.CharField(max_length=3, choices=Currency.choices)
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
        return f"{self.key} ({self.balance_minor} {self.currency} minor)"


class TransferKind(models.TextChoices):
    DEPOSIT = "deposit", "Cash deposit (staff)"
    WITHDRAWAL = "withdrawal", "Cash withdrawal (staff)"
    FUN_GRANT = "fun_grant", "Fun chips at sign-up"
    FUN_TOP_UP = "fun_top_up", "Fun chips top-up"
    ANTE = "ante", "Ante"
    DRAW = "draw", "Draw bought"
    REDEAL = "redeal", "Redeal bought"
    SETTLEMENT = "settlement", "Hand settlement (rake and prizes)"
    REFUND = "refund", "Refund of a cancelled hand"
    JACKPOT = "jackpot", "Spin jackpot drawn, or a jackpot's reset"
    HOUSE_FUNDING = "house_funding", "House money into the jackpot reserve or promotions"
    PROMOTION = "promotion", "Free draw or redeal paid by promotions"
    CAPTURE = "capture", "Draws and redeals bought, captured into the hand's escrow in a batch"


class Transfer(models.Model):
    """One business event that moves money; ``reference`` makes it happen at most once.

    ``sequence`` and ``chain_hash`` seal it into its currency's hash chain (wallet/chain.py);
    a transfer without them was not written by the application.
    """

    reference = models.CharField(max_length=120, unique=True)
    kind = models.CharField(max_length=16, choices=TransferKind.choices)
    currency = models.CharField(max_length=3, choices=Currency.choices)
    memo = models.CharField(max_length=255, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # Set by post_transfer before sealing (the seal covers it), hence a default, not auto_now_add.
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    sequence = models.BigIntegerField(null=True, blank=True)
    chain_hash = models.CharField(max_length=64, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["currency", "sequence"], name="transfer_sequence_unique_per_currency")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.reference}"


class LedgerEntry(models.Model):
    """One leg of a transfer: a signed change of one account. Append-only (a trigger refuses
    UPDATE and DELETE); the entries of a transfer sum to zero."""

    transfer = models.ForeignKey(Transfer, on_delete=models.PROTECT, related_name="entries")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="entries")
    delta_minor = models.BigIntegerField()
    balance_after_minor = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["account", "-id"], name="ledger_account_recent")]
        verbose_name_plural = "ledger entries"

    def __str__(self) -> str:
        return f"{self.account_id}: {self.delta_minor:+d}"


class LedgerHead(models.Model):
    """The end of one currency's hash chain: the last sealed transfer's sequence and hash
    (wallet/chain.py). Locked by every transfer of the currency while it is sealed."""

    currency = models.CharField(max_length=3, choices=Currency.choices, unique=True)
    sequence = models.BigIntegerField(default=0)
    chain_hash = models.CharField(max_length=64, default="0" * 64)

    def __str__(self) -> str:
        return f"{self.currency} #{self.sequence}"


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
