"""Jackpot money: the feeds a hand is dealt with, the spin award at the start of a hand, the
legs a settlement adds for contributions, royal awards and resets, and house funding.

Seed 001, Jackpots; DESIGN item 12. The arithmetic (how much, who wins) is the engine's
(``tables.engine.widerpoker.hand_outcome``, ``spin_jackpot_draw``); this module only moves
the money, always in balanced ledger transfers, locking accounts in primary-key order
after the table (STYLE, Services and transactions). No account ever goes negative: a reset
is paid from the house reserve only as far as the reserve holds money (FUN chips are
virtual, so a FUN reset comes from the cashier like the sign-up chips).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone

from jackpots.errors import InvalidJackpotError
from jackpots.models import (
    DEFAULT_ONE_IN,
    MAX_CONTRIBUTION_BPS,
    Jackpot,
    JackpotEvent,
    JackpotEventKind,
    JackpotKind,
    account_key,
)
from wallet import services as wallet_services
from wallet.models import Account, AccountKind, Currency, Transfer, TransferKind
from wallet.money import format_minor

SPIN_KINDS = (JackpotKind.GOLD, JackpotKind.SILVER, JackpotKind.BRONZE)


def jackpot_account(jackpot: Jackpot) -> Account:
    """The wallet account holding the jackpot's balance (created on first use)."""
    return ensure_jackpot_account(feed=jackpot.feed_key, currency=jackpot.currency)


def ensure_jackpot_account(*, feed: str, currency: str) -> Account:
    """The account of the jackpot named ``feed`` (``jackpot:<id>``) in ``currency``."""
    return wallet_services.ensure_account(key=account_key(feed, currency), kind=AccountKind.JACKPOT, currency=currency)


def reserve_account(currency: str) -> Account:
    """The house account that pays jackpot resets in ``currency``."""
    return wallet_services.ensure_house_account(kind=AccountKind.RESERVE, currency=currency)


def validate_jackpot(*, kind: str, currency: str, contribution_bps: int, reset_minor: int, one_in: int | None) -> None:
    """Refuse a jackpot configuration out of range, naming the field (InvalidJackpotError)."""
    if kind not in JackpotKind.values:
        raise InvalidJackpotError(f"unknown jackpot kind {kind!r}", field="kind")
    if currency not in Currency.values:
        raise InvalidJackpotError(f"unknown currency {currency!r}", field="currency")
    if not 0 <= contribution_bps <= MAX_CONTRIBUTION_BPS:
        raise InvalidJackpotError("a jackpot takes 0 to 10% (1000 bps) of the gross", field="contribution_bps")
    if reset_minor < 0:
        raise InvalidJackpotError("the reset amount cannot be negative", field="reset_minor")
    if kind == JackpotKind.ROYAL:
        if one_in is not None:
            raise InvalidJackpotError("the royal jackpot is won by a royal flush, not drawn", field="one_in")
    elif one_in is None or not 2 <= one_in <= 10_000_000:
        raise InvalidJackpotError("a spin jackpot is drawn 1 in N hands, N from 2 to 10,000,000", field="one_in")


def validate_table_jackpots(*, table_currency: str, jackpots: list[Jackpot]) -> None:
    """A table's jackpots: its own currency, at most one of each kind, their contributions
    together at most 10% and their spin probabilities together below 1."""
    kinds: set[str] = set()
    for jackpot in jackpots:
        if jackpot.currency != table_currency:
            raise InvalidJackpotError(
                f"{jackpot.name} is in {jackpot.currency}, the table plays {table_currency}", field="jackpots"
            )
        if jackpot.kind in kinds:
            raise InvalidJackpotError(f"the table already has a {jackpot.get_kind_display()} jackpot", field="jackpots")
        kinds.add(jackpot.kind)
    if sum(jackpot.contribution_bps for jackpot in jackpots) > MAX_CONTRIBUTION_BPS:
        raise InvalidJackpotError("a table's jackpots take at most 10% of the gross together", field="jackpots")
    from tables.engine.widerpoker import spin_outcomes

    try:
        # kind and odds only: a jackpot being created has no id, hence no feed key, yet
        spin_outcomes(spin_one_in([{"kind": jackpot.kind, "one_in": jackpot.one_in} for jackpot in jackpots]))
    except ValueError as error:
        raise InvalidJackpotError(str(error), field="jackpots") from error


def feed(jackpot: Jackpot) -> dict[str, Any]:
    """The frozen description of a jackpot stored in a hand's conditions (``config["jackpots"]``)."""
    return {
        "key": jackpot.feed_key,
        "id": jackpot.pk,
        "name": jackpot.name,
        "kind": jackpot.kind,
        "contribution_bps": jackpot.contribution_bps,
        "reset_minor": jackpot.reset_minor,
        "one_in": jackpot.one_in,
        "spin_overrides": dict(jackpot.spin_overrides or {}),
    }


def table_feeds(*, table_id: int, currency: str) -> list[dict[str, Any]]:
    """The active jackpots a table feeds and can win, as stored in the hand it deals."""
    jackpots = Jackpot.objects.filter(tables__id=table_id, is_active=True, currency=currency).order_by("kind", "pk")
    return [feed(jackpot) for jackpot in jackpots]


def spin_one_in(feeds: list[dict[str, Any]]) -> dict[Any, int]:
    """``{SpinJackpot: N}`` for the spin jackpots among ``feeds`` (the engine's draw table)."""
    from tables.engine.widerpoker import SpinJackpot

    return {
        SpinJackpot(f["kind"]): int(f["one_in"] or DEFAULT_ONE_IN[JackpotKind(f["kind"])])
        for f in feeds
        if f["kind"] in SPIN_KINDS
    }


@dataclass(frozen=True)
class ResetLegs:
    """The legs that restart a jackpot from its reset amount, and how much was paid."""

    legs: list[wallet_services.Leg]
    paid_minor: int


def reset_legs(*, jackpot_account_id: int, currency: str, reset_minor: int) -> ResetLegs:
    """Legs paying a jackpot's reset amount: from the cashier for FUN chips (virtual), else
    from the house reserve as far as it holds money (never negative; a short reserve restarts
    the jackpot lower and the dashboard shows the reserve's balance)."""
    if reset_minor <= 0:
        return ResetLegs([], 0)
    if currency == Currency.FUN:
        source = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=currency)
        amount = reset_minor
    else:
        source = reserve_account(currency)
        balance = (
            Account.objects.select_for_update(no_key=True)
            .filter(pk=source.pk)
            .values_list("balance_minor", flat=True)[0]
        )
        amount = min(reset_minor, balance)
    if amount <= 0:
        return ResetLegs([], 0)
    return ResetLegs([wallet_services.Leg(source.pk, -amount), wallet_services.Leg(jackpot_account_id, amount)], amount)


def award_spin(*, jackpot_id: int, hand_id: int, escrow_account_id: int, now: datetime) -> int:
    """Move a spin jackpot drawn at the start of hand ``hand_id`` into the hand's escrow, so
    the hand's allocation pays it (seed 001, Jackpots 2), and restart the jackpot from its
    reset amount; one transfer ``spin:<hand>``. Returns the amount added to the pool.
    Call inside the deal's transaction, after the table's lock."""
    jackpot = Jackpot.objects.get(pk=jackpot_id)
    account = jackpot_account(jackpot)
    balance = (
        Account.objects.select_for_update(no_key=True).filter(pk=account.pk).values_list("balance_minor", flat=True)[0]
    )
    reset = reset_legs(jackpot_account_id=account.pk, currency=jackpot.currency, reset_minor=jackpot.reset_minor)
    legs = [wallet_services.Leg(account.pk, -balance), wallet_services.Leg(escrow_account_id, balance), *reset.legs]
    reference = f"spin:{hand_id}"
    if any(leg.delta_minor for leg in legs):
        wallet_services.post_transfer(
            reference=reference,
            kind=TransferKind.JACKPOT,
            currency=jackpot.currency,
            legs=legs,
            memo=(
                f"{jackpot.name} drawn in hand {hand_id}: {format_minor(balance, jackpot.currency)} to the pool, "
                f"reset {format_minor(reset.paid_minor, jackpot.currency)}"
            ),
        )
    JackpotEvent.objects.create(
        jackpot=jackpot,
        kind=JackpotEventKind.SPIN_WON,
        amount_minor=balance,
        hand_id=hand_id,
        transfer_reference=reference,
        created_at=now,
    )
    if reset.paid_minor:
        JackpotEvent.objects.create(
            jackpot=jackpot,
            kind=JackpotEventKind.RESET,
            amount_minor=reset.paid_minor,
            hand_id=hand_id,
            transfer_reference=reference,
            created_at=now,
        )
    return balance


def lock_balances(account_ids: list[int]) -> dict[int, int]:
    """Lock accounts in primary-key order and read their balances."""
    return dict(
        Account.objects.select_for_update(no_key=True)
        .filter(pk__in=sorted(set(account_ids)))
        .order_by("pk")
        .values_list("pk", "balance_minor")
    )


def record_royal(*, hand_id: int, award: dict[str, Any], reset_paid_minor: int, now: datetime) -> None:
    """Record a royal jackpot won at settlement (and its reset) as jackpot events."""
    jackpot_id = int(str(award["key"]).split(":")[1])
    JackpotEvent.objects.create(
        jackpot_id=jackpot_id,
        kind=JackpotEventKind.ROYAL_WON,
        amount_minor=int(award["amount_minor"]),
        hand_id=hand_id,
        winners=list(award["winners"]),
        transfer_reference=f"settle:{hand_id}",
        created_at=now,
    )
    if reset_paid_minor:
        JackpotEvent.objects.create(
            jackpot_id=jackpot_id,
            kind=JackpotEventKind.RESET,
            amount_minor=reset_paid_minor,
            hand_id=hand_id,
            transfer_reference=f"settle:{hand_id}",
            created_at=now,
        )


@transaction.atomic(durable=True)
def fund_jackpot(*, jackpot_id: int, amount_minor: int, reference: str, staff_user_id: int) -> None:
    """Seed a jackpot with house money (from the cashier), e.g. its first balance. Idempotent on
    ``reference``. Raises InvalidJackpotError for a non-positive amount."""
    if amount_minor <= 0:
        raise InvalidJackpotError("the amount must be positive", field="amount_minor")
    jackpot = Jackpot.objects.get(pk=jackpot_id)
    account = jackpot_account(jackpot)
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=jackpot.currency)
    wallet_services.post_transfer(
        reference=reference,
        kind=TransferKind.HOUSE_FUNDING,
        currency=jackpot.currency,
        legs=[wallet_services.Leg(cashier.pk, -amount_minor), wallet_services.Leg(account.pk, amount_minor)],
        memo=f"House funds {jackpot.name} (staff {staff_user_id})",
    )
    JackpotEvent.objects.get_or_create(
        jackpot=jackpot,
        kind=JackpotEventKind.SEEDED,
        transfer_reference=reference,
        defaults={"amount_minor": amount_minor, "created_at": timezone.now()},
    )


@transaction.atomic(durable=True)
def fund_house_account(*, kind: str, currency: str, amount_minor: int, reference: str, staff_user_id: int) -> None:
    """Move house money from the cashier into the jackpot reserve or the promotions account.
    Idempotent on ``reference``. Raises InvalidJackpotError for a bad kind or amount."""
    post_house_funding(
        kind=kind, currency=currency, amount_minor=amount_minor, reference=reference, staff_user_id=staff_user_id
    )


def post_house_funding(
    *, kind: str, currency: str, amount_minor: int, reference: str, staff_user_id: int, reason: str = ""
) -> Transfer:
    """The building block of ``fund_house_account`` (plain atomic, for a caller that also
    writes its audit row): cashier -> reserve or promotions, ``amount_minor`` in minor units,
    the ``reason`` in the transfer's memo. Idempotent on ``reference`` (the transfer recorded
    the first time is returned). Raises InvalidJackpotError (``field``: kind, amount_minor)."""
    if kind not in (AccountKind.RESERVE, AccountKind.PROMOTIONS):
        raise InvalidJackpotError("only the jackpot reserve and promotions are funded this way", field="kind")
    if currency not in Currency.values:
        raise InvalidJackpotError(f"unknown currency {currency!r}", field="currency")
    if amount_minor <= 0:
        raise InvalidJackpotError("the amount must be positive", field="amount_minor")
    target = wallet_services.ensure_house_account(kind=kind, currency=currency)
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=currency)
    return wallet_services.post_transfer(
        reference=reference,
        kind=TransferKind.HOUSE_FUNDING,
        currency=currency,
        legs=[wallet_services.Leg(cashier.pk, -amount_minor), wallet_services.Leg(target.pk, amount_minor)],
        memo=f"House funds {kind} (staff {staff_user_id})" + (f": {reason}" if reason else ""),
        created_by_id=staff_user_id,
    )


def seed_from_reserve(
    *, jackpot: Jackpot, amount_minor: int, reference: str, staff_user_id: int, now: datetime
) -> None:
    """A new jackpot's starting amount, ``amount_minor`` in minor units, moved from the house's
    jackpot reserve (from the cashier for FUN chips, which are virtual, like a reset: see
    ``reset_legs``) in one transfer ``reference``, recorded as a "funded by the house" event.
    Plain atomic: call inside the caller's transaction. Raises InvalidJackpotError
    (``field="starting_minor"``) when the reserve holds less than the amount: fund the
    reserve first (nothing moved)."""
    if amount_minor <= 0:
        return
    account = jackpot_account(jackpot)
    legs = reset_legs(jackpot_account_id=account.pk, currency=jackpot.currency, reset_minor=amount_minor)
    if legs.paid_minor < amount_minor:
        raise InvalidJackpotError(
            f"the jackpot reserve holds {format_minor(legs.paid_minor, jackpot.currency)}, less than "
            f"{format_minor(amount_minor, jackpot.currency)}: fund the reserve first",
            field="starting_minor",
        )
    wallet_services.post_transfer(
        reference=reference,
        kind=TransferKind.HOUSE_FUNDING,
        currency=jackpot.currency,
        legs=legs.legs,
        memo=f"{jackpot.name} starts at {format_minor(amount_minor, jackpot.currency)} (staff {staff_user_id})",
        created_by_id=staff_user_id,
    )
    JackpotEvent.objects.get_or_create(
        jackpot=jackpot,
        kind=JackpotEventKind.SEEDED,
        transfer_reference=reference,
        defaults={"amount_minor": amount_minor, "created_at": now},
    )


def jackpot_balances(jackpot_ids: list[int]) -> dict[int, int]:
    """Current balance of each jackpot by id (0 before its first contribution)."""
    jackpots = list(Jackpot.objects.filter(pk__in=jackpot_ids))
    balances = dict(
        Account.objects.filter(key__in=[j.account_key for j in jackpots]).values_list("key", "balance_minor")
    )
    return {j.pk: int(balances.get(j.account_key, 0)) for j in jackpots}
