"""The export contracts: the key structure (``tests.golden.golden.shape``) of the WiderPoker
hand export (``widerpoker-hand/2``), the Hold'em hand export (``widerpoker-holdem-hand/1``)
and its PHH text, and the tournament export (``widerpoker-tournament/1``, by its page and by
the REST API) with the ``tournament_standings`` frame pushed between its hands, each read
through the door its readers use, compared with ``tests/golden/exports/`` and
``tests/golden/frames/tournament.json``.

Regenerate on purpose: ``UPDATE_GOLDEN=1 python -m pytest tests/golden/test_exports.py``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tables.models import Table, TablePhase
from tables.realtime import bus
from tables.widerpoker.services.play import buy_draw, buy_redeal, set_hold
from tests.golden.golden import assert_golden, by_type, seed_secrets, shape
from tests.handhistory.test_holdem_history import played_hand
from tests.helpers import deal_hand, logged_in, settle
from tests.tables.tournament_helpers import BeatClock, funded_players, schedule


def phh_keys(text: str) -> list[str]:
    """The keys of a PHH document (``key = value`` lines), in their order, each once."""
    keys: list[str] = []
    for line in text.splitlines():
        key, sep, _ = line.partition(" = ")
        if sep and key.strip() not in keys:
            keys.append(key.strip())
    return keys


@pytest.mark.django_db
def test_the_widerpoker_hand_export_keeps_its_keys(
    monkeypatch: pytest.MonkeyPatch, table: Table, alice: User, bob: User, carol: User, auditor: User, now: datetime
) -> None:
    seed_secrets(monkeypatch)
    deal_hand(table, [alice, bob, carol], now)
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[True, False, True, False, False], now=now)
    buy_draw(table_id=table.pk, user_id=bob.pk, now=now)
    buy_redeal(table_id=table.pk, user_id=carol.pk, now=now)
    hand = settle(table)
    response = logged_in(auditor).get(f"/history/hands/{hand.pk}/export.json")
    assert response.status_code == 200
    assert_golden("exports/widerpoker-hand.json", shape(response.json()))


@pytest.mark.django_db
def _both_showdown_answers(contract: Any) -> Any:
    """At the showdown the seat that does not win shows or mucks, by the cards the beacon
    round dealt: both answers belong to the contract of an action's ``kind``, whichever one
    this run's cards produced."""
    if isinstance(contract, dict):
        if set(contract) == {"one_of"} and {"show", "muck"} & set(contract["one_of"]):
            return {"one_of": sorted(set(contract["one_of"]) | {"show", "muck"})}
        return {key: _both_showdown_answers(value) for key, value in contract.items()}
    if isinstance(contract, list):
        return [_both_showdown_answers(item) for item in contract]
    return contract


def test_the_holdem_hand_export_and_phh_keep_their_keys(
    monkeypatch: pytest.MonkeyPatch, alice: User, bob: User, auditor: User
) -> None:
    seed_secrets(monkeypatch)
    hand = played_hand(alice, bob)
    auditors = logged_in(auditor)
    document = auditors.get(f"/history/holdem/{hand.pk}/export.json")
    phh = auditors.get(f"/history/holdem/{hand.pk}/hand.phh")
    assert document.status_code == phh.status_code == 200
    assert_golden(
        "exports/holdem-hand.json",
        {
            "export.json": _both_showdown_answers(shape(document.json())),
            "hand.phh": {"content_type": phh["Content-Type"], "keys": phh_keys(phh.content.decode())},
        },
    )


@pytest.mark.django_db(transaction=True)
def test_the_tournament_export_and_standings_keep_their_keys(monkeypatch: pytest.MonkeyPatch, auditor: User) -> None:
    seed_secrets(monkeypatch)
    tournament = schedule(
        now=timezone.now(),
        mode="fun",
        currency="FUN",
        fee_minor=0,
        hands=2,
        antes=[{"from_hand": 1, "ante_minor": 1000}],
    )
    players = funded_players(3, currency="FUN", amount_minor=5000, prefix="gold")
    pushed: list[dict[str, Any]] = []
    monkeypatch.setattr(bus, "publish_table_frame", lambda table_id, text, **_: pushed.append(json.loads(text or "{}")))
    for player in players:
        assert logged_in(player).post(f"/api/tournaments/{tournament.pk}/register/").status_code == 201
    clock = BeatClock(monkeypatch, tournament.starts_at)
    clock.tick(0)
    tournament.refresh_from_db()
    assert tournament.table_id is not None
    while Table.objects.get(pk=tournament.table_id).phase != TablePhase.RESULTS:
        clock.tick()
    for _ in clock.run_until_over(tournament.pk):
        pass
    standings = [frame for frame in pushed if frame.get("type") == "tournament_standings"]
    assert standings
    assert_golden("frames/tournament.json", by_type(standings))
    page = logged_in(auditor).get(f"/tournaments/{tournament.pk}/export.json")
    api = logged_in(auditor).get(f"/api/tournaments/{tournament.pk}/export/")
    assert page.status_code == api.status_code == 200
    assert_golden(
        "exports/tournament.json",
        {"export.json": shape(json.loads(page.content)), "api": shape(api.json())},
    )
