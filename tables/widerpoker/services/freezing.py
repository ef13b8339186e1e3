"""WiderPoker's algorithm 3 (docs/provably-fair.md 1.9): a table's next hand's inputs freeze,
and the first beacon round released after the freeze deals it. The clock's steps for it,
called by ``tables.widerpoker.services.lifecycle``: the freeze (in PostgreSQL when it can,
``_freeze_in_database``; in Python otherwise, ``_freeze``), the deal at the deal round
(``_deal_frozen``) and a freeze given up (``_abandon``). Issue 23 set what each reads."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from functools import cache
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Q

from config.infra import metrics
from tables.engine import fairness
from tables.gamespec import MALFUNCTION_PAUSE
from tables.models import HandFreeze, PlayerClientSeed, Seat, SeatStatus, Table, TableGame
from tables.services import beacon
from tables.services import fairness as fairness_services
from tables.services.seating import presence_expression
from tables.widerpoker.services.deal import _deal, _Frozen, frozen_columns, names_and_seeds
from wallet import protection
from wallet import services as wallet_services
from wallet.lookups import IntArray
from wallet.models import is_chip_currency

logger = logging.getLogger(__name__)


FREEZE_SAMPLE = 16


def freeze_lead(table: Table) -> timedelta:
    """How long before the end of a table's results the next hand's inputs freeze (algorithm
    3, docs/provably-fair.md 1.9): one beacon period (``BEACON_PERIOD_SECONDS``), at most the
    results' ``results_seconds``. The deal round (the first round released strictly after
    the freeze) is then out when the results end, so neither the freeze's step nor the wait
    for the round falls between the results and the next change phase (issue 23, item 2; as
    Hold'em's ``freeze_lead``). Zero when the next hand does not freeze from the table's
    seats: algorithm 2, a closed table, staff changes waiting (the table restarts), or a
    tournament's table (chips ``T<id>``: it deals its entrants at the results' end)."""
    if (
        settings.DEAL_ALGORITHM < fairness.ALGORITHM_DEAL_BEACON
        or not table.is_open
        or table.pending_changes
        or is_chip_currency(table.currency)
    ):
        return timedelta(0)
    return beacon.period_within(timedelta(seconds=table.widerpoker.results_seconds))


def _deal_at(deal_round: int, not_before: datetime | None) -> datetime:
    """When a freeze's hand is dealt: its deal round's time, and not before ``not_before``
    (the end of the previous hand's results, when the freeze ran ``freeze_lead`` early)."""
    due = beacon.time_of(deal_round)
    return due if not_before is None else max(due, not_before)


def _two_can_play(table: Table, user_ids: list[int], *, now: datetime) -> bool:
    """Algorithm 3's readiness at the freeze (rules A.3: two players who can pay the ante):
    whether two of the first ``FREEZE_SAMPLE`` of ``user_ids`` (the active players in seat
    order) can pay ``ante_minor`` now and are not barred by player protection. Reads those
    few wallets (no lock) and their protection rows only. False sends the caller to the full
    read of every wallet, which sits out who cannot play and freezes the others, or waits."""
    sample = user_ids[:FREEZE_SAMPLE]
    ante = table.widerpoker.ante_minor
    accounts, wallets = wallet_services.lock_and_read_players(user_ids=sample, currency=table.currency, lock=False)
    barred = protection.barred_players(user_ids=sample, currency=table.currency, stake_minor=ante, now=now)
    can_pay = wallets.available(np.array([accounts[user_id] for user_id in sample], dtype=np.int64)) >= ante
    return sum(1 for user_id, ok in zip(sample, can_pay.tolist(), strict=True) if ok and user_id not in barred) >= 2


def named_not_dealt(listed: list[tuple[int, str]]) -> list[dict[str, str]]:
    """``listed`` (user id, reason; an empty reason: "sitting out") as the export's
    ``not_dealt`` rows, ``[{player, reason}]``, the names read by one query."""
    if not listed:
        return []
    names = fairness_services.usernames([user_id for user_id, _ in listed])
    return [{"player": names.get(user_id, "?"), "reason": why or "sitting out"} for user_id, why in listed]


def _update_seats(seat_ids: list[int], **values: Any) -> None:
    """Set ``values`` on the seats ``seat_ids`` (ids as one array parameter)."""
    Seat.objects.filter(pk__any_of=IntArray(seat_ids)).update(**values)


def _freeze(
    table: Table,
    user_ids: list[int],
    not_dealt: list[dict[str, str]],
    *,
    players: dict[int, tuple[str, str | None]],
    now: datetime,
    not_before: datetime | None = None,
) -> None:
    """Algorithm 3 (docs/provably-fair.md): fix the next hand's inputs at ``now``, the
    players ``user_ids`` dealt in with their client seeds (digest ``D``) and the chain
    element's index, and wait for the **deal round**, the first beacon round released
    strictly after ``now``, whose value decides the hand. No money moves yet; the public
    frame shows the freeze (``frozen``) and the table is due again at the round's time, or
    at ``not_before`` (the end of the previous hand's results) if that is later.
    ``players``: user id -> (name, client seed or None) as read with the seats in this
    transaction (issue 23: the players are not read a second time)."""
    chain, index = fairness_services.next_chain_index(table, now=now)
    names, seeds = names_and_seeds(user_ids, players, now=now)
    digest = fairness.client_seeds_digest([(names[u], seeds[u]) for u in user_ids])
    deal_round = beacon.round_after(now)
    deal_at = _deal_at(deal_round, not_before)
    HandFreeze.objects.create(
        table=table,
        number=table.hands_dealt + 1,
        chain=chain,
        chain_index=index,
        players=[[u, names[u], seeds[u]] for u in user_ids],
        digest=digest.hex(),
        not_dealt=not_dealt,
        deal_round=deal_round,
        frozen_at=now,
        deal_at=deal_at,
    )
    table.phase_deadline = deal_at
    table.version += 1


def _freeze_in_database(table: Table, *, now: datetime, not_before: datetime | None = None) -> bool:
    """Algorithm 3's freeze on PostgreSQL with the players never brought into Python (issue
    23: reading 100,000 seats, names and client seeds into tuples, then dumping them again as
    the freeze's JSON, was most of a freeze's second). The same freeze as ``_freeze`` after
    the general path: the disconnected leave (rules Notes 2), and one ``INSERT … SELECT``
    writes every connected active player ``[user_id, name, client_seed]`` in seat order
    (``json_agg``) with the digest of their ``name:seed`` lines sorted by name
    (``client_seeds_digest``, computed by ``sha256``: UTF-8 byte order is code point order).

    Returns False when the general path must decide: fewer than two of the first
    ``FREEZE_SAMPLE`` connected active players can play (nothing written: it sits out who
    cannot, or waits), or fewer than two are left by the time of the insert (a race with
    players leaving: only the disconnected have been marked left). A player still without a
    client seed gets one (as ``names_and_seeds`` gives it); a name or seed
    ``client_seeds_digest`` refuses raises its ValueError. ``not_before``: as ``_freeze``'s."""
    connected = presence_expression(now)
    seats = Seat.objects.filter(table=table).exclude(status=SeatStatus.LEFT).alias(connected=connected)
    sample = list(
        seats.filter(connected=True, status=SeatStatus.ACTIVE)
        .order_by("joined_at", "pk")
        .values_list("user_id", flat=True)[:FREEZE_SAMPLE]
    )
    if len(sample) < 2 or not _two_can_play(table, sample, now=now):
        return False
    gone = list(seats.filter(connected=False).order_by("joined_at", "pk").values_list("pk", "user_id"))
    if gone:
        _update_seats(
            [seat_id for seat_id, _ in gone], status=SeatStatus.LEFT, status_reason="disconnected", left_at=now
        )
        table.version += 1
    # Now every seat neither left nor sitting out is a connected active player: the frozen ones.
    listed = [(user_id, "disconnected") for _, user_id in gone]
    listed += (
        Seat.objects.filter(table=table, status=SeatStatus.SITTING_OUT)
        .order_by("pk")
        .values_list("user_id", "status_reason")
    )
    not_dealt = named_not_dealt(listed)
    deal_round = beacon.round_after(now)
    deal_at = _deal_at(deal_round, not_before)
    try:
        # A savepoint: should no freeze be written after all, the chain index taken for it
        # (and any client seed given) goes back, so no chain element is skipped unseen.
        with transaction.atomic():
            chain, index = fairness_services.next_chain_index(table, now=now)
            params = {
                "table": table.pk,
                "active": SeatStatus.ACTIVE.value,
                "number": table.hands_dealt + 1,
                "chain": chain.pk,
                "index": index,
                "not_dealt": json.dumps(not_dealt),
                "round": deal_round,
                "now": now,
                "deal_at": deal_at,
            }
            _insert_freeze(table, params, now=now)
    except _NotFrozenError:
        return False  # fewer than two left since the sample: the general path decides
    table.phase_deadline = deal_at
    table.version += 1
    return True


class _NotFrozenError(Exception):
    """``_insert_freeze`` wrote no freeze: fewer than two connected active players."""


def _insert_freeze(table: Table, params: dict[str, Any], *, now: datetime) -> None:
    """Run the freeze's statement with ``params``; give the players still without a client
    seed one and run it again once. Raises _NotFrozenError when it inserted nothing for want of
    two players, ValueError for a name or seed the digest refuses."""
    for attempt in range(2):
        with connection.cursor() as cursor:
            cursor.execute(_freeze_sql(), params)
            row = cursor.fetchone()
        assert row is not None
        _players, unseeded, refused, inserted = row
        if inserted is not None:
            return
        if refused:
            raise ValueError("a name has no ':' or newline, a client seed no newline")
        if not unseeded or attempt:
            raise _NotFrozenError
        # Seats older than joining making client seeds: their players get one now, stored.
        missing = Seat.objects.filter(table=table, status=SeatStatus.ACTIVE, user__client_seed__isnull=True)
        fairness_services.client_seeds(list(missing.values_list("user_id", flat=True)), now=now)


@cache
def _freeze_sql() -> str:
    """The freeze's one statement (``_freeze_in_database``): the frozen players aggregated
    where they are; the row inserted only when every one has a client seed and the digest
    accepts every line; the counts returned either way. Made once the apps are loaded (the
    user model's table)."""
    return f"""
WITH live AS (
    SELECT s.id, s.user_id, s.joined_at, u.username AS name, c.seed
    FROM {Seat._meta.db_table} s
    JOIN {get_user_model()._meta.db_table} u ON u.id = s.user_id
    LEFT JOIN {PlayerClientSeed._meta.db_table} c ON c.user_id = s.user_id
    WHERE s.table_id = %(table)s AND s.status = %(active)s
), agg AS (
    SELECT count(*) AS players,
           count(*) FILTER (WHERE seed IS NULL) AS unseeded,
           coalesce(bool_or(strpos(name, ':') > 0 OR strpos(name, E'\\n') > 0 OR strpos(seed, E'\\n') > 0), false)
               AS refused,
           json_agg(json_build_array(user_id, name, seed) ORDER BY joined_at, id) AS frozen,
           encode(sha256(convert_to(string_agg(name || ':' || seed, E'\\n' ORDER BY name COLLATE "C"), 'UTF8')), 'hex')
               AS digest
    FROM live
), inserted AS (
    INSERT INTO {HandFreeze._meta.db_table}
        (table_id, number, chain_id, chain_index, players, digest, not_dealt, deal_round, frozen_at, deal_at)
    SELECT %(table)s, %(number)s, %(chain)s, %(index)s, frozen, digest, %(not_dealt)s::jsonb, %(round)s, %(now)s,
           %(deal_at)s
    FROM agg WHERE players >= 2 AND unseeded = 0 AND NOT refused
    RETURNING id
)
SELECT agg.players, agg.unseeded, agg.refused, (SELECT id FROM inserted) FROM agg
"""


def _deal_frozen(table: Table, freeze: HandFreeze, *, now: datetime) -> None:
    """Deal the frozen hand once its deal round's value is available (until then the table
    is due again a second later). Every frozen player is dealt in except one who can no
    longer pay the ante or whom player protection now bars: his entry is left out, but he
    stays in the hand seed and the entry order, so nobody's cards change (the export lists
    him in ``not_dealt`` with his client seed). A round that does not come within
    ``BEACON_MAX_WAIT_SECONDS``, or fewer than two players left, abandons the freeze, which
    stays in the database with its evidence; no money had moved. Not before the freeze's
    ``deal_at`` (the previous hand's results end then: ``freeze_lead``)."""
    if freeze.deal_at is not None and now < freeze.deal_at:
        table.phase_deadline = freeze.deal_at
        return
    due = beacon.time_of(int(freeze.deal_round))
    answer = beacon.fetch(int(freeze.deal_round), now=now)
    if answer.value is None:
        if now - due < timedelta(seconds=settings.BEACON_MAX_WAIT_SECONDS):
            table.phase_deadline = max(due, now + timedelta(seconds=1))
            return
        _abandon(table, freeze, now=now, answer=answer.error or "no value")
        return
    players = freeze.players  # read now (deferred until the round's value is out)
    frozen_ids, frozen_names, frozen_seeds = frozen_columns(players)
    user_ids = np.array(frozen_ids, dtype=np.int64)
    # The wallets found, locked and read by one statement (issue 23: once, not twice).
    accounts, locked = wallet_services.lock_and_read_players(user_ids=frozen_ids, currency=table.currency)
    account_ids = np.array([accounts[u] for u in frozen_ids], dtype=np.int64)
    barred = protection.barred_players(
        user_ids=frozen_ids, currency=table.currency, stake_minor=table.widerpoker.ante_minor, now=now
    )
    can_pay = locked.available(account_ids) >= table.widerpoker.ante_minor
    away = _away_since_freeze(table, freeze, frozen_ids)
    kept = can_pay
    if barred or away:
        kept = kept & np.array([u not in barred and u not in away for u in frozen_ids], dtype=bool)

    def why(user_id: int) -> str:
        if user_id in barred:
            return str(barred[user_id].code).replace("_", " ")
        if user_id in away:
            return "left" if away[user_id] == SeatStatus.LEFT else "sitting out"
        return "insufficient funds"

    left_out = np.flatnonzero(~kept).tolist()  # usually none of 100,000
    dropped: list[dict[str, Any]] = [
        {
            "player": frozen_names[at],
            "reason": why(frozen_ids[at]),
            "client_seed": frozen_seeds[at],
            "frozen": True,
        }
        for at in left_out
    ]
    for reason in sorted({str(row["reason"]) for row in dropped} - {"left", "sitting out"}):
        # Who cannot pay or is barred sits out (the freeze left that to this step).
        out = [frozen_ids[at] for at, row in zip(left_out, dropped, strict=True) if row["reason"] == reason]
        Seat.objects.filter(table=table, user_id__any_of=IntArray(out)).update(
            status=SeatStatus.SITTING_OUT, status_reason=reason
        )
    if int(kept.sum()) < 2:
        _abandon(table, freeze, now=now, answer="fewer than two frozen players could still play")
        return
    draw = fairness_services.ChainDraw(
        freeze.chain, int(freeze.chain_index), fairness_services.chain_element(freeze.chain, int(freeze.chain_index))
    )
    with metrics.timed(metrics.DEAL_DURATION, TableGame.WIDERPOKER):
        hand = _deal(
            table,
            user_ids[kept],
            account_ids[kept],
            locked=locked,
            now=now,
            frozen=_Frozen(freeze, draw, answer, kept, (frozen_ids, frozen_names, frozen_seeds)),
        )
    metrics.count_on_commit(metrics.HANDS, TableGame.WIDERPOKER, "dealt")
    listed = [*freeze.not_dealt, *dropped]
    if listed:
        hand.not_dealt = listed
        hand.save(update_fields=["not_dealt"])
    freeze.delete()


# How far another process's clock may lag the clock's: a seat left that long before the
# freeze is read too (and dropped, as it was not frozen).
AWAY_CLOCK_MARGIN = timedelta(minutes=5)


def _away_since_freeze(table: Table, freeze: HandFreeze, frozen_ids: list[int]) -> dict[int, str]:
    """The frozen players ``frozen_ids`` who left or sat out during the wait for the deal
    round (user id -> seat status): they are not dealt in and pay nothing. Only active
    players were frozen, so these are among the table's seats sitting out now and those that
    left since the freeze (``left_at``, set by every way out of a WiderPoker table; index
    ``seat_left_recent``): a handful of rows, where asking for the 100,000 frozen players'
    seats cost 0.2 s (issue 23)."""
    since = freeze.frozen_at - AWAY_CLOCK_MARGIN
    changed = list(
        Seat.objects.filter(table=table)
        .filter(Q(status=SeatStatus.SITTING_OUT) | Q(status=SeatStatus.LEFT, left_at__gte=since))
        .values_list("user_id", "status")
    )
    if not changed:
        return {}
    frozen = set(frozen_ids)
    return {user_id: status for user_id, status in changed if user_id in frozen}


def _abandon(table: Table, freeze: HandFreeze, *, now: datetime, answer: str) -> None:
    """Give up a freeze (its round never came, or too few players were left), keeping it
    with the evidence (``beacon.outage_evidence``); the table tries a new freeze after
    ``MALFUNCTION_PAUSE``. The freeze's chain element is released and never used, so the
    signer, which releases no element ahead, serves the next freeze's."""
    try:
        fairness_services.chain_element(freeze.chain, int(freeze.chain_index))
    except Exception:
        logger.exception("table %s: the abandoned freeze's chain element was not released", table.pk)
    freeze.abandoned_at = now
    freeze.evidence = beacon.outage_evidence(
        int(freeze.deal_round), waited_since=freeze.frozen_at, now=now, answer=answer
    )
    freeze.save(update_fields=["abandoned_at", "evidence"])
    table.phase_deadline = now + MALFUNCTION_PAUSE
    table.version += 1
