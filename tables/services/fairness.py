"""Seed chains and client seeds: where a hand's randomness comes from, fixed before the
operator knows who plays (docs/provably-fair.md, "Threat model" and "Algorithm 2";
tables.engine.fairness).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext_lazy as _

from tables.bulk import insert_missing_rows
from tables.engine import fairness
from tables.errors import InvalidTableConfigError
from tables.models import PlayerClientSeed, SeedChain, Table
from tables.services import beacon
from tables.signer import get_signer
from wallet.lookups import IntArray

CLIENT_SEED = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
PREPUBLISH = 10
"""A table's next chain is published when its current one has this many hands left, so an
anchor is public for at least that many hands before its first use."""


class InvalidClientSeedError(InvalidTableConfigError):
    """A client seed is 1 to 64 letters, digits, ``_`` or ``-``."""

    code = "invalid_client_seed"
    summary = _("A client seed is 1 to 64 letters, digits, _ or -.")


def new_chain(*, table_id: int, now: datetime, length: int | None = None) -> SeedChain:
    """Create and publish a chain for a table: its public anchor (``chain_anchor``) from the
    signer, which keeps the terminal seed (``POKER_SIGNER=database``: a terminal seed from
    ``secrets``, stored), published with a beacon round that already existed
    (``beacon.round_at_publication``), so the publication cannot be older than that round
    (docs/provably-fair.md, "Anchors")."""
    size = length or settings.SEED_CHAIN_LENGTH
    round_number, round_value = beacon.round_at_publication(now=now)
    if settings.SIGNER == "database":
        # Chains of before 2026-11-26 (the test suite's algorithm-2 hands): the terminal seed here.
        terminal = secrets.token_bytes(32)
        nonce, stored, anchor = "", terminal.hex(), fairness.chain_anchor(terminal, size)
    else:
        # The signer derives the terminal seed from a key the database never sees.
        nonce = secrets.token_hex(16)
        stored, anchor = "", get_signer().anchor(nonce, size)
    return SeedChain.objects.create(
        table_id=table_id,
        length=size,
        terminal_seed=stored,
        signer_nonce=nonce,
        anchor=anchor.hex(),
        created_at=now,
        published_round=round_number,
        published_round_value=round_value,
    )


@dataclass(frozen=True)
class ChainDraw:
    """The chain element a hand is dealt from."""

    chain: SeedChain
    index: int
    seed: bytes


def next_chain_seed(table: Table, *, now: datetime) -> ChainDraw:
    """Take the next element of the table's chain (the caller holds the table's row lock).
    The oldest chain with elements left is used; a chain is published ahead when the
    current one runs low, and one is created on the spot only for a table that never had one
    (tables get their first chain when created)."""
    chain, index = next_chain_index(table, now=now)
    return ChainDraw(chain, index, chain_element(chain, index))


def chain_element(chain: SeedChain, index: int) -> bytes:
    """The secret element ``s_index`` of ``chain`` (32 bytes), released for the hand dealt
    from it: by the signer (tables/signer.py), which never releases an element ahead of the
    hand being dealt; a chain created before the signer derives it from its stored terminal
    seed. Raises SignerRefusedError."""
    if chain.terminal_seed:
        return fairness.chain_seed(bytes.fromhex(chain.terminal_seed), chain.length, index)
    return get_signer().release(chain.signer_nonce, chain.length, index)


def next_chain_index(table: Table, *, now: datetime) -> tuple[SeedChain, int]:
    """``next_chain_seed`` without the element: the chain and index the table's next hand
    is bound to (algorithm 3 fixes them at the freeze and releases the element at the deal).

    One statement takes the index (an ``UPDATE ... RETURNING`` of the oldest chain with
    elements left; the caller's lock on the table's row keeps two takers apart); a second
    looks for a chain published ahead only in a chain's last ``PREPUBLISH`` hands, and one
    is created on the spot only for a table that never had one."""
    chain = _take_index(table.pk)
    if chain is None:
        new_chain(table_id=table.pk, now=now)
        chain = _take_index(table.pk)
        assert chain is not None, "a new chain has elements left"
    index = chain.next_index - 1
    if chain.length - index < PREPUBLISH:
        ahead = SeedChain.objects.filter(table_id=table.pk, next_index__lte=F("length")).exclude(pk=chain.pk)
        if not ahead.exists():
            new_chain(table_id=table.pk, now=now)
    return chain, index


def _take_index(table_id: int) -> SeedChain | None:
    """The oldest chain of the table with elements left, its ``next_index`` moved on by one
    in the same statement (the returned row carries the moved value); None if none is left."""
    name = SeedChain._meta.db_table
    columns = ", ".join(field.column for field in SeedChain._meta.concrete_fields)
    sql = (
        f"UPDATE {name} SET next_index = next_index + 1 WHERE id = (SELECT id FROM {name} "
        f"WHERE table_id = %s AND next_index <= length ORDER BY created_at, id LIMIT 1) RETURNING {columns}"
    )
    return next(iter(SeedChain.objects.raw(sql, [table_id])), None)


def client_seeds(user_ids: list[int], *, now: datetime) -> dict[int, str]:
    """Each player's client seed, giving a random one to players who have none yet."""
    found = dict(PlayerClientSeed.objects.filter(user_id__any_of=IntArray(user_ids)).values_list("user_id", "seed"))
    return _with_new_seeds(user_ids, found, now=now)


def names_and_client_seeds(user_ids: list[int], *, now: datetime) -> tuple[dict[int, str], dict[int, str]]:
    """``usernames`` and ``client_seeds`` of the players ``user_ids`` from one read (a deal
    of 100,000 players reads each player once, the seed joined to the name)."""
    rows = (
        get_user_model()
        .objects.filter(pk__any_of=IntArray(user_ids))
        .values_list("pk", "username", "client_seed__seed")
    )
    names: dict[int, str] = {}
    found: dict[int, str] = {}
    for user_id, name, seed in rows:
        names[user_id] = name
        if seed is not None:
            found[user_id] = seed
    return names, _with_new_seeds(user_ids, found, now=now)


def _with_new_seeds(user_ids: list[int], found: dict[int, str], *, now: datetime) -> dict[int, str]:
    """``found`` (user id -> client seed) completed with a random seed for each of
    ``user_ids`` who has none yet, stored at once."""
    missing = [user_id for user_id in user_ids if user_id not in found]
    if missing:
        # A first hand for many players (COPY on PostgreSQL); a seed a player set meanwhile wins.
        insert_missing_rows(
            PlayerClientSeed._meta.db_table,
            {
                "user_id": missing,
                "seed": [secrets.token_hex(16) for _ in missing],
                "updated_at": [now] * len(missing),
            },
        )
        found.update(PlayerClientSeed.objects.filter(user_id__any_of=IntArray(missing)).values_list("user_id", "seed"))
    return found


@transaction.atomic(durable=True)
def set_client_seed(*, user_id: int, seed: str, now: datetime) -> str:
    """Set the player's client seed; it counts from the next hand he is dealt. An empty seed
    draws a new random one. Raises InvalidClientSeedError (nothing changes)."""
    seed = seed.strip() or secrets.token_hex(16)
    if not CLIENT_SEED.match(seed):
        raise InvalidClientSeedError("a client seed is 1 to 64 letters, digits, _ or -", field="client_seed")
    PlayerClientSeed.objects.update_or_create(user_id=user_id, defaults={"seed": seed, "updated_at": now})
    return seed


def usernames(user_ids: list[int]) -> dict[int, str]:
    """The names that enter the hand seed and the entry order."""
    return dict(get_user_model().objects.filter(pk__any_of=IntArray(user_ids)).values_list("pk", "username"))
