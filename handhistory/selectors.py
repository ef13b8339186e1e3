"""The hand history's house reads: who may read every hand (the access rule: a player sees
only the hands he played; staff holding ``tables.view_hand``, croupiers and auditors, see
every hand; anyone else gets HandNotFoundError, exactly as for a hand that does not exist),
and the public commitments page (seed chains, commitments, beacon rounds, cancellations).
WiderPoker's hands are read in handhistory.widerpoker, exported in handhistory.export;
Hold'em's in handhistory.holdem."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.utils import timezone

from tables.holdem.records import seed_is_public
from tables.models import Hand, HandStatus
from tables.services import beacon

VIEW_ALL_PERMISSION = "tables.view_hand"

Viewer = User | AnonymousUser


def can_view_all_hands(viewer: Viewer) -> bool:
    """Whether the viewer is staff allowed to read every hand (the "view hand" permission)."""
    return bool(
        viewer.is_authenticated and viewer.is_active and viewer.is_staff and viewer.has_perm(VIEW_ALL_PERMISSION)
    )


def list_commitments(*, hands: int = 50) -> dict[str, Any]:
    """What the public commitments page shows: every seed chain (table, anchor, length, how
    many hands used it, when published), the latest hands' commitments with their chain
    position and beacon round (the seed and chain seed only once the hand is over), the
    latest Hold'em hands' commitments likewise, and the beacon values used. Nothing secret.
    Practice games are private (seed 004): their chains and hands are not listed."""
    from tables.models import BeaconRound, HoldemHand

    now = timezone.now()

    chains = list_anchors()
    latest = [
        {
            "table": hand.table.name,
            "number": hand.number,
            "id": hand.pk,
            "commitment": hand.commitment,
            "chain": hand.chain_id,
            "index": hand.chain_index,
            "beacon_round": hand.beacon_round,
            "chain_seed": hand.chain_seed if hand.is_terminal else None,
            "status": hand.status,
        }
        for hand in Hand.objects.select_related("table").filter(algorithm__gte=2).order_by("-started_at", "-pk")[:hands]
    ]
    rounds = list(
        BeaconRound.objects.order_by("-round").values("source", "round", "value", "signature", "fetched_at")[:hands]
    )
    holdem = [
        {
            "table": hand.table.name,
            "number": hand.number,
            "commitment": hand.commitment,
            "chain": hand.chain_id,
            "index": hand.chain_index,
            # Hold'em seeds follow the hand's release time (docs/provably-fair.md, Card
            # commitments); the next hand's commitment equals this chain seed all the same.
            "chain_seed": hand.chain_seed if seed_is_public(hand, now=now) else None,
        }
        for hand in HoldemHand.objects.select_related("table")
        .filter(table__practice__isnull=True)
        .order_by("-started_at", "-pk")[:hands]
    ]
    return {
        "chains": chains,
        "hands": latest,
        "rounds": rounds,
        "holdem_hands": holdem,
        "cancellations": list_beacon_cancellations(limit=hands),
        "cancellation_rates": list_cancellation_rates(),
    }


def list_anchors() -> list[dict[str, Any]]:
    """Every public seed chain (practice games' excepted), by table then publication: table,
    chain id, anchor, length, hands used, ``created_at`` (aware, UTC) and the beacon round it
    was published with (``published_round``, its release time and value; docs/provably-fair.md,
    "Anchors")."""
    from tables.models import SeedChain

    return [
        {
            "table": chain.table.name,
            "table_id": chain.table_id,
            "id": chain.pk,
            "anchor": chain.anchor,
            "length": chain.length,
            "used": chain.next_index - 1,
            "created_at": chain.created_at.astimezone(UTC),
            "published_round": chain.published_round,
            "published_round_at": None
            if chain.published_round is None
            else beacon.time_of(chain.published_round).astimezone(UTC),
            "published_round_value": chain.published_round_value or None,
        }
        for chain in SeedChain.objects.select_related("table")
        .filter(table__practice__isnull=True)
        .order_by("table__name", "created_at", "pk")
    ]


ANCHORS_FORMAT = "widerpoker-anchors/1"


def get_anchors_feed() -> dict[str, Any]:
    """The anchors feed (``/history/commitments/anchors.json``) an outsider archives: the
    beacon (source; for drand the chain hash, public key, genesis and period) and every
    chain of ``list_anchors`` with times as ISO 8601 in UTC. Nothing secret."""
    from tables import drand

    return {
        "format": ANCHORS_FORMAT,
        "generated_at": timezone.now().astimezone(UTC).isoformat(),
        "beacon": {
            "source": beacon.source(),
            "chain_hash": drand.QUICKNET_CHAIN_HASH,
            "scheme": drand.SCHEME,
            "genesis_time": settings.BEACON_GENESIS_UNIX,
            "period_seconds": settings.BEACON_PERIOD_SECONDS,
        },
        "chains": [
            {
                **chain,
                "created_at": chain["created_at"].isoformat(),
                "published_round_at": None
                if chain["published_round_at"] is None
                else chain["published_round_at"].isoformat(),
            }
            for chain in list_anchors()
        ],
    }


def list_beacon_cancellations(*, limit: int = 50) -> list[dict[str, Any]]:
    """The latest WiderPoker hands cancelled once their beacon round was due, newest first,
    each with its table, number, reason and the evidence kept at cancellation
    (``tables.services.beacon.outage_evidence``). Public: such a cancellation may be an
    operator walking away from an outcome it disliked, so it is never hidden. Algorithm 3's
    freezes given up before their deal (``HandFreeze.abandoned_at``: the deal round never
    came, or too few frozen players could still play) are listed with them, ``hand_id`` None."""
    from tables.models import HandFreeze

    freezes = [
        {
            "table": freeze.table.name,
            "table_id": freeze.table_id,
            "hand_id": None,
            "number": freeze.number,
            "cancelled_at": freeze.abandoned_at,
            "reason": "inputs frozen, not dealt: " + str((freeze.evidence or {}).get("answer", "")),
            "evidence": freeze.evidence,
        }
        for freeze in HandFreeze.objects.select_related("table")
        .filter(abandoned_at__isnull=False, table__practice__isnull=True)
        .order_by("-abandoned_at", "-pk")[:limit]
    ]
    hands = [
        {
            "table": hand.table.name,
            "table_id": hand.table_id,
            "hand_id": hand.pk,
            "number": hand.number,
            "cancelled_at": hand.settled_at,
            "reason": hand.cancel_reason,
            "evidence": hand.beacon_evidence,
        }
        for hand in Hand.objects.select_related("table")
        .filter(status=HandStatus.CANCELLED, beacon_evidence__isnull=False, table__practice__isnull=True)
        .order_by("-settled_at", "-pk")[:limit]
    ]
    rows: list[dict[str, Any]] = hands + freezes
    return sorted(rows, key=lambda row: str(row["cancelled_at"].isoformat()), reverse=True)[:limit]


RATES_CACHE_KEY = "commitments:cancellation-rates"
RATES_CACHE_SECONDS = 300


def list_cancellation_rates(*, months: int = 12) -> list[dict[str, Any]]:
    """Cancellations per table and per calendar month (UTC, by the month the hand ended) of
    the last ``months`` months, newest month first: ``dealt`` terminal WiderPoker hands,
    ``cancelled`` of them, ``after_beacon`` those cancelled once their beacon round was due,
    ``abandoned`` algorithm 3's freezes given up before their deal (``HandFreeze.abandoned_at``,
    by the month they were given up: a hand walked away from before any money moved), and
    ``rate`` the share in percent (one decimal) of cancelled hands and abandoned freezes among
    the hands and abandoned freezes (docs/provably-fair.md 1.7). An aggregate over every hand
    of the period on a public page: computed at most every ``RATES_CACHE_SECONDS``."""
    from zoneinfo import ZoneInfo

    from django.core.cache import cache
    from django.db.models import Count, Q
    from django.db.models.functions import TruncMonth

    from tables.models import HandFreeze

    key = f"{RATES_CACHE_KEY}:{months}"
    cached = cache.get(key)
    if cached is not None:
        return list(cached)
    since = timezone.now() - timedelta(days=31 * months)
    rows = (
        Hand.objects.filter(
            status__in=[HandStatus.SETTLED, HandStatus.CANCELLED], settled_at__gte=since, table__practice__isnull=True
        )
        .annotate(month=TruncMonth("settled_at", tzinfo=ZoneInfo("UTC")))
        .values("month", "table_id", "table__name")
        .annotate(
            dealt=Count("id"),
            cancelled=Count("id", filter=Q(status=HandStatus.CANCELLED)),
            after_beacon=Count("id", filter=Q(status=HandStatus.CANCELLED, beacon_evidence__isnull=False)),
        )
        .order_by("-month", "table__name")
    )
    counts: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        month = row["month"].strftime("%Y-%m")
        counts[(month, row["table_id"])] = {
            "month": month,
            "table": row["table__name"],
            "table_id": row["table_id"],
            "dealt": row["dealt"],
            "cancelled": row["cancelled"],
            "after_beacon": row["after_beacon"],
            "abandoned": 0,
        }
    freezes = (
        HandFreeze.objects.filter(abandoned_at__gte=since, table__practice__isnull=True)
        .annotate(month=TruncMonth("abandoned_at", tzinfo=ZoneInfo("UTC")))
        .values("month", "table_id", "table__name")
        .annotate(abandoned=Count("id"))
    )
    for row in freezes:
        month = row["month"].strftime("%Y-%m")
        empty = {"month": month, "table": row["table__name"], "table_id": row["table_id"]}
        counts.setdefault((month, row["table_id"]), {**empty, "dealt": 0, "cancelled": 0, "after_beacon": 0})
        counts[(month, row["table_id"])]["abandoned"] = row["abandoned"]
    rates = sorted(counts.values(), key=lambda rate: (rate["table"], rate["table_id"]))
    rates.sort(key=lambda rate: str(rate["month"]), reverse=True)
    for rate in rates:
        given_up = rate["cancelled"] + rate["abandoned"]
        rate["rate"] = f"{100 * given_up / (rate['dealt'] + rate['abandoned']):.1f}"
    cache.set(key, rates, RATES_CACHE_SECONDS)
    return rates
