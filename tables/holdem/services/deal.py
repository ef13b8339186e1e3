"""The Hold'em clock's step and the deal: play the due turn or freeze and deal the next hand.

The clock (``tables.clock.advance_due_tables``) calls ``advance_holdem_table`` with the
table's row locked (SKIP LOCKED + version check in ``tables.clock.advance_table``),
so a duplicated tick does nothing. Between hands this module applies staff changes, seats
and releases house bots, freezes the next hand's inputs (who is dealt in, the button,
their client seeds: algorithm 3, docs/provably-fair.md section 12) and deals it once its
beacon round is out. Who plays from where is the engine's rule
(``tables.engine.holdem.seat_hand``); the hand in play is ``hands``.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_migrate

from config.infra import metrics
from tables.engine import fairness
from tables.engine.holdem import (
    ALGORITHM_DEAL_ROUND,
    HandState,
    client_seed_commitment,
    deal_seed,
    freeze_digest,
    freeze_lines,
    seat_hand,
)
from tables.holdem.policy import policy_of
from tables.holdem.records import replay
from tables.holdem.selectors import HoldemTableRows, find_current_hand, read_holdem_seats
from tables.holdem.services import hands
from tables.holdem.services.bots import BOT_PREFIX, _seat_bot, manage_bots
from tables.holdem.services.conditions import apply_pending_holdem_changes
from tables.holdem.step_rows import read_step_rows
from tables.models import (
    HoldemConditions,
    HoldemFreeze,
    HoldemFreezeStatus,
    HoldemHand,
    HoldemHandPlayer,
    HoldemHandStatus,
    Seat,
    SeatStatus,
    Table,
    TableGame,
    TablePhase,
)
from tables.services import beacon
from tables.services import fairness as fairness_services
from tables.services.presence import is_connected
from wallet import protection

__all__ = ["BOT_PREFIX", "_seat_bot", "advance_holdem_table"]  # the bots' home was this module

_ROUND_VALUES: dict[tuple[str, int], bytes] = {}
"""Beacon rounds' values this process has fetched and committed (``beacon.fetch`` stored
them in ``BeaconRound`` and checked them), by (source, round). A released round's value
never changes and is public: the hundreds of tables dealt at the same round read it once
per process, not once per deal (issue 23, item 6). The newest ``_ROUNDS_KEPT`` are kept."""

_ROUNDS_KEPT = 64


def _remember_round(known: tuple[str, int], value: bytes | None) -> None:
    if value is None:
        return
    if len(_ROUND_VALUES) >= _ROUNDS_KEPT:
        for old in sorted(_ROUND_VALUES)[: _ROUNDS_KEPT // 2]:
            del _ROUND_VALUES[old]
    _ROUND_VALUES[known] = value


def _forget_round_values(**_: object) -> None:
    """A flushed or migrated database (a test's teardown) may reuse what was remembered."""
    _ROUND_VALUES.clear()


post_migrate.connect(_forget_round_values, weak=False, dispatch_uid="tables.holdem.round_values")


def advance_holdem_table(table: Table, *, now: datetime) -> HoldemTableRows | None:
    """One clock step of a Hold'em table whose deadline has passed (row locked by the
    caller, which bumps ``version`` when this changes it): play the due turn (a bot's
    decision, a leaving player's fold, or the timeout rule), or deal the next hand.

    Returns the rows the step holds when it played an action or dealt a hand (the caller's
    push builds the public frame from them, ``build_holdem_table_frame``, instead of
    reading them again), else None (a freeze, a wait, staff changes)."""
    rows = read_step_rows(table)  # conditions, newest hand, pending freeze, seats: one statement
    conditions, newest = rows.conditions, rows.newest
    if table.phase == TablePhase.PLAYING:
        hand = newest if newest is not None and newest.status == HoldemHandStatus.PLAYING else hands.running_hand(table)
        if hand is not None:
            return hands.play_due_turn(table, conditions, hand, now=now, seats=rows.seats)
    freeze = rows.freeze
    if freeze is not None:
        done, dealt = _deal_frozen(table, conditions, freeze, now=now, seats=rows.seats)
        if done:
            return dealt
    return _start_hand_or_wait(table, conditions, now=now, after_pause=freeze is None, held=rows.seats, last=newest)


def _start_hand_or_wait(
    table: Table,
    conditions: HoldemConditions,
    *,
    now: datetime,
    after_pause: bool = True,
    held: list[Seat] | None = None,
    last: HoldemHand | None = None,
) -> HoldemTableRows | None:
    """Apply pending staff changes, seat or release house bots, then freeze the next hand
    (``_freeze``, dealt at its beacon round) when two or more players can play; otherwise
    wait (joining wakes the table). ``after_pause`` False: a void freeze is replaced at
    once, the pause between hands already over. Returns the rows of the public frame after
    a freeze (the last hand replayed, the seats as they now are, the freeze: no read
    besides the step's own), else None. ``held`` and ``last``: the table's positioned seats
    and newest hand as the step read them (``read_step_rows``), else read here."""
    if table.pending_changes and apply_pending_holdem_changes(table, conditions, now=now):
        for seat in Seat.objects.filter(table=table, position__gte=conditions.seats).exclude(status=SeatStatus.LEFT):
            hands.release_seat(table, seat, now=now, reason="seat removed")
        table.version += 1
        held = None  # seats freed: read them again
    if not table.is_open:
        for seat in Seat.objects.filter(table=table, position__isnull=False).exclude(status=SeatStatus.LEFT):
            hands.release_seat(table, seat, now=now, reason="table closed")
        table.phase = TablePhase.CLOSED
        table.phase_deadline = None
        table.version += 1
        return None
    policy = policy_of(table)
    # One read of the positioned seats with their users' names: the busted, the bots, who is
    # dealt in, and the pushed frame (it was four reads: issue 23, item 6); read again only
    # after a seat was freed or taken here.
    if held is None:
        held = read_holdem_seats(table)
    changed = False
    if not policy.practice:
        changed = _release_busted_and_gone(table, held, now=now)
    if policy.practice:
        # A BigHoldem practice game seats its own bots and sets each hand's level (seed 004).
        from tables.holdem.practice.services import prepare_practice_hand

        if not prepare_practice_hand(table, conditions, now=now):
            return None
        changed = True
    else:
        changed = manage_bots(table, conditions, held, now=now) or changed
    if changed:
        held = read_holdem_seats(table)
    seats = [
        seat for seat in held if seat.position is not None and seat.status == SeatStatus.ACTIVE and seat.stack_minor > 0
    ]  # by position (read_holdem_seats' order)
    seats = _sit_out_absent(table, seats, now=now)
    if len(seats) < 2:
        if table.phase != TablePhase.WAITING:
            table.version += 1
        table.phase = TablePhase.WAITING
        table.phase_deadline = None
        return None
    if last is None:
        last = find_current_hand(table)
    frozen = _freeze(table, conditions, seats, last, now=now, after_pause=after_pause)
    state = None if last is None else replay(last)
    return HoldemTableRows(conditions, last, state, held, frozen, lobby_line=True)


def _sit_out_absent(table: Table, seats: list[Seat], *, now: datetime) -> list[Seat]:
    """Sit out the people among ``seats`` who cannot play the next hand (disconnected, or
    barred by player protection: the reason is the seat's ``status_reason``); returns the
    seats that can."""
    humans = [seat for seat in seats if not seat.is_bot]
    gone = [seat for seat in humans if not is_connected(seat, now=now)]
    barred = protection.barred_players(
        user_ids=[seat.user_id for seat in humans],
        currency=table.currency,
        # The chips in play were counted against a loss limit when bought (buy_in, until the
        # cash_out): a hand stakes nothing new; only a player past his limit (lowered since) sits out.
        stake_minor=0,
        now=now,
    )
    out = {seat.pk for seat in gone} | {seat.pk for seat in humans if seat.user_id in barred}
    for seat in seats:
        if seat.pk in out:
            why = "disconnected" if seat in gone else barred[seat.user_id].code.replace("_", " ")
            Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.SITTING_OUT, status_reason=why)
            seat.status, seat.status_reason = SeatStatus.SITTING_OUT, why  # the held row as written
            table.version += 1
    return [seat for seat in seats if seat.pk not in out]


def _release_busted_and_gone(table: Table, held: list[Seat], *, now: datetime) -> bool:
    """Before a deal, free the seat of every person with no chips left who is no longer at
    the table (``is_connected``: his page closed past the reconnection grace, or unseen for
    ``PRESENCE_TIMEOUT_SECONDS``): he cannot play without adding chips, and his seat is
    taken from players who could (UX audit 2026-11-26, N16: such a seat stayed 25 minutes).
    A busted player still at the table keeps his seat to add chips. Nothing to cash out.
    ``held``: the table's positioned seats read in this transaction. Returns whether a seat
    was freed."""
    freed = False
    for seat in held:
        if seat.is_bot or seat.stack_minor != 0 or seat.status == SeatStatus.LEFT or seat.position is None:
            continue
        if not is_connected(seat, now=now):
            hands.release_seat(table, seat, now=now, reason="no chips")
            table.version += 1
            freed = True
    return freed


def _freeze(
    table: Table,
    conditions: HoldemConditions,
    seats: list[Seat],
    last: HoldemHand | None,
    *,
    now: datetime,
    after_pause: bool,
) -> HoldemFreeze:
    """Freeze and publish the next hand's inputs (algorithm 3, docs/provably-fair.md section
    12): who is dealt in (``seats``: active, connected, with chips) with the button, who
    waits for the big blind or posts one now, the chain element, every dealt-in player's
    client seed (a fresh random one for each house bot) and the conditions. The hand is
    dealt (``_deal_frozen``) once the first beacon round released strictly after now is
    out, and not before the pause between hands is over (``after_pause``: ``freeze_lead``
    after the current deadline)."""
    count = conditions.seats
    previous = last  # the table's last hand (``find_current_hand``), read by the caller
    if last is not None and last.status == HoldemHandStatus.CANCELLED:
        previous = (
            HoldemHand.objects.filter(table=table)
            .exclude(status=HoldemHandStatus.CANCELLED)
            .order_by("-number")
            .first()
        )
    order = seats
    if previous is None:
        # A fresh table: the first person (not a house bot) who sat down deals (seed 003, The
        # First round). A practice game seats everyone at once, seat 0 first, the person on
        # a random seat: seat 0 deals, so the first dealer is random (seed 004, PRE-FLOP).
        bots_last = policy_of(table).bots_deal_last  # chosen by _start_hand_or_wait: no query
        order = sorted(seats, key=lambda s: (bots_last and s.is_bot, s.joined_at, s.pk))
    seating = seat_hand(
        None if previous is None else int(previous.setup["button"]),
        [int(s.position) for s in order if s.position is not None],
        {int(s.position): s.blind_choice for s in seats if s.position is not None},
        count,
    )
    button, waiting, posting = seating.button, seating.waiting, seating.posting
    stacks: list[int | None] = [None] * count
    for seat in seats:
        assert seat.position is not None
        stacks[seat.position] = int(seat.stack_minor)
    dealt = [s for s in seats if s.position not in waiting]
    draw = fairness_services.next_chain_seed(table, now=now)
    humans = [s.user_id for s in dealt if not s.is_bot]
    seeds = fairness_services.client_seeds(humans, now=now) if humans else {}
    for seat in dealt:
        if seat.is_bot:
            seeds[seat.user_id] = secrets.token_hex(16)  # fresh for every hand, committed below
    number = table.hands_dealt + 1
    round_number = beacon.round_after(now)
    due = table.phase_deadline or now
    deal_at = beacon.time_of(round_number)
    if after_pause and table.phase == TablePhase.RESULTS:
        deal_at = max(deal_at, due + hands.freeze_lead())
    commitment = hashlib.sha256(draw.seed).hexdigest()
    players = [
        {
            "seat": int(s.position or 0),
            "user_id": s.user_id,
            "name": s.user.username,
            "bot": s.is_bot,
            "personality": s.bot_personality if s.is_bot else "",
            "client_seed": seeds[s.user_id],
        }
        for s in dealt
    ]
    lines = freeze_lines(
        table_id=table.pk,
        number=number,
        chain_id=draw.chain.pk,
        chain_index=draw.index,
        commitment=commitment,
        button=button,
        seats=[
            (int(s.position or 0), s.user.username, client_seed_commitment(s.user.username, seeds[s.user_id]))
            for s in dealt
        ],
        deal_round=round_number,
    )
    config = conditions.snapshot() | {"mode": table.mode, "currency": table.currency}
    if policy_of(table).call_all_in_for_less is not None:
        # BigHoldem: short of a bet, fold (seed 004 Rilancio)
        config["call_all_in_for_less"] = policy_of(table).call_all_in_for_less
    frozen = HoldemFreeze.objects.create(
        table=table,
        number=number,
        frozen_at=now,
        deal_round=round_number,
        deal_at=deal_at,
        chain=draw.chain,
        chain_index=draw.index,
        chain_seed=draw.seed.hex(),
        commitment=commitment,
        inputs={
            "button": button,
            "waiting": sorted(waiting),
            "posting": sorted(posting),
            "stacks": stacks,
            "config": config,
            "players": players,
        },
        digest=freeze_digest(lines).hex(),
    )
    table.phase_deadline = deal_at
    table.version += 1
    return frozen


def _deal_frozen(
    table: Table, conditions: HoldemConditions, freeze: HoldemFreeze, *, now: datetime, seats: list[Seat] | None = None
) -> tuple[bool, HoldemTableRows | None]:
    """Deal the frozen hand once its beacon round is out (algorithm 3): the server seed is
    ``deal_seed(hand_seed_v2, freeze digest, round value)``. Returns (True, the rows the
    deal holds for its push) when the freeze was dealt, (True, None) when it still waits
    (the table's deadline moved to when to look again), (False, None) when it was void
    (the caller freezes anew). ``seats``: the table's positioned seats with their users, by
    position, as the step read them (``read_step_rows``), else read here."""
    if now < freeze.deal_at:
        table.phase_deadline = freeze.deal_at
        return True, None
    if not table.is_open:
        hands.void_freeze(table, freeze, reason="the table closed", now=now)
        return False, None
    known = (beacon.source(), int(freeze.deal_round))
    round_value = _ROUND_VALUES.get(known)
    if round_value is None:
        answer = beacon.fetch(int(freeze.deal_round), now=now)
        if answer.value is None:
            due = beacon.time_of(int(freeze.deal_round))
            if now - due < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
                table.phase_deadline = now + timedelta(seconds=1)
                return True, None
            evidence = beacon.outage_evidence(int(freeze.deal_round), waited_since=due, now=now, answer=answer.error)
            hands.void_freeze(table, freeze, reason="the randomness beacon did not answer", now=now, evidence=evidence)
            return False, None
        round_value = answer.value
        transaction.on_commit(lambda: _remember_round(known, answer.value))
    inputs = freeze.inputs
    players = list(inputs["players"])
    stacks = list(inputs["stacks"])
    # One read of every positioned seat with its user: the frozen ones checked here, all of
    # them for the next turn (``start_turn``) and the pushed frame.
    if seats is None:
        seats = read_holdem_seats(table)
    current = {s.position: s for s in seats if s.status != SeatStatus.LEFT}
    for player in players:
        seat = current.get(int(player["seat"]))
        if seat is None or seat.user_id != int(player["user_id"]) or seat.stack_minor != stacks[int(player["seat"])]:
            hands.void_freeze(table, freeze, reason="a frozen seat changed before the deal", now=now)
            return False, None
    with metrics.timed(metrics.DEAL_DURATION, TableGame.HOLDEM):
        hand, state = _deal(table, freeze, round_value, now=now, seats={s.position: s for s in seats})
    metrics.count_on_commit(metrics.HANDS, TableGame.HOLDEM, "dealt")
    return True, HoldemTableRows(conditions, hand, state, seats, lobby_line=True)


def _deal(
    table: Table, freeze: HoldemFreeze, round_value: bytes, *, now: datetime, seats: dict[int | None, Seat]
) -> tuple[HoldemHand, HandState]:
    """Deal the frozen hand ``freeze`` with its beacon round's value: the deck comes from the
    table's seed chain, the players' client seeds, the frozen inputs and the round
    (docs/provably-fair.md, 12, algorithm 3). ``seats``: the table's positioned seats by
    position, read in this transaction, updated in place as written. Returns the hand and
    its engine state (settled when everyone was all in on the blinds)."""
    inputs = freeze.inputs
    players = list(inputs["players"])
    number = int(freeze.number)
    pairs = [(str(p["name"]), str(p["client_seed"])) for p in players]
    chain_seed = bytes.fromhex(freeze.chain_seed)
    seed = deal_seed(fairness.hand_seed(chain_seed, table.pk, number, pairs), bytes.fromhex(freeze.digest), round_value)
    dealt_positions = [int(p["seat"]) for p in players]
    hand = HoldemHand(
        table=table,
        number=number,
        server_seed=seed.hex(),
        commitment=freeze.commitment,
        algorithm=ALGORITHM_DEAL_ROUND,
        chain_id=freeze.chain_id,
        chain_index=freeze.chain_index,
        chain_seed=freeze.chain_seed,
        client_seeds=[list(pair) for pair in pairs],
        config=inputs["config"],
        setup={
            "stacks": inputs["stacks"],
            "button": int(inputs["button"]),
            "waiting": list(inputs["waiting"]),
            "posting": list(inputs["posting"]),
            "showdown_choice": True,  # players show or muck themselves (seed 003, Showdown)
        },
        players=[
            {
                "seat": int(p["seat"]),
                "user_id": int(p["user_id"]),
                "name": str(p["name"]),
                "bot": bool(p["bot"]),
                **({"personality": str(p["personality"])} if p["bot"] else {}),
            }
            for p in players
        ],
        started_at=now,
        frozen_at=freeze.frozen_at,
        deal_round=freeze.deal_round,
        deal_beacon_value=round_value.hex(),
        freeze_digest=freeze.digest,
    )
    state = hands.showdown_until_choice(
        table, hand, replay(hand), now=now, seats=seats
    )  # all-in on the blinds: a run-out
    if not state.is_over:  # the first turn goes in the hand's INSERT (not a second UPDATE)
        hands.start_turn(table, hand, state, now=now, seats=seats)
    hand.save()
    freeze.status = HoldemFreezeStatus.DEALT
    freeze.hand = hand
    freeze.save(update_fields=["status", "hand"])
    HoldemHandPlayer.objects.bulk_create(
        [
            HoldemHandPlayer(
                hand=hand,
                user_id=int(p["user_id"]),
                seat=int(p["seat"]),
                is_bot=bool(p["bot"]),
                starting_minor=int(inputs["stacks"][int(p["seat"])]),
            )
            for p in players
        ]
    )
    if any(position not in seats or seats[position].blind_choice for position in dealt_positions):
        # Only when a dealt seat held a choice (the held seats were read in this transaction).
        Seat.objects.filter(table=table, position__in=dealt_positions).update(blind_choice="")
        for position in dealt_positions:
            if position in seats:
                seats[position].blind_choice = ""
    protection.record_play(user_ids=[int(p["user_id"]) for p in players if not p["bot"]], now=now)
    table.hands_dealt = number
    table.phase = TablePhase.PLAYING
    table.version += 1
    if state.is_over:  # everyone all-in on the blinds: nothing to decide
        hands.settle(table, hand, state, now=now, seats=seats)
    return hand, state
