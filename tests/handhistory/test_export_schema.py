"""The export's JSON Schema (handhistory/schemas/widerpoker-hand-2.json, docs/export-format.md)
validates the exports of every kind of hand the suite plays, and refuses broken ones."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import jsonschema
import pytest
from django.contrib.auth.models import User

from handhistory.export import EXPORT_FORMAT, export_schema
from tables.clock import advance_table
from tables.models import Hand, Table
from tables.services.seating import touch_presence
from tables.widerpoker.services.play import buy_draw, buy_redeal, set_hold
from tables.widerpoker.services.seating import sit_out
from tables.widerpoker.services.settlement import cancel_hand
from tests.helpers import deal_hand, logged_in, settle

pytestmark = pytest.mark.django_db


def export_of(hand: Hand, viewer: User) -> dict[str, Any]:
    response = logged_in(viewer).get(f"/history/hands/{hand.pk}/export.json")
    assert response.status_code == 200
    data: dict[str, Any] = response.json()
    return data


def validate(data: dict[str, Any]) -> None:
    jsonschema.validate(data, export_schema(), format_checker=jsonschema.FormatChecker())


def test_settled_and_cancelled_hands_validate(
    table: Table, alice: User, bob: User, carol: User, auditor: User, now: datetime
) -> None:
    hand = deal_hand(table, [alice, bob, carol], now)
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[True, False, True, False, False], now=now)
    buy_draw(table_id=table.pk, user_id=bob.pk, now=now)
    buy_redeal(table_id=table.pk, user_id=carol.pk, now=now)
    hand = settle(table)
    data = export_of(hand, auditor)
    assert data["format"] == EXPORT_FORMAT == "widerpoker-hand/2"
    validate(data)
    entries = {e["player"]: e for e in data["entries"]}
    assert entries["alice"]["hold_at"] is not None and entries["alice"]["hold_mask"] == 0b00101
    assert [p["kind"] for p in entries["bob"]["purchases"]] == ["draw"] and entries["bob"]["purchases"][0][
        "number"
    ] == 2
    assert [p["kind"] for p in entries["carol"]["purchases"]] == ["redeal"]
    assert all(1 <= e["best_draw"] <= e["draws_bought"] for e in data["entries"])  # numbered from 1
    references = [t["reference"] for t in data["hand"]["transfers"]]
    assert references[0] == f"ante:{hand.pk}" and references[-1] == f"settle:{hand.pk}"

    table.refresh_from_db()
    assert table.phase_deadline is not None
    for user in (alice, bob):
        touch_presence(table_id=table.pk, user_id=user.pk, now=table.phase_deadline)
    sit_out(table_id=table.pk, user_id=carol.pk, now=table.phase_deadline)
    assert advance_table(table_id=table.pk, now=table.phase_deadline)
    table.refresh_from_db()
    second = table.current_hand
    assert second is not None
    assert cancel_hand(hand_id=second.pk, reason="test malfunction", now=table.phase_deadline or now)
    second.refresh_from_db()
    data = export_of(second, auditor)
    validate(data)
    assert data["hand"]["not_dealt"] == [{"player": "carol", "reason": "sit out"}]
    assert data["hand"]["transfers"][-1]["reference"] == f"refund:{second.pk}"


def test_the_schema_refuses_what_is_not_a_hand(
    table: Table, alice: User, bob: User, auditor: User, now: datetime
) -> None:
    deal_hand(table, [alice, bob], now)
    data = export_of(settle(table), auditor)
    for broken in (
        {**data, "format": "widerpoker-hand/1"},
        {**data, "hand": {**data["hand"], "server_seed": "zz"}},
        {**data, "entries": [{**data["entries"][0], "best_draw": 0}, *data["entries"][1:]]},
        {**data, "extra": 1},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validate(broken)


def test_a_redeal_that_resets_the_hold_resets_hold_at_in_the_export_too(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    # fairness audit 2026-11-26: hold_mask null but the old hold_at kept (docs: both null).
    hand = deal_hand(table, [alice, bob], now)
    set_hold(table_id=table.pk, user_id=alice.pk, hold=[True, True, False, False, False], now=now)
    buy_redeal(table_id=table.pk, user_id=alice.pk, now=now)
    set_hold(table_id=table.pk, user_id=bob.pk, hold=[False, True, False, False, True], now=now)
    hand = settle(table)
    data = export_of(hand, alice)
    validate(data)
    entries = {e["player"]: e for e in data["entries"]}
    assert entries["alice"]["hold_mask"] is None and entries["alice"]["hold_at"] is None
    assert entries["bob"]["hold_mask"] == 0b10010 and entries["bob"]["hold_at"] is not None
