"""Anchors that cannot be backdated (issue 22, item 4; docs/provably-fair.md, "Anchors"):
each seed chain is published with a beacon round that existed at publication, with a time
zone, in a JSON feed an outsider can archive as well as on the commitments page."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.test.utils import override_settings

from tables.models import BeaconRound, SeedChain, Table
from tables.services import beacon
from tables.services.fairness import new_chain

pytestmark = pytest.mark.django_db


def test_the_anchors_feed_gives_every_chain_with_its_utc_time_and_the_beacon_round_it_was_published_with(
    table: Table,
) -> None:
    response = Client().get("/history/commitments/anchors.json")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/json")
    feed = response.json()
    assert feed["format"] == "widerpoker-anchors/1" and feed["generated_at"].endswith("+00:00")
    assert feed["beacon"]["chain_hash"] == "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971"
    chain = SeedChain.objects.get(table=table)
    [entry] = [c for c in feed["chains"] if c["id"] == chain.pk]
    assert entry["anchor"] == chain.anchor and entry["table"] == table.name and entry["length"] == chain.length
    published = datetime.fromisoformat(entry["created_at"])
    assert entry["created_at"].endswith("+00:00") and published == chain.created_at
    # The round existed when the anchor was published, and it is the last one released then.
    released = datetime.fromisoformat(entry["published_round_at"])
    assert released <= published < released + timedelta(seconds=feed["beacon"]["period_seconds"])
    assert entry["published_round_value"] == beacon.local_value(entry["published_round"]).hex()
    assert Client().post("/history/commitments/anchors.json").status_code == 405

    page = Client().get("/history/commitments/").content.decode()
    assert chain.created_at.isoformat() in page  # with its UTC offset
    assert "/history/commitments/anchors.json" in page and str(entry["published_round"]) in page


@override_settings(BEACON="drand")
def test_with_drand_an_anchor_is_published_with_the_newest_verified_round_held(table: Table, now: Any) -> None:
    latest = beacon.round_after(now) - 1
    BeaconRound.objects.create(source="drand", round=latest - 5, value="ab" * 32, signature="", fetched_at=now)
    BeaconRound.objects.create(source="drand", round=latest + 3, value="cd" * 32, signature="", fetched_at=now)
    chain = new_chain(table_id=table.pk, now=now)
    # Not the future round (it did not exist at publication), the newest one that did.
    assert (chain.published_round, chain.published_round_value) == (latest - 5, "ab" * 32)
    BeaconRound.objects.all().delete()
    chain = new_chain(table_id=table.pk, now=now)
    assert (chain.published_round, chain.published_round_value) == (latest, "")
