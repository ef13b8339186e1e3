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
  which nobody can compute before the round; auditors check it against drand themselves.

Every value used is stored in ``BeaconRound`` and shown on the public commitments page.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import urllib.request
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from config import ops_state
from tables.models import BeaconRound

logger = logging.getLogger(__name__)


def source() -> str:
    """The configured beacon: ``"local"`` or ``"drand"``."""
    return str(settings.BEACON)


def time_of(round_number: int) -> datetime:
    """When round ``round_number`` is released."""
    genesis = datetime.fromtimestamp(settings.BEACON_GENESIS_UNIX, tz=UTC)
    return genesis + timedelta(seconds=(round_number - 1) * settings.BEACON_PERIOD_SECONDS)


def round_after(moment: datetime) -> int:
    """The first round released strictly after ``moment`` (the round a hand's keys wait for)."""
    elapsed = (moment - datetime.fromtimestamp(settings.BEACON_GENESIS_UNIX, tz=UTC)).total_seconds()
    # Round r is released at genesis + (r - 1) * period: round floor(elapsed / period) + 1 is
    # the last released at or before the moment, the next one the first strictly after it.
    return max(1, int(elapsed // settings.BEACON_PERIOD_SECONDS) + 2)


def local_value(round_number: int) -> bytes:
    """The local beacon's value of a round (module docstring)."""
    return hmac.digest(settings.BEACON_KEY.encode(), b"beacon\x00" + str(int(round_number)).encode(), hashlib.sha256)


def value(round_number: int, *, now: datetime) -> bytes | None:
    """The value of a round once it is released (None before, or while drand is unreachable);
    stored in ``BeaconRound`` the first time it is used."""
    if now < time_of(round_number):
        return None
    kind = source()
    stored = BeaconRound.objects.filter(source=kind, round=round_number).values_list("value", flat=True).first()
    if stored:
        return bytes.fromhex(stored)
    fetched = local_value(round_number) if kind == "local" else _drand(round_number)
    ops_state.record_beacon(ok=fetched is not None)
    if fetched is None:
        return None
    try:
        with transaction.atomic():
            BeaconRound.objects.create(source=kind, round=round_number, value=fetched.hex(), fetched_at=now)
    except IntegrityError:
        pass  # another worker stored it first: the same value
    return fetched


def _drand(round_number: int) -> bytes | None:
    url = f"{settings.DRAND_URL.rstrip('/')}/public/{int(round_number)}"
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            data = json.loads(response.read(65536))
        if int(data["round"]) != int(round_number):
            raise ValueError(f"drand answered round {data['round']}")
        return bytes.fromhex(str(data["randomness"]))
    except Exception:
        logger.warning("drand round %s unavailable", round_number, exc_info=True)
        return None
