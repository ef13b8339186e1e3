"""The beacon cannot be walked away from silently, nor forged (issue 22, items 2 and 3;
docs/provably-fair.md, "The beacon"): a hand cancelled once its beacon round was due keeps
the evidence (round, since when, how long, what drand answered) in its export and on the
public commitments page, with the cancellation rate per table and month; a drand round
whose BLS signature fails against the chain's public key is refused, never used."""

from __future__ import annotations

import hashlib
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.test.utils import override_settings

from handhistory.export import export_schema
from handhistory.selectors import RATES_CACHE_KEY
from handhistory.verification import verify_hand
from tables.clock import advance_table, recover_table
from tables.models import BeaconRound, Hand, HandStatus, Table
from tables.services import beacon
from tests.helpers import deal_hand, logged_in, settle
from wallet.selectors import check_books

# Real quicknet rounds (tests/tables/drand_quicknet.json records them with the chain info).
VECTORS = json.loads((Path(__file__).parent / "drand_quicknet.json").read_text())
REAL = VECTORS["rounds"][0]
UNREACHABLE = "http://127.0.0.1:9/52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"


class _Response(io.BytesIO):
    def __enter__(self) -> _Response:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()


def _serve(monkeypatch: Any, answers: dict[int, dict[str, Any]]) -> list[str]:
    """drand's HTTP API, answering ``answers[round]`` for ``/public/<round>``; the URLs asked."""
    asked: list[str] = []

    def urlopen(url: str, timeout: float = 0) -> _Response:
        asked.append(url)
        return _Response(json.dumps(answers[int(url.rsplit("/", 1)[1])]).encode())

    monkeypatch.setattr("tables.services.beacon.urllib.request.urlopen", urlopen)
    return asked


@pytest.mark.django_db(transaction=True)
@override_settings(BEACON="drand", DRAND_URL=UNREACHABLE)
def test_a_hand_cancelled_for_a_silent_beacon_keeps_the_evidence_in_its_export_and_on_the_commitments_page(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    hand = deal_hand(table, [alice, bob], now)
    assert hand.beacon_round is not None
    late = hand.change_deadline + timedelta(seconds=61)
    assert advance_table(table_id=table.pk, now=late)
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED
    assert check_books().ok

    # The auditor's door: the hand's export, valid against the published schema.
    response = logged_in(alice).get(f"/history/hands/{hand.pk}/export.json")
    assert response.status_code == 200
    data = response.json()
    jsonschema.validate(data, export_schema(), format_checker=jsonschema.FormatChecker())
    evidence = data["hand"]["beacon_evidence"]
    assert evidence["source"] == "drand" and evidence["round"] == hand.beacon_round
    assert evidence["due_at"] == beacon.time_of(hand.beacon_round).isoformat()
    assert evidence["waited_since"] == hand.change_deadline.isoformat()
    assert evidence["waited_seconds"] == 61
    assert "127.0.0.1:9" in evidence["answer"] and "Error" in evidence["answer"]  # the refused connection
    assert evidence["value"] is None and evidence["url"] == UNREACHABLE

    # Anyone, logged in or not: the cancellation, its reason and the rate of its table's month
    # (recomputed every five minutes: this test does not wait).
    cache.delete(f"{RATES_CACHE_KEY}:12")
    page = Client().get("/history/commitments/").content.decode()
    assert "the randomness beacon did not answer" in page
    assert f"Test Rail #{hand.number}" in page and str(hand.beacon_round) in page
    rates = page[page.index('data-testid="cancellation-rates"') :]
    month = late.astimezone(UTC).strftime("%Y-%m")
    row = rates[rates.index(month) : rates.index("</tr>", rates.index(month))]
    assert [cell.split("<")[0] for cell in row.split('<td class="num">')[1:]] == ["1", "1", "1", "0", "100.0"]


@pytest.mark.django_db
@override_settings(BEACON="drand", DRAND_URL=UNREACHABLE)
def test_a_hand_cancelled_before_its_round_is_due_has_no_beacon_evidence(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    hand = deal_hand(table, [alice, bob], now)
    recover_table(table_id=table.pk, now=now + timedelta(seconds=1), reason="a test malfunction")
    hand.refresh_from_db()
    assert hand.status == HandStatus.CANCELLED and hand.beacon_evidence is None
    data = logged_in(alice).get(f"/history/hands/{hand.pk}/export.json").json()
    assert "beacon_evidence" not in data["hand"]
    jsonschema.validate(data, export_schema(), format_checker=jsonschema.FormatChecker())


@pytest.mark.django_db
@override_settings(BEACON="drand")
def test_a_drand_round_is_used_only_when_its_signature_verifies(monkeypatch: Any, now: datetime) -> None:
    good, other = VECTORS["rounds"][0], VECTORS["rounds"][1]
    forged = {"round": good["round"], "signature": other["signature"], "randomness": other["randomness"]}
    _serve(monkeypatch, {good["round"]: forged})
    answer = beacon.fetch(good["round"], now=now)
    assert answer.value is None and "signature does not verify" in answer.error
    assert not BeaconRound.objects.exists()  # refused, never stored

    _serve(monkeypatch, {good["round"]: {**good, "randomness": "00" * 32}})
    assert beacon.value(good["round"], now=now) is None  # a randomness that is not SHA-256(signature)

    _serve(monkeypatch, {good["round"]: good})
    assert beacon.value(good["round"], now=now) == bytes.fromhex(good["randomness"])
    stored = BeaconRound.objects.get(source="drand", round=good["round"])
    assert stored.signature == good["signature"]
    assert hashlib.sha256(bytes.fromhex(stored.signature)).hexdigest() == stored.value


@pytest.mark.django_db(transaction=True)
@override_settings(BEACON="drand")
def test_a_hand_whose_round_comes_with_a_forged_signature_is_cancelled_not_dealt_from_it(
    table: Table, alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    hand = deal_hand(table, [alice, bob], now)
    assert hand.beacon_round is not None
    # A "drand" that answers the hand's round with another round's genuine signature.
    _serve(monkeypatch, {hand.beacon_round: {"round": hand.beacon_round, "signature": REAL["signature"]}})
    late = hand.change_deadline + timedelta(seconds=61)
    assert advance_table(table_id=table.pk, now=late)
    hand = Hand.objects.get(pk=hand.pk)
    assert hand.status == HandStatus.CANCELLED and not hand.beacon_value and hand.change_keys is None
    assert hand.beacon_evidence is not None and "signature does not verify" in hand.beacon_evidence["answer"]
    assert not BeaconRound.objects.filter(round=int(hand.beacon_round or 0)).exists()
    assert check_books().ok


@pytest.mark.django_db(transaction=True)
def test_a_hand_settles_on_a_real_quicknet_round_and_anyone_can_check_its_signature(
    table: Table, alice: User, bob: User, now: datetime, monkeypatch: Any
) -> None:
    # Shift the clock's genesis so that this hand's round is a recorded quicknet round.
    real = VECTORS["rounds"][1]
    deadline = now + timedelta(seconds=table.widerpoker.change_seconds)
    genesis = int(deadline.timestamp()) - (real["round"] - 2)
    with override_settings(BEACON="drand", BEACON_GENESIS_UNIX=genesis, BEACON_PERIOD_SECONDS=1):
        _serve(monkeypatch, {real["round"]: real})
        hand = deal_hand(table, [alice, bob], now)
        assert hand.beacon_round == real["round"]
        hand = settle(table)
        assert hand.status == HandStatus.SETTLED and hand.beacon_value == real["randomness"]
        data = logged_in(bob).get(f"/history/hands/{hand.pk}/export.json").json()
        jsonschema.validate(data, export_schema(), format_checker=jsonschema.FormatChecker())
        assert data["hand"]["beacon"] == {
            "source": "drand",
            "round": real["round"],
            "value": real["randomness"],
            "signature": real["signature"],
        }
        assert "beacon_evidence" not in data["hand"]
        assert verify_hand(hand_id=hand.pk).ok
        # A stored signature that does not verify is caught by the platform's own check.
        BeaconRound.objects.filter(round=real["round"]).update(signature=VECTORS["rounds"][2]["signature"])
        assert "beacon value of its round" in {m.check for m in verify_hand(hand_id=hand.pk).mismatches}
