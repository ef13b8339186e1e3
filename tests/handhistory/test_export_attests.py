"""What an outsider needs from the export and could not find (fairness audit 2026-11-26, §4;
issue 22, item 8): the "1 in N" special-hand rule with its N, and each jackpot's balance
before and after the hand (docs/export-format.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import jsonschema
import pytest
from django.contrib.auth.models import User

from handhistory.export import export_schema
from handhistory.verification import verify_hand
from jackpots import services as jackpot_services
from jackpots.models import Jackpot, JackpotKind
from tables.engine.widerpoker import SpinJackpot, special_hand_draw, spin_jackpot_draw
from tables.models import Hand
from tables.widerpoker.services.special import ScheduleInput, save_schedule
from tests.helpers import behind_the_apps_back, create_fun_table, deal_hand, logged_in, settle, steer_next_hand
from wallet.models import Account

pytestmark = pytest.mark.django_db


def _export(hand_id: int, viewer: User) -> dict[str, Any]:
    response = logged_in(viewer).get(f"/history/hands/{hand_id}/export.json")
    assert response.status_code == 200
    data: dict[str, Any] = response.json()
    jsonschema.validate(data, export_schema(), format_checker=jsonschema.FormatChecker())
    return data


@pytest.mark.parametrize("special", [True, False])
def test_the_export_carries_the_one_in_n_rule_so_an_auditor_recomputes_the_special_draw(
    special: bool, croupier: User, alice: User, bob: User, now: datetime
) -> None:
    table = create_fun_table(name="Chance Rail")
    save_schedule(
        table_id=table.pk,
        schedule=ScheduleInput(name="Lucky", kind="chance", one_in=4, overrides={"panel": False}),
        staff_user_id=croupier.pk,
        reason="promotion",
        now=now,
    )
    steer_next_hand(table, [alice, bob], lambda seed: special_hand_draw(seed, 4) is special, now=now)
    hand = deal_hand(table, [alice, bob], now)
    data = _export(settle(table).pk, alice)
    config = data["hand"]["config"]
    [rule] = config["special_schedules"]
    assert (rule["name"], rule["kind"], rule["one_in"], rule["fired"]) == ("Lucky", "chance", 4, special)
    # What the auditor does with it: randbelow(N) == 0 on stream special-hand of the seed.
    assert special_hand_draw(bytes.fromhex(data["hand"]["server_seed"]), rule["one_in"]) is special
    assert (config.get("special") == ["Lucky"]) is special and hand.pk == data["hand"]["id"]
    # The platform's own verification recomputes the draw too, and catches a rewritten one.
    assert verify_hand(hand_id=hand.pk).ok
    rewritten = {**config, "special_schedules": [{**rule, "fired": not special}]}
    with behind_the_apps_back():
        Hand.objects.filter(pk=hand.pk).update(config=rewritten)
    assert "special hand 'Lucky' drawn" in {m.check for m in verify_hand(hand_id=hand.pk).mismatches}


def test_the_export_gives_each_jackpots_balance_before_and_after_the_hand(
    croupier: User, alice: User, bob: User, now: datetime
) -> None:
    table = create_fun_table(name="Jackpot Rail", rake_bps=500)
    royal = Jackpot.objects.create(
        name="Royal FUN", kind=JackpotKind.ROYAL, currency="FUN", contribution_bps=100, reset_minor=500
    )
    bronze = Jackpot.objects.create(
        name="Bronze FUN", kind=JackpotKind.BRONZE, currency="FUN", contribution_bps=50, reset_minor=200, one_in=30
    )
    table.jackpots.set([royal, bronze])
    jackpot_services.fund_jackpot(jackpot_id=royal.pk, amount_minor=20_000, reference="r", staff_user_id=croupier.pk)
    steer_next_hand(table, [alice, bob], lambda s: spin_jackpot_draw(s, {SpinJackpot.BRONZE: 30}) is None, now=now)
    deal_hand(table, [alice, bob], now)
    hand = settle(table)
    results = _export(hand.pk, bob)["hand"]["jackpot_results"]
    balances, contributions = results["balances"], results["contributions"]
    assert balances[royal.feed_key]["before_minor"] == 20_000
    for jackpot in (royal, bronze):
        key = jackpot.feed_key
        assert balances[key]["after_minor"] == balances[key]["before_minor"] + contributions[key]
        assert balances[key]["after_minor"] == Account.objects.get(key=jackpot.account_key).balance_minor
