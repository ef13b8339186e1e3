"""Reads of accounts and the ledger: balances, statements, and the books' invariants."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Q, QuerySet, Sum

from wallet.chain import ChainProblem, verify_chain
from wallet.models import Account, AccountKind, Currency, FundsHold, LedgerEntry, Transfer
from wallet.services import player_account_key


def find_player_account(*, user_id: int, currency: str) -> Account | None:
    """The player's wallet in ``currency``, or None if it was never opened."""
    return Account.objects.filter(key=player_account_key(user_id, currency)).first()


def get_balance_minor(*, user_id: int, currency: str) -> int:
    """What the player may spend, in minor units: the balance less the purchases confirmed
    and not yet captured (``held_minor``); 0 when the wallet was never opened."""
    account = find_player_account(user_id=user_id, currency=currency)
    return account.balance_minor - account.held_minor if account is not None else 0


def get_balances_minor(*, user_ids: Iterable[int], currency: str) -> dict[int, int]:
    """``get_balance_minor`` of many players in one statement: user id -> what he may spend
    in ``currency``, minor units (0 for a wallet never opened)."""
    ids = list(user_ids)
    keys = {player_account_key(user_id, currency): user_id for user_id in ids}
    balances = dict.fromkeys(ids, 0)
    for key, balance, held in Account.objects.filter(key__in=keys).values_list("key", "balance_minor", "held_minor"):
        balances[keys[key]] = balance - held
    return balances


def list_player_balances(*, user_id: int) -> dict[str, int]:
    """Every currency's balance of a player, minor units; currencies never used show 0."""
    balances = dict.fromkeys(Currency.values, 0)
    for account in Account.objects.filter(user_id=user_id, kind=AccountKind.PLAYER):
        balances[account.currency] = account.balance_minor - account.held_minor
    return balances


def list_account_entries(*, user_id: int, currency: str | None = None) -> QuerySet[LedgerEntry]:
    """The player's ledger entries, newest first, with their transfers."""
    entries = LedgerEntry.objects.filter(account__user_id=user_id, account__kind=AccountKind.PLAYER)
    if currency is not None:
        entries = entries.filter(account__currency=currency)
    return entries.select_related("transfer", "account").order_by("-id")


def list_transfer_legs(*, reference: str) -> dict[str, int]:
    """What the transfer with ``reference`` moved: account key -> the sum of its legs on
    that account, in minor units (empty when there is no such transfer)."""
    legs: dict[str, int] = {}
    for key, delta in LedgerEntry.objects.filter(transfer__reference=reference).values_list(
        "account__key", "delta_minor"
    ):
        legs[key] = legs.get(key, 0) + int(delta)
    return legs


@dataclass(frozen=True, slots=True)
class BooksCheck:
    """The result of auditing the ledger; ``ok`` when every invariant holds."""

    unbalanced_transfers: list[int]
    drifted_accounts: list[str]
    negative_accounts: list[str]
    currency_totals: dict[str, int]
    chain_problems: list[ChainProblem] = field(default_factory=list)
    unmatched_holds: list[str] = field(default_factory=list)
    broken_references: list[int] = field(default_factory=list)
    """Ids of ledger legs whose account or transfer does not exist (none can: the database
    checks no foreign key per leg, migrations/0009_ledger_at_scale.py)."""
    other_problems: list[str] = field(default_factory=list)
    """What the registered checks of money kept outside the ledger found, one sentence each
    (``register_books_check``: the Hold'em stacks against their tables' escrows)."""

    @property
    def ok(self) -> bool:
        return not (
            self.unbalanced_transfers
            or self.drifted_accounts
            or self.negative_accounts
            or any(self.currency_totals.values())
            or self.chain_problems
            or self.unmatched_holds
            or self.broken_references
            or self.other_problems
        )


BooksCheckHook = Callable[[], list[str]]
"""A check of money the ledger does not hold itself: returns one sentence per problem found
(none: the books agree), and reads in one snapshot so that live play cannot make it fail."""

_BOOKS_CHECKS: dict[str, BooksCheckHook] = {}


def register_books_check(name: str, check: BooksCheckHook) -> None:
    """Make ``check_books`` (so ``verify_books`` and the back-office books check) also run
    ``check``. For the apps above the wallet, which keep money of their own that the ledger
    must cover (the Hold'em stacks: ``tables.holdem.books``), without the wallet importing them;
    they register in their ``AppConfig.ready``. Registering a name again replaces it."""
    _BOOKS_CHECKS[name] = check


def list_books_checks() -> dict[str, BooksCheckHook]:
    """The registered checks, by name (a copy)."""
    return dict(_BOOKS_CHECKS)


def check_books(*, expect_head: dict[str, tuple[int, str]] | None = None) -> BooksCheck:
    """Audit the ledger: every transfer sums to zero; every balance equals the sum of its
    entries; no non-cashier balance is negative; all accounts of a currency sum to zero
    (the cashier mirrors deposits and withdrawals); every account's ``held_minor`` is the sum
    of its uncaptured holds; every transfer's seal in its currency's
    hash chain is intact (wallet/chain.py; ``expect_head`` as for ``verify_chain``); every
    leg's account and transfer exist; and every check registered with
    ``register_books_check`` finds nothing (``other_problems``)."""
    unbalanced = list(
        LedgerEntry.objects.values("transfer_id")
        .annotate(total=Sum("delta_minor"), legs=Count("id"))
        .exclude(total=0)
        .values_list("transfer_id", flat=True)
    )
    sums = dict(
        LedgerEntry.objects.values("account_id").annotate(total=Sum("delta_minor")).values_list("account_id", "total")
    )
    drifted = [
        account.key
        for account in Account.objects.only("id", "key", "balance_minor")
        if account.balance_minor != sums.get(account.pk, 0)
    ]
    negative = list(
        Account.objects.filter(balance_minor__lt=0).exclude(kind=AccountKind.CASHIER).values_list("key", flat=True)
    )
    totals = dict.fromkeys(Currency.values, 0)
    for row in Account.objects.values("currency").annotate(total=Sum("balance_minor")):
        totals[row["currency"]] = row["total"] or 0
    pending = dict(
        FundsHold.objects.filter(transfer__isnull=True)
        .values("account_id")
        .annotate(total=Sum("amount_minor"))
        .values_list("account_id", "total")
    )
    unmatched = [
        key
        for pk, key, held in Account.objects.filter(Q(held_minor__gt=0) | Q(pk__in=list(pending))).values_list(
            "pk", "key", "held_minor"
        )
        if held != pending.get(pk, 0)
    ]
    broken = {
        *LedgerEntry.objects.exclude(account_id__in=Account.objects.values("pk")).values_list("pk", flat=True)[:100],
        *LedgerEntry.objects.exclude(transfer_id__in=Transfer.objects.values("pk")).values_list("pk", flat=True)[:100],
    }
    others = [problem for check in list_books_checks().values() for problem in check()]
    return BooksCheck(
        unbalanced, drifted, negative, totals, verify_chain(expect_head=expect_head), unmatched, sorted(broken), others
    )
