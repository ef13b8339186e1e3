"""The tamper-evident ledger: every transfer is sealed into a keyed hash chain per currency.

Security audit F6: a database superuser could TRUNCATE the ledger, disable its triggers or
rewrite a settled hand, and nothing would tell. Each transfer now stores

- ``sequence``: its place in its currency's chain (1, 2, 3, ... with no gap), and
- ``chain_hash``: ``HMAC-SHA256(LEDGER_KEY, canonical(transfer, legs, previous chain_hash))``,

and ``LedgerHead`` holds each chain's last sequence and hash. ``LEDGER_KEY`` lives in the
application's environment (``POKER_LEDGER_KEY``, by default derived from
``DJANGO_SECRET_KEY``), never in the database, so whoever can write the database but not
read the app's environment cannot forge a seal: an edited leg, memo or amount, a deleted
transfer (a gap in the sequence), or a row inserted behind the app's back (no valid seal)
shows up in ``verify_chain`` at the exact transfer. Cutting the tail of the chain and the
head together is the one change a key cannot reveal; an auditor's recorded head
(``verify_books --expect-head``) does.

Sealing does not serialise the house (issue 23, item 7). A transfer commits with a
``commit_mac`` (``HMAC-SHA256(LEDGER_KEY, "commit:" + canonical(..., sequence 0, previous
hash of zeros))``) and, when nobody else is sealing, sealed at once: at its tail
``post_transfer`` takes the currency's ``LedgerHead`` row with ``FOR UPDATE SKIP LOCKED``
(after the accounts, always in that order) and, if it got it, seals every committed
unsealed transfer of the currency it can see, in id order, then its own. A transfer whose
head was taken by another transaction commits unsealed (``sequence`` null, ``chain_hash``
empty) and does not wait: the next transfer to take the head, or the clock's
``wallet.services.seal_pending`` every tick, seals it, after checking its ``commit_mac``
(a row inserted or changed behind the application's back is never sealed). Sequences are
given at seal time, by the one holder of the head, so they stay 1, 2, 3, ... without a gap
and unique. ``POKER_LEDGER_SEAL=batch`` never takes the head in a transfer (the clock seals
every transfer, in batches); ``POKER_LEDGER_SEAL=wait`` restores the old behaviour (every
transfer waits for the head; for comparisons, ``bench/ledger.py``). On PostgreSQL a transfer
of a few legs is two statements (``wallet.services._post``: the lock-and-read with the head
try, then one write of the transfer, legs, balances and head); docs/deployment.md, "What one
transfer costs".

``verify_chain`` proves what it proved with inline seals (every sealed transfer chained,
no gap, no edit, the head at the chain's end) and, for the unsealed ones, that each has a
valid ``commit_mac`` and is younger than ``POKER_LEDGER_SEAL_LAG_SECONDS``: an older one
means sealing lags (readiness warns, ``widerpoker_ledger_unsealed_age_seconds``).

The canonical form (version 1) is the UTF-8 JSON text, without spaces, of::

    [1, currency, sequence, previous_hash, reference, kind, memo, created_by_id or null,
     created_at (UTC ISO 8601 with microseconds), [[account_id, delta_minor,
     balance_after_minor], ...] sorted by account_id]

with ``previous_hash`` = 64 zeros for a chain's first transfer.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from wallet.models import Currency, LedgerEntry, LedgerHead, Transfer

GENESIS_HASH = "0" * 64
CHAIN_VERSION = 1
CHUNK = 2000

LegTuple = tuple[int, int, int]
"""(account_id, delta_minor, balance_after_minor) of one ledger entry."""


def ledger_key() -> bytes:
    """The sealing key: ``settings.LEDGER_KEY`` as bytes."""
    key: str = settings.LEDGER_KEY
    return key.encode("utf-8")


def canonical(
    *,
    currency: str,
    sequence: int,
    previous_hash: str,
    reference: str,
    kind: str,
    memo: str,
    created_by_id: int | None,
    created_at: datetime,
    legs: Sequence[LegTuple] | str,
) -> bytes:
    """The bytes a transfer's seal covers (module docstring, version 1). ``legs``: tuples of
    three integers, in any order, or their text from ``legs_text`` (computed once for the
    commit MAC and the seal of one transfer).

    The legs are written without ``json.dumps``: a hand's ante has 100,000 of them, and the
    JSON of a list of integers is the integers' decimal text between brackets and commas,
    which ``"%d"`` gives directly (``tests/wallet/test_ledger_chain.py`` checks the bytes
    against ``json.dumps`` of the whole body)."""
    stamp = created_at.astimezone(UTC).isoformat(timespec="microseconds")
    head = [CHAIN_VERSION, currency, sequence, previous_hash, reference, kind, memo, created_by_id, stamp]
    text = json.dumps(head, separators=(",", ":"), ensure_ascii=False)
    rows = legs if isinstance(legs, str) else legs_text(legs)
    return f"{text[:-1]},[{rows}]]".encode()


def legs_text(legs: Sequence[LegTuple]) -> str:
    """The legs' part of ``canonical``: ``[account,delta,after]`` sorted, comma-joined."""
    return ",".join(map(_LEG_JSON.__mod__, sorted(map(tuple, legs))))


def legs_text_in_order(legs: Sequence[LegTuple]) -> str:
    """``legs_text`` of legs already in its order: each account once, accounts ascending (a
    transfer's merged legs, ``wallet.services._post``), so equal to it without sorting
    100,000 tuples again."""
    return ",".join(map(_LEG_JSON.__mod__, legs))


_LEG_JSON = "[%d,%d,%d]"


COMMIT_PREFIX = b"commit:"


def commit_mac(
    key: bytes,
    *,
    currency: str,
    reference: str,
    kind: str,
    memo: str,
    created_by_id: int | None,
    created_at: datetime,
    legs: Sequence[LegTuple] | str,
) -> str:
    """The MAC a transfer carries from its commit until it is sealed: HMAC-SHA256 under
    ``key`` of ``"commit:"`` + its canonical form with sequence 0 and a previous hash of 64
    zeros (no chain position yet; sealed sequences start at 1, and the prefix keeps it apart
    from any seal). Hex, 64 characters."""
    message = canonical(
        currency=currency,
        sequence=0,
        previous_hash=GENESIS_HASH,
        reference=reference,
        kind=kind,
        memo=memo,
        created_by_id=created_by_id,
        created_at=created_at,
        legs=legs,
    )
    return seal(key, COMMIT_PREFIX + message)


def commit_mac_of(key: bytes, transfer: Transfer, legs: Sequence[LegTuple]) -> str:
    """``commit_mac`` of a stored transfer with its legs."""
    return commit_mac(
        key,
        currency=transfer.currency,
        reference=transfer.reference,
        kind=transfer.kind,
        memo=transfer.memo,
        created_by_id=transfer.created_by_id,
        created_at=transfer.created_at,
        legs=legs,
    )


def seal_of(key: bytes, transfer: Transfer, *, sequence: int, previous_hash: str, legs: Sequence[LegTuple]) -> str:
    """The seal of a stored transfer with its legs at ``sequence`` after ``previous_hash``."""
    return seal(
        key,
        canonical(
            currency=transfer.currency,
            sequence=sequence,
            previous_hash=previous_hash,
            reference=transfer.reference,
            kind=transfer.kind,
            memo=transfer.memo,
            created_by_id=transfer.created_by_id,
            created_at=transfer.created_at,
            legs=legs,
        ),
    )


def seal_lag_seconds() -> float:
    """How long a transfer may stay unsealed before ``verify_chain`` and readiness report
    it (``POKER_LEDGER_SEAL_LAG_SECONDS``)."""
    return float(settings.LEDGER_SEAL_LAG_SECONDS)


def seal(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 of ``message`` under ``key``, hex (64 characters)."""
    return hmac.new(key, message, hashlib.sha256).hexdigest()


@dataclass(frozen=True, slots=True)
class ChainProblem:
    """One finding of ``verify_chain``: which transfer (id and reference, when the row
    exists), in which currency and at which sequence, and what is wrong."""

    currency: str
    sequence: int | None
    transfer_id: int | None
    reference: str
    problem: str

    def __str__(self) -> str:
        where = f"transfer {self.transfer_id} ({self.reference})" if self.transfer_id else "a transfer"
        at = f" at {self.currency} #{self.sequence}" if self.sequence is not None else f" in {self.currency}"
        return f"{where}{at}: {self.problem}"


def verify_chain(
    *, currency: str | None = None, expect_head: dict[str, tuple[int, str]] | None = None
) -> list[ChainProblem]:
    """Recompute every seal of the ledger and compare the chain with its head.

    ``expect_head`` maps a currency to a (sequence, hash) an auditor recorded earlier: the
    chain must still hold that transfer at that sequence with that hash (a cut tail is
    reported otherwise). An unsealed transfer is a problem when its ``commit_mac`` does not
    match or when it is older than ``seal_lag_seconds()``. Returns the problems found, in
    chain order; empty when the ledger is intact. Reads in chunks of ``CHUNK`` transfers, in
    one snapshot on PostgreSQL (``_snapshot``).
    """
    with _snapshot():
        return _verify_chain(currency=currency, expect_head=expect_head)


@contextmanager
def _snapshot() -> Iterator[None]:
    """One consistent view of the ledger while it is read (PostgreSQL, outside a
    transaction: ``REPEATABLE READ``, read only), so transfers sealed meanwhile by the
    traffic do not make the chain and its head disagree. Elsewhere, as the caller runs."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def _verify_chain(*, currency: str | None, expect_head: dict[str, tuple[int, str]] | None) -> list[ChainProblem]:
    key = ledger_key()
    problems: list[ChainProblem] = []
    # Tournament chips (``T<id>``) have chains of their own, named by their heads; a chip
    # currency whose transfers are all still unsealed has no head yet.
    heads = LedgerHead.objects.values_list("currency", flat=True)
    waiting = Transfer.objects.filter(sequence__isnull=True).values_list("currency", flat=True).distinct()
    currencies = [currency] if currency else sorted({*Currency.values, *heads, *waiting})
    lag = seal_lag_seconds()
    for code in currencies:
        now = timezone.now()
        for transfer, legs in _unsealed_transfers(code):
            mac = commit_mac_of(key, transfer, legs)
            age = (now - transfer.created_at).total_seconds()
            if not hmac.compare_digest(mac, transfer.commit_mac):
                problems.append(
                    ChainProblem(
                        code,
                        None,
                        transfer.pk,
                        transfer.reference,
                        "not sealed: its commit MAC does not match, written or changed behind the application's back",
                    )
                )
            elif age > lag:
                problems.append(
                    ChainProblem(
                        code,
                        None,
                        transfer.pk,
                        transfer.reference,
                        f"not sealed: {age:.0f} s after its commit (more than {lag:.0f} s), sealing lags",
                    )
                )
        expected = 1
        previous = GENESIS_HASH
        seen: dict[int, str] = {}
        for transfer, legs in _sealed_transfers(code):
            sequence = transfer.sequence
            assert sequence is not None
            if sequence != expected:
                missing = f"#{expected}" if sequence == expected + 1 else f"#{expected}..#{sequence - 1}"
                problems.append(
                    ChainProblem(code, expected, None, "", f"missing {missing}: deleted behind the application's back")
                )
            message = canonical(
                currency=code,
                sequence=sequence,
                previous_hash=previous,
                reference=transfer.reference,
                kind=transfer.kind,
                memo=transfer.memo,
                created_by_id=transfer.created_by_id,
                created_at=transfer.created_at,
                legs=legs,
            )
            if not hmac.compare_digest(seal(key, message), transfer.chain_hash):
                problems.append(
                    ChainProblem(
                        code,
                        sequence,
                        transfer.pk,
                        transfer.reference,
                        "seal does not match: the transfer, one of its legs, or the one before was changed",
                    )
                )
            seen[sequence] = transfer.chain_hash
            previous = transfer.chain_hash
            expected = sequence + 1
        head = LedgerHead.objects.filter(currency=code).first()
        last = expected - 1
        head_sequence, head_hash = (head.sequence, head.chain_hash) if head else (0, GENESIS_HASH)
        if (head_sequence, head_hash) != (last, previous):
            problems.append(
                ChainProblem(
                    code,
                    head_sequence,
                    None,
                    "",
                    f"the head says #{head_sequence} but the chain ends at #{last}: transfers were "
                    "deleted from, or added to, the end",
                )
            )
        if expect_head and code in expect_head:
            want_sequence, want_hash = expect_head[code]
            if seen.get(want_sequence) != want_hash:
                problems.append(
                    ChainProblem(
                        code,
                        want_sequence,
                        None,
                        "",
                        "the recorded head is no longer in the chain: its end was cut or rewritten",
                    )
                )
    return problems


def oldest_unsealed_age(*, now: datetime | None = None) -> float:
    """Seconds since the oldest unsealed transfer of any currency was created; 0.0 when
    every transfer is sealed. One indexed read (``transfer_unsealed``)."""
    oldest = (
        Transfer.objects.filter(sequence__isnull=True).order_by("created_at").values_list("created_at", flat=True)[:1]
    )
    first = next(iter(oldest), None)
    if first is None:
        return 0.0
    return max(0.0, ((now or timezone.now()) - first).total_seconds())


def _unsealed_transfers(currency: str) -> Iterator[tuple[Transfer, list[LegTuple]]]:
    """The unsealed transfers of ``currency`` in id order, each with its legs."""
    last = 0
    while True:
        chunk = list(
            Transfer.objects.filter(currency=currency, sequence__isnull=True, pk__gt=last).order_by("pk")[:CHUNK]
        )
        if not chunk:
            return
        legs = legs_of([transfer.pk for transfer in chunk])
        for transfer in chunk:
            yield transfer, legs[transfer.pk]
        last = chunk[-1].pk


def legs_of(transfer_ids: Sequence[int]) -> dict[int, list[LegTuple]]:
    """The legs of each of ``transfer_ids``: ``{transfer_id: [(account_id, delta_minor,
    balance_after_minor), ...]}`` (an empty list for a transfer without legs)."""
    legs: dict[int, list[LegTuple]] = {pk: [] for pk in transfer_ids}
    rows = LedgerEntry.objects.filter(transfer_id__in=list(legs)).values_list(
        "transfer_id", "account_id", "delta_minor", "balance_after_minor"
    )
    for transfer_id, account_id, delta, after in rows:
        legs[transfer_id].append((account_id, delta, after))
    return legs


def _sealed_transfers(currency: str) -> Iterator[tuple[Transfer, list[LegTuple]]]:
    """The sealed transfers of ``currency`` in sequence order, each with its legs."""
    last = 0
    while True:
        chunk = list(Transfer.objects.filter(currency=currency, sequence__gt=last).order_by("sequence")[:CHUNK])
        if not chunk:
            return
        legs = legs_of([transfer.pk for transfer in chunk])
        for transfer in chunk:
            yield transfer, legs[transfer.pk]
        last = chunk[-1].sequence or last
