"""Helpers of the Hold'em table tests: tables, the books identity of a Hold'em table, and
the clock driven with an injected ``now``."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import Sum

from tables.clock import advance_table
from tables.engine.holdem import replay_phh
from tables.holdem.services import act_in_hand, create_holdem_table, replay
from tables.holdem.services.hands import pending_freeze
from tables.holdem.services.money import escrow_key
from tables.models import HoldemHand, HoldemHandStatus, PracticeGame, Seat, SeatStatus, Table, TablePhase
from tables.services.seating import touch_presence
from wallet.models import Account
from wallet.selectors import check_books


def holdem_table(name: str = "Hold'em Rail", *, mode: str = "fun", currency: str = "FUN", **config: Any) -> Table:
    """A no-limit 5/10 Hold'em table, buy-in 200..2,000, 5% rake capped at 30, 6 seats."""
    values: dict[str, Any] = {
        "small_blind_minor": 5,
        "big_blind_minor": 10,
        "min_buy_in_minor": 200,
        "max_buy_in_minor": 2_000,
        "rake_cap_minor": 30,
        **config,
    }
    return create_holdem_table(name=name, mode=mode, currency=currency, **values)


def escrow_balance(table: Table) -> int:
    account = Account.objects.filter(key=escrow_key(table.pk)).first()
    return 0 if account is None else int(account.balance_minor)


def assert_books(table: Table) -> None:
    """The ledger is intact and the table's escrow holds exactly the seats' stacks (the
    stacks are the starting stacks while a hand runs: the pots are still in the escrow)."""
    books = check_books()
    assert books.ok, books
    stacks = Seat.objects.filter(table=table).aggregate(total=Sum("stack_minor"))["total"] or 0
    assert escrow_balance(table) == stacks
    assert not Seat.objects.filter(table=table, status=SeatStatus.LEFT, stack_minor__gt=0).exists()


def tick(table: Table, now: datetime) -> bool:
    """Keep the people at the table connected, then advance its clock at ``now``. A hand
    due to be dealt at ``now`` is dealt at ``now`` (``deal_now``: its inputs frozen a beacon
    period earlier, algorithm 3), so the tests' clock reads as before the freeze."""
    if deal_now(table, now):
        return True
    return _advance(table, now)


def deal_now(table: Table, now: datetime) -> bool:
    """When the table is due to deal at ``now`` (no hand running, none frozen, its deadline
    passed), freeze the hand one beacon period before ``now`` (as a clock that had woken a
    period earlier would) and deal it at ``now``: the first beacon round after the freeze is
    out by then (a practice game is frozen no earlier than it started, and dealt at its round
    when that is later). Returns whether the clock advanced."""
    table.refresh_from_db()
    if table.phase not in (TablePhase.WAITING, TablePhase.RESULTS) or table.phase_deadline is None:
        return False
    if table.phase_deadline > now or pending_freeze(table) is not None:
        return False
    earlier = now - timedelta(seconds=settings.BEACON_PERIOD_SECONDS)
    started = PracticeGame.objects.filter(table=table).values_list("started_at", flat=True).first()
    if started is not None:
        earlier = max(earlier, started)  # a practice game's clock starts with the game
    Table.objects.filter(pk=table.pk).update(phase_deadline=min(table.phase_deadline, earlier))
    _advance(table, earlier)
    freeze = pending_freeze(table)
    if freeze is None:
        return False
    return _advance(table, max(now, freeze.deal_at))


def _advance(table: Table, now: datetime) -> bool:
    for seat in Seat.objects.filter(table=table, is_bot=False).exclude(status=SeatStatus.LEFT):
        touch_presence(table_id=table.pk, user_id=seat.user_id, now=now)
    advanced = advance_table(table_id=table.pk, now=now)
    table.refresh_from_db()
    return advanced


def run_until(table: Table, now: datetime, *, hands: int, limit: int = 2_000) -> datetime:
    """Tick at each deadline until ``hands`` hands are terminal; returns the clock."""
    for _ in range(limit):
        if HoldemHand.objects.filter(table=table).exclude(status=HoldemHandStatus.PLAYING).count() >= hands:
            return now
        table.refresh_from_db()
        if table.phase_deadline is not None:
            now = max(now, table.phase_deadline) + timedelta(milliseconds=1)
        else:
            now += timedelta(seconds=1)
        tick(table, now)
    raise AssertionError("the hands did not finish")


def assert_phh_replays(table: Table) -> int:
    """Every settled hand whose PHH could be written replays, through the engine's
    ``replay_phh``, to the stored finishing stacks (in dealing order). Returns how many."""
    checked = 0
    for hand in HoldemHand.objects.filter(table=table, status=HoldemHandStatus.SETTLED):
        if not hand.phh:
            assert hand.phh_error, f"hand {hand.pk} has neither PHH nor a reason"
            continue
        finishing = hand.results["finishing_stacks"]
        button = int(hand.setup["button"])
        seats = sorted((int(s) for s in finishing), key=lambda s: (s - button - 1) % len(hand.setup["stacks"]))
        assert replay_phh(hand.phh) == tuple(finishing[str(s)] for s in seats)
        checked += 1
    return checked


def play_hand_out(table: Table, by_seat: dict[int, User], now: datetime) -> HoldemHand:
    """Deal the table's next hand (``tick``) and play it to its settlement through
    ``act_in_hand``, as the seated people would: the first to act raises to 100, then
    everyone checks or calls (so the flop is dealt and the hand is raked). Returns the
    settled hand."""
    tick(table, now)
    hand = HoldemHand.objects.filter(table=table).order_by("-number").first()
    assert hand is not None and hand.status == HoldemHandStatus.PLAYING
    for _ in range(40):
        state = replay(hand)
        if state.is_over or hand.status != HoldemHandStatus.PLAYING:
            break
        legal = state.legal_actions()
        user = by_seat[legal.seat]
        if not hand.actions and "raise" in legal.kinds:
            act_in_hand(table_id=table.pk, user_id=user.pk, kind="raise", amount=100, now=now)
        else:
            kind = passive_kind(legal.kinds)
            act_in_hand(table_id=table.pk, user_id=user.pk, kind=kind, now=now)
        hand.refresh_from_db()
    assert hand.status == HoldemHandStatus.SETTLED
    return hand


def passive_kind(kinds: Collection[str]) -> str:
    """The passive action among ``kinds``: check, else call; at the showdown, where a loser
    chooses (seed 003), muck when he may, else show (what the house policy did before
    players chose)."""
    for kind in ("muck", "show", "check"):
        if kind in kinds:
            return kind
    return "call"
