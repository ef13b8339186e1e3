"""The cost of algorithm 3's freeze and deal round (issue 23, item 2; docs/benchmarks.md,
"s5-freeze"), without giving anything away: the signer's remembered chain walk gives exactly
the elements of the plain walk and keeps them in its memory only; a clock step runs with the
cyclic garbage collector paused and gives it back; the public freeze frame counts the frozen
players in the database."""

from __future__ import annotations

import gc
import hashlib
import hmac
import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import override_settings

from tables import clock
from tables.clock import advance_table, collector_paused
from tables.engine import fairness
from tables.games import NO_STEP, Step
from tables.models import Hand, HandFreeze, SeedChain, Table
from tables.services import beacon
from tables.services.seating import touch_presence
from tables.signer import KeySigner, SignerRefusedError, read_or_create_key
from tables.widerpoker.selectors import get_table_state
from tests.helpers import create_fun_table, seat_players


@pytest.mark.parametrize(("length", "stride"), [(1, None), (10, None), (100, 7), (301, 17), (64, 1), (50, 50)])
def test_the_remembered_walk_gives_the_plain_walks_element_at_every_index_in_any_order(
    length: int, stride: int | None
) -> None:
    terminal = hashlib.sha256(f"terminal {length}".encode()).digest()
    plain = [fairness.chain_seed(terminal, length, index) for index in range(length + 1)]
    orders = [
        list(range(length, -1, -1)),
        list(range(length + 1)),
        random.Random(length).sample(range(length + 1), length + 1),
    ]
    for order in orders:
        walk = fairness.ChainWalk(terminal, length, stride)
        assert [walk.seed(index) for index in order] == [plain[index] for index in order]
        assert [walk.seed(index) for index in range(length + 1)] == plain  # asked again
    with pytest.raises(ValueError):
        fairness.ChainWalk(terminal, length).seed(length + 1)
    with pytest.raises(ValueError):
        fairness.ChainWalk(terminal, length).seed(-1)
    with pytest.raises(ValueError):
        fairness.ChainWalk(bytes(31), length)


def test_an_element_after_the_anchor_costs_at_most_a_stride_of_hashes(monkeypatch: pytest.MonkeyPatch) -> None:
    walk = fairness.ChainWalk(bytes(32), 10_000)
    assert walk.seed(0) == fairness.chain_anchor(bytes(32), 10_000)
    calls = 0
    real = hashlib.sha256

    def counted(data: bytes) -> hashlib._Hash:
        nonlocal calls
        calls += 1
        return real(data)

    monkeypatch.setattr(hashlib, "sha256", counted)
    for index in range(1, 300):
        calls = 0
        assert walk.seed(index) == fairness.chain_seed(bytes(32), 10_000, index)
        # chain_seed's own walk counts too: 10,000 - index hashes; the walk's at most 100.
        assert calls - (10_000 - index) <= walk.stride == 100


def test_the_signer_releases_the_plain_walks_elements_and_writes_only_indices(tmp_path: Path) -> None:
    key = read_or_create_key(tmp_path / "signer" / "key")
    state = tmp_path / "signer" / "released.json"
    signer = KeySigner(key, state)
    nonce, length = "00112233445566778899aabbccddeeff", 400
    # The terminal seed as docs/provably-fair.md 1.10 states it, computed apart.
    terminal = hmac.digest(key, b"chain\x00" + nonce.encode() + b"\x00" + str(length).encode(), "sha256")
    assert signer.anchor(nonce, length) == fairness.chain_anchor(terminal, length)
    for index in range(1, length + 1):
        assert signer.release(nonce, length, index) == fairness.chain_seed(terminal, length, index)
        # The state file names how far the chain was released, never an element.
        assert json.loads(state.read_text()) == {nonce: index}
    with pytest.raises(SignerRefusedError, match="ahead"):
        KeySigner(key, tmp_path / "other.json").release(nonce, length, 2)
    # Another process of the host, with no walk of its own, gives the same elements.
    again = KeySigner(key, state)
    assert again.release(nonce, length, length) == fairness.chain_seed(terminal, length, length)
    # Its memory of walks is bounded.
    small = KeySigner(key, tmp_path / "small.json")
    small.WALKS = 2
    for n in range(4):
        small.anchor(f"{n:032x}", 10)
    assert len(small._walks) == 2


def test_the_collector_is_paused_for_a_clock_step_and_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []

    def step(*, table_id: int, now: datetime) -> tuple[bool, Step]:
        seen.append(gc.isenabled())
        with collector_paused():  # re-entrant
            seen.append(gc.isenabled())
        seen.append(gc.isenabled())
        return True, NO_STEP

    monkeypatch.setattr(clock, "_advance_table_step", step)
    assert gc.isenabled()
    assert advance_table(table_id=1, now=datetime(2026, 11, 26, tzinfo=UTC))
    assert seen == [False, False, False] and gc.isenabled()

    def failing(*, table_id: int, now: datetime) -> tuple[bool, Step]:
        raise RuntimeError("boom")

    monkeypatch.setattr(clock, "_advance_table_step", failing)
    with pytest.raises(RuntimeError):
        advance_table(table_id=1, now=datetime(2026, 11, 26, tzinfo=UTC))
    assert gc.isenabled()
    # A collector someone else turned off stays off.
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.fixture
def signed(tmp_path: Path) -> Iterator[Path]:
    key = tmp_path / "signer.key"
    with override_settings(SIGNER="embedded", SIGNER_KEY_FILE=str(key), DEAL_ALGORITHM=3):
        yield key


def _all_text(table: str) -> str:
    """Every value of every row of ``table`` as text (bytes as hex), on either database."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table}")
        return "\n".join(
            " ".join(value.hex() if isinstance(value, bytes | memoryview) else str(value) for value in row)
            for row in cursor.fetchall()
        )


@pytest.mark.django_db(transaction=True)
def test_a_freeze_and_its_deal_leave_no_future_element_in_the_database_and_the_frame_counts_the_players(
    signed: Path, alice: User, bob: User, carol: User, now: datetime
) -> None:
    table: Table = create_fun_table(name="Frozen Rail")
    chain = SeedChain.objects.get(table=table)
    seat_players(table, [alice, bob, carol], now)
    assert advance_table(table_id=table.pk, now=now)
    freeze = HandFreeze.objects.get(table=table)
    assert get_table_state(table_id=table.pk)["frozen"]["players"] == 3  # type: ignore[index]
    at = beacon.time_of(int(freeze.deal_round))
    for user in (alice, bob, carol):
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    assert advance_table(table_id=table.pk, now=at)
    hand = Hand.objects.get(table=table)
    assert hand.chain_index == freeze.chain_index == 1
    # The signer's walk remembered checkpoints of hands to come; none reached the database.
    key = read_or_create_key(signed)
    terminal = hmac.digest(
        key, b"chain\x00" + chain.signer_nonce.encode() + b"\x00" + str(chain.length).encode(), "sha256"
    )
    walk = fairness.ChainWalk(terminal, chain.length)
    future = {walk.seed(index).hex() for index in range(2, chain.length + 1)}
    stored = "\n".join(_all_text(model._meta.db_table) for model in (SeedChain, HandFreeze, Hand, Table))
    assert hand.chain_seed in stored  # what was dealt is there (the scan reads it)
    assert not any(element in stored for element in future)
