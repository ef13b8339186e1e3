"""The public randomness beacon that fixes each hand's change keys after its change deadline
(docs/provably-fair.md, "Algorithm 2"; tables.engine.fairness.keys_seed).

A hand is dealt with the number of the first beacon round strictly after its change
deadline; settlement waits for that round's value. Rounds are ``period`` seconds apart from
``genesis`` (drand's quicknet: 3 s). Two sources:

* ``local`` (embedded default, tests): ``value(r) = HMAC-SHA256(POKER_BEACON_KEY, "beacon"
  0x00 r)``, released at the round's time. It keeps the keys from anyone who reads the
  database before the deadline (an insider), but the operator holds the key: production
  uses drand.
* ``drand``: the round's ``randomness`` from the drand HTTP API (``/public/<round>``),
  which nobody can compute before the round. The round's BLS signature is checked against
  the chain's public key (``POKER_DRAND_PUBLIC_KEY``, quicknet's by default; ``tables.drand``)
  and the value used is ``SHA-256(signature)``: a round that fails the check is refused,
  never used, exactly like a silent beacon.

Every value used is stored in ``BeaconRound`` (with its signature) and shown on the public
commitments page. A hand cancelled once its round was due keeps the evidence of what the
beacon answered (``outage_evidence``; docs/export-format.md, ``beacon_evidence``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from config.infra import ops_state
from tables import drand
from tables.models import BeaconRound

logger = logging.getLogger(__name__)


def source() -> str:
    """The configured beacon: ``"local"`` or ``"drand"``."""
    return str(settings.BEACON)


def time_of(round_number: int) -> datetime:
    """When round ``round_number`` is released."""
    genesis = datetime.fromtimestamp(settings.BEACON_GENESIS_UNIX, tz=UTC)
    return genesis + timedelta(seconds=(round_number - 1) * settings.BEACON_PERIOD_SECONDS)


def period_within(pause: timedelta) -> timedelta:
    """One beacon period (``BEACON_PERIOD_SECONDS``), at most ``pause``: how long before the
    end of a pause between hands a table's next hand freezes, so that its deal round (the
    first released strictly after the freeze, ``round_after``) is out when the pause ends
    (algorithm 3; Hold'em's and WiderPoker's ``freeze_lead``)."""
    return min(pause, timedelta(seconds=settings.BEACON_PERIOD_SECONDS))


def round_after(moment: datetime) -> int:
    """The first round released strictly after ``moment`` (the round a hand's keys wait for)."""
    elapsed = (moment - datetime.fromtimestamp(settings.BEACON_GENESIS_UNIX, tz=UTC)).total_seconds()
    # Round r is released at genesis + (r - 1) * period: round floor(elapsed / period) + 1 is
    # the last released at or before the moment, the next one the first strictly after it.
    return max(1, int(elapsed // settings.BEACON_PERIOD_SECONDS) + 2)


def local_value(round_number: int) -> bytes:
    """The local beacon's value of a round (module docstring)."""
    return hmac.digest(settings.BEACON_KEY.encode(), b"beacon\x00" + str(int(round_number)).encode(), hashlib.sha256)


@dataclass(frozen=True)
class Answer:
    """What the beacon gave for a round: its ``value`` (None if none usable), the drand
    ``signature`` (hex, empty for the local beacon) and, when there is no value, ``error``:
    what the source answered (not released yet, unreachable, a wrong round, a signature that
    does not verify)."""

    value: bytes | None
    signature: str = ""
    error: str = ""


def fetch(round_number: int, *, now: datetime) -> Answer:
    """The round's value once released and valid, stored in ``BeaconRound`` the first time
    it is used; otherwise an ``Answer`` whose ``error`` says why."""
    if now < time_of(round_number):
        return Answer(None, error=f"round {round_number} is not released until {time_of(round_number).isoformat()}")
    kind = source()
    stored = BeaconRound.objects.filter(source=kind, round=round_number).values_list("value", "signature").first()
    if stored and stored[0]:
        return Answer(bytes.fromhex(stored[0]), signature=stored[1])
    answer = Answer(local_value(round_number)) if kind == "local" else _drand(round_number)
    ops_state.record_beacon(ok=answer.value is not None)
    if answer.value is None:
        return answer
    try:
        with transaction.atomic():
            BeaconRound.objects.create(
                source=kind, round=round_number, value=answer.value.hex(), signature=answer.signature, fetched_at=now
            )
    except IntegrityError:
        pass  # another worker stored it first: the same value
    return answer


def value(round_number: int, *, now: datetime) -> bytes | None:
    """The value of a round once it is released (None before, while drand is unreachable,
    or when its answer fails the signature check); see ``fetch``."""
    return fetch(round_number, now=now).value


def round_at_publication(*, now: datetime) -> tuple[int, str]:
    """The beacon round a seed chain's anchor is published with, and its value (hex): one
    that existed at ``now``, so the publication cannot be older than it. The local beacon:
    the last round released at ``now``. drand: the newest round the platform holds (fetched
    and verified for a hand), if released by ``now``; else the last round released at
    ``now`` without its value (anyone reads it from drand). Never asks the network: this
    runs inside the deal's transaction."""
    latest = max(1, round_after(now) - 1)
    if source() == "local":
        return latest, local_value(latest).hex()
    held = (
        BeaconRound.objects.filter(source="drand", round__lte=latest)
        .order_by("-round")
        .values_list("round", "value")
        .first()
    )
    if held is not None and held[0] >= latest - 200:  # at most ten minutes old
        return int(held[0]), str(held[1])
    return latest, ""


def outage_evidence(round_number: int, *, waited_since: datetime, now: datetime, answer: str) -> dict[str, Any]:
    """The record a hand cancelled after its beacon round was due keeps (and its export
    shows as ``beacon_evidence``): the beacon, the round awaited and when it was due, since
    when and until when settlement waited (seconds), the beacon's last answer, and the
    round's value and signature if the platform holds them after all (then anyone can
    compute what the hand would have dealt). Times are ISO 8601 in UTC."""
    stored = BeaconRound.objects.filter(source=source(), round=round_number).values_list("value", "signature").first()
    state = ops_state.beacon_state()
    failing = state.failing_since
    return {
        "source": source(),
        "url": settings.DRAND_URL if source() == "drand" else None,
        "round": int(round_number),
        "due_at": time_of(round_number).astimezone(UTC).isoformat(),
        "waited_since": waited_since.astimezone(UTC).isoformat(),
        "gave_up_at": now.astimezone(UTC).isoformat(),
        "waited_seconds": max(0, int((now - waited_since).total_seconds())),
        "answer": answer[:300],
        "failing_since": None if failing is None else datetime.fromtimestamp(failing, tz=UTC).isoformat(),
        "value": stored[0] if stored else None,
        "signature": (stored[1] or None) if stored else None,
    }


def _drand(round_number: int) -> Answer:
    """Fetch and check a drand round (``tables.drand``); never raises."""
    url = f"{settings.DRAND_URL.rstrip('/')}/public/{int(round_number)}"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            data = json.loads(response.read(65536))
    except Exception as error:
        logger.warning("drand round %s unavailable", round_number, exc_info=True)
        return Answer(None, error=f"{url}: {type(error).__name__}: {error}")
    try:
        answered = int(data["round"])
        signature = bytes.fromhex(str(data["signature"]))
        claimed = str(data.get("randomness", ""))
    except (KeyError, TypeError, ValueError) as error:
        return Answer(None, error=f"{url}: malformed answer ({type(error).__name__}: {error})")
    if answered != int(round_number):
        return Answer(None, error=f"{url}: answered round {answered}")
    if not drand.verify_round(answered, signature, settings.DRAND_PUBLIC_KEY):
        logger.error("drand round %s: the signature does not verify; refused", round_number)
        return Answer(None, signature=signature.hex(), error=f"round {answered}: signature does not verify, refused")
    randomness = drand.randomness(signature)
    if claimed and claimed.lower() != randomness.hex():
        return Answer(None, signature=signature.hex(), error=f"round {answered}: randomness is not SHA-256(signature)")
    return Answer(randomness, signature=signature.hex())
