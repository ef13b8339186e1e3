"""Seed chains' terminal seeds out of the application database (issue 22, item 1;
docs/provably-fair.md, 1.10): a signer derives them from a key the database never holds and
releases a chain element only for the hand being dealt, never one ahead."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import override_settings

from handhistory.selectors import RATES_CACHE_KEY
from handhistory.verification import verify_hand
from tables.clock import advance_table
from tables.engine import fairness
from tables.models import Hand, HandFreeze, HandStatus, SeedChain
from tables.services import beacon
from tables.services.seating import touch_presence
from tables.signer import KeySigner, SignerRefusedError, SocketSigner, read_or_create_key
from tests.helpers import create_fun_table, seat_players

ROOT = Path(__file__).resolve().parents[2]


def test_the_signer_never_releases_an_element_ahead(tmp_path: Path) -> None:
    key = read_or_create_key(tmp_path / "signer" / "key")
    assert (tmp_path / "signer" / "key").stat().st_mode & 0o777 == 0o600
    signer = KeySigner(key, tmp_path / "signer" / "released.json")
    nonce = "0123456789abcdef0123456789abcdef"
    anchor = signer.anchor(nonce, 10)
    with pytest.raises(SignerRefusedError, match="ahead"):
        signer.release(nonce, 10, 2)  # hand 1 has not been dealt
    first = signer.release(nonce, 10, 1)
    assert fairness.link_ok(first, anchor)
    assert signer.release(nonce, 10, 1) == first  # a deal rolled back asks again
    second = signer.release(nonce, 10, 2)
    assert fairness.link_ok(second, first)
    with pytest.raises(SignerRefusedError, match="ahead"):
        signer.release(nonce, 10, 4)
    # Another process of the host shares what was released (the state file), and another
    # key gives another chain.
    again = KeySigner(key, tmp_path / "signer" / "released.json")
    with pytest.raises(SignerRefusedError):
        again.release(nonce, 10, 4)
    assert KeySigner(bytes(32), tmp_path / "other.json").anchor(nonce, 10) != anchor
    with pytest.raises(SignerRefusedError):
        signer.release("not hex", 10, 1)


@pytest.fixture
def signer_process(tmp_path: Path) -> Iterator[str]:
    """``manage.py run_signer`` on a Unix socket of ``tmp_path``."""
    path = str(tmp_path / "signer.sock")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_signer", "--socket", path, "--key-file", str(tmp_path / "key")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        for _ in range(300):
            if os.path.exists(path):
                break
            time.sleep(0.05)
        assert os.path.exists(path), process.stderr.read() if process.stderr else ""
        yield path
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_signer_process_answers_over_its_socket_and_refuses_an_element_ahead(
    signer_process: str, tmp_path: Path
) -> None:
    client = SocketSigner(signer_process)
    nonce = "fedcba9876543210fedcba9876543210"
    anchor = client.anchor(nonce, 20)
    first = client.release(nonce, 20, 1)
    assert fairness.link_ok(first, anchor)
    with pytest.raises(SignerRefusedError, match="ahead"):
        client.release(nonce, 20, 3)
    # The same key in process gives the same chain: the key file is the only secret.
    local = KeySigner(read_or_create_key(tmp_path / "key"), tmp_path / "local.json")
    assert local.anchor(nonce, 20) == anchor


@pytest.mark.django_db(transaction=True)
def test_a_table_of_the_embedded_default_keeps_no_terminal_seed_in_the_database_and_its_hands_verify(
    tmp_path: Path, alice: User, bob: User, now: datetime
) -> None:
    with override_settings(SIGNER="embedded", SIGNER_KEY_FILE=str(tmp_path / "signer.key"), DEAL_ALGORITHM=3):
        table = create_fun_table(name="Signed Rail")
        chain = SeedChain.objects.get(table=table)
        assert chain.terminal_seed == "" and len(chain.signer_nonce) == 32
        # Nothing the application's database holds names a terminal seed or an element ahead.
        with connection.cursor() as cursor:
            cursor.execute("SELECT * FROM tables_seedchain WHERE id = %s", [chain.pk])
            row = cursor.fetchone()
        assert row is not None
        public = {chain.anchor, chain.published_round_value}
        assert not any(isinstance(value, str) and len(value) == 64 and value not in public for value in row)

        seat_players(table, [alice, bob], now)
        assert advance_table(table_id=table.pk, now=now)
        freeze = HandFreeze.objects.get(table=table)
        at = beacon.time_of(int(freeze.deal_round))
        for user in (alice, bob):
            touch_presence(table_id=table.pk, user_id=user.pk, now=at)
        assert advance_table(table_id=table.pk, now=at)
        hand = Hand.objects.get(table=table)
        assert fairness.link_ok(bytes.fromhex(hand.chain_seed), bytes.fromhex(chain.anchor))
        # The signer released element 1 for this hand and refuses element 3.
        signer = KeySigner(read_or_create_key(tmp_path / "signer.key"), tmp_path / "signer.released.json")
        with pytest.raises(SignerRefusedError, match="ahead"):
            signer.release(chain.signer_nonce, chain.length, 3)
        assert advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=2))
        hand.refresh_from_db()
        assert hand.status == HandStatus.SETTLED
        report = verify_hand(hand_id=hand.pk)
        assert report.ok, report.mismatches


@pytest.mark.django_db(transaction=True)
def test_a_freeze_whose_round_never_comes_is_abandoned_in_public_and_the_next_one_deals(
    tmp_path: Path, alice: User, bob: User, now: datetime
) -> None:
    signed = override_settings(SIGNER="embedded", SIGNER_KEY_FILE=str(tmp_path / "signer.key"), DEAL_ALGORITHM=3)
    with signed:
        table = create_fun_table(name="Silent Rail")
        seat_players(table, [alice, bob], now)
        with override_settings(BEACON="drand", DRAND_URL="http://127.0.0.1:9/none"):
            assert advance_table(table_id=table.pk, now=now)
            freeze = HandFreeze.objects.get(table=table)
            due = beacon.time_of(int(freeze.deal_round))
            advance_table(table_id=table.pk, now=due + timedelta(seconds=61))
        freeze.refresh_from_db()
        assert freeze.abandoned_at is not None and freeze.evidence is not None
        assert freeze.evidence["round"] == freeze.deal_round and "127.0.0.1:9" in freeze.evidence["answer"]
        assert not Hand.objects.filter(table=table).exists()  # no money moved
        page = Client().get("/history/commitments/")
        assert page.status_code == 200
        assert "inputs frozen, not dealt" in page.content.decode() and str(freeze.deal_round) in page.content.decode()
        # ... and counted in the rate of its table and month (docs/provably-fair.md 1.7): no
        # hand ended, one freeze given up, so 100.0 % (recomputed every five minutes: cleared).
        cache.delete(f"{RATES_CACHE_KEY}:12")
        rates = Client().get("/history/commitments/").content.decode()
        rates = rates[rates.index('data-testid="cancellation-rates"') :]
        assert freeze.abandoned_at is not None
        month = freeze.abandoned_at.astimezone(UTC).strftime("%Y-%m")
        row = rates[rates.index(month) : rates.index("</tr>", rates.index(month))]
        assert "Silent Rail" in row
        assert [cell.split("<")[0] for cell in row.split('<td class="num">')[1:]] == ["0", "0", "0", "1", "100.0"]
        # The next freeze takes the next element, which the signer releases at its deal.
        later = due + timedelta(seconds=61) + timedelta(seconds=6)
        for user in (alice, bob):
            touch_presence(table_id=table.pk, user_id=user.pk, now=later)
        assert advance_table(table_id=table.pk, now=later)
        second = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
        assert second.chain_index == freeze.chain_index + 1
        at = beacon.time_of(int(second.deal_round))
        for user in (alice, bob):
            touch_presence(table_id=table.pk, user_id=user.pk, now=at)
        assert advance_table(table_id=table.pk, now=at)
        hand = Hand.objects.get(table=table)
        assert hand.chain_index == second.chain_index
        chain = SeedChain.objects.get(table=table)
        linked = bytes.fromhex(hand.chain_seed)
        for _ in range(hand.chain_index):
            linked = fairness.chain_seed(linked, 1, 0)
        assert linked.hex() == chain.anchor
        # The settled hand counts among the hands, the abandoned freeze among the given up.
        assert advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=2))
        hand.refresh_from_db()
        assert hand.status == HandStatus.SETTLED and hand.settled_at is not None
        cache.delete(f"{RATES_CACHE_KEY}:12")
        rates = Client().get("/history/commitments/").content.decode()
        rates = rates[rates.index('data-testid="cancellation-rates"') :]
        if hand.settled_at.astimezone(UTC).strftime("%Y-%m") == month:  # not across a month's end
            row = rates[rates.index(month) : rates.index("</tr>", rates.index(month))]
            assert [cell.split("<")[0] for cell in row.split('<td class="num">')[1:]] == ["1", "0", "0", "1", "50.0"]
