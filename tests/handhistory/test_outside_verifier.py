"""An outside verifier written from docs/provably-fair.md alone: it runs the page's own
reference code on each hand's export and recomputes the deal, the change keys, the spin
draw and the money (contributions, rake, pool) of ordinary, special and jackpot hands,
free draws included. Nothing here imports the engine."""

from __future__ import annotations

import hashlib
import hmac
import re
import struct
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import jsonschema
import pytest
from django.contrib.auth.models import User
from django.test.utils import override_settings
from django.utils import timezone

from handhistory.export import export_schema
from jackpots import services as jackpot_services
from jackpots.models import Jackpot
from tables.clock import advance_table
from tables.models import Table
from tables.services.seating import touch_presence
from tables.widerpoker.services import powerups
from tables.widerpoker.services.play import buy_draw, buy_redeal
from tables.widerpoker.services.special import ScheduleInput, save_schedule
from tests.helpers import create_fun_table, deal, logged_in, seat_players, settle, steer_next_hand

pytestmark = pytest.mark.django_db

PAGE = Path(__file__).resolve().parents[2] / "docs" / "provably-fair.md"
RANKS, SUITS = "23456789TJQKA", "cdhs"  # docs/provably-fair.md, section 3


def reference_code() -> dict[str, Any]:
    """The page's reference code. Deliberately not tests.engine.helpers.provably_fair_reference:
    this verifier imports nothing of the project's engine."""
    section = PAGE.read_text().split("## 10. Reference code")[1].split("## 11.")[0]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(code.group(1), namespace)
    return namespace


def outside_verify(export: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    """Every disagreement between the export and the page's algorithm."""
    problems: list[str] = []
    hand, entries = export["hand"], export["entries"]
    config = hand["config"]
    seed = bytes.fromhex(hand["server_seed"])
    names = [e["player"] for e in entries]
    keys_from = seed
    if hand["algorithm"] == 1 and hashlib.sha256(seed).hexdigest() != hand["commitment"]:
        problems.append("commitment")
    if hand["algorithm"] == 2:
        chain_seed = bytes.fromhex(hand["chain_seed"])
        if hashlib.sha256(chain_seed).hexdigest() != hand["commitment"]:
            problems.append("commitment")
        if not ref["chain_links"](chain_seed, hand["chain"]["index"], bytes.fromhex(hand["chain"]["anchor"])):
            problems.append("chain")
        client_seeds = {e["player"]: e["client_seed"] for e in entries}
        if ref["hand_seed"](chain_seed, hand["table_id"], hand["number"], client_seeds) != seed:
            problems.append("hand seed")
        if ref["entry_order"](seed, names) != names:
            problems.append("entry order")
        if hand["status"] == "settled":
            keys_from = ref["keys_seed"](seed, bytes.fromhex(hand["beacon"]["value"]))
    if hand["algorithm"] == 3:
        problems += verify_algorithm_3(export, ref)
        if hand["status"] == "settled":
            keys_from = ref["keys_seed"](seed, bytes.fromhex(hand["beacon"]["value"]))
    deck = [RANKS[c // 4] + SUITS[c % 4] for c in ref["deck"](seed)]
    if [deck[10 * c : 10 * c + 10] for c in range(5)] != hand["board"]["columns"]:
        problems.append("board")
    if hand["status"] == "settled" and ref["change_keys"](keys_from) != hand["change_keys"]:
        problems.append("change keys")
    one_in = {j["kind"]: j["one_in"] for j in config.get("jackpots", []) if j["kind"] != "royal"}
    if ref["spin"](seed, one_in) != hand["spin_jackpot"]:
        problems.append("spin draw")
    if hand["algorithm"] < 3:
        initial = ref["combinations"](seed, len(entries))
        if [e["initial_combination"] for e in entries] != initial:
            problems.append("initial combinations")
    for e in entries:
        paid = config["ante_minor"] + (e["draws_bought"] - 1) * config["draw_price_minor"]
        paid += len(e["redeals"]) * config["redeal_price_minor"]
        if paid != e["paid_minor"]:
            problems.append(f"paid by entry {e['join_order']}")
    gross = sum(e["paid_minor"] for e in entries)
    if hand["status"] != "settled":
        return problems
    contributions = {j["key"]: gross * j["contribution_bps"] // 10_000 for j in config.get("jackpots", [])}
    if contributions != hand["jackpot_results"].get("contributions", {}):
        problems.append("contributions")
    rake = gross * config["rake_bps"] // 10_000
    pool = gross - sum(contributions.values()) - rake + hand["carry_in_minor"] + hand["spin_award_minor"]
    if (rake, pool) != (hand["rake_minor"], hand["pool_minor"]):
        problems.append("rake or pool")
    if sum(e["prize_minor"] for e in entries) + hand["breakage_minor"] != pool:
        problems.append("prizes + breakage")
    return problems


def verify_algorithm_3(export: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    """docs/provably-fair.md, 1.9: the frozen inputs' digest, the deal round (the first
    after the freeze, 3 s rounds from quicknet's genesis), the hand seed, the entry order and
    initial combinations of everyone frozen, and each redeal from its round's value."""
    problems: list[str] = []
    hand, entries = export["hand"], export["entries"]
    seed = bytes.fromhex(hand["server_seed"])
    chain_seed = bytes.fromhex(hand["chain_seed"])
    if hashlib.sha256(chain_seed).hexdigest() != hand["commitment"]:
        problems.append("commitment")
    if not ref["chain_links"](chain_seed, hand["chain"]["index"], bytes.fromhex(hand["chain"]["anchor"])):
        problems.append("chain")
    out = [row for row in hand["not_dealt"] if row.get("frozen")]
    client_seeds = {e["player"]: e["client_seed"] for e in entries} | {r["player"]: r["client_seed"] for r in out}
    lines = "\n".join(f"{name}:{client_seeds[name]}" for name in sorted(client_seeds))
    if hashlib.sha256(lines.encode()).hexdigest() != hand["inputs_digest"]:
        problems.append("inputs digest")
    genesis, period = 1692803367, PERIOD
    frozen = datetime.fromisoformat(hand["frozen_at"]).timestamp()
    if hand["deal_beacon"]["round"] != int((frozen - genesis) // period) + 2:
        problems.append("deal round")
    deal_value = bytes.fromhex(hand["deal_beacon"]["value"])
    if ref["deal_seed"](chain_seed, hand["table_id"], hand["number"], client_seeds, deal_value) != seed:
        problems.append("hand seed")
    everyone = ref["entry_order"](seed, list(client_seeds))
    dealt = [name for name in everyone if name not in {r["player"] for r in out}]
    if dealt != [e["player"] for e in entries]:
        problems.append("entry order")
    initial = dict(zip(everyone, ref["combinations"](seed, len(everyone)), strict=True))
    if [e["initial_combination"] for e in entries] != [initial[e["player"]] for e in entries]:
        problems.append("initial combinations")
    taken = {e["initial_combination"] for e in entries}
    redealt = {}
    for r in hand["redeal_rounds"]:
        bought = datetime.fromisoformat(r["bought_at"]).timestamp()
        if r["round"] != int((bought - genesis) // period) + 2:
            problems.append(f"redeal {r['number']} round")
        if r["value"] is None:
            continue
        x = ref["redeal"](ref["redeal_seed"](seed, r["number"], bytes.fromhex(r["value"])), taken, r["number"])
        taken.add(x)
        redealt[r["number"]] = x
    for e in entries:
        if [[n, redealt.get(n)] for n, _ in e["redeals"]] != e["redeals"]:
            problems.append(f"redeals of entry {e['join_order']}")
    return problems


PERIOD = 1  # config/settings_test.py's beacon period (production: quicknet's 3 s)


def test_an_algorithm_3_hand_with_redeals_verifies_from_its_export(
    alice: User, bob: User, carol: User, auditor: User, now: datetime
) -> None:
    from tables.models import HandFreeze
    from tables.services import beacon
    from tables.widerpoker.services.play import resolve_pending_redeals

    ref = reference_code()
    table: Table = create_fun_table(name="Verifier Rail 3")
    players = [alice, bob, carol]
    with override_settings(DEAL_ALGORITHM=3):
        seat_players(table, players, now)
        assert advance_table(table_id=table.pk, now=now)
        at = beacon.time_of(int(HandFreeze.objects.get(table=table).deal_round))
        for user in players:
            touch_presence(table_id=table.pk, user_id=user.pk, now=at)
        hand = deal(table, at)
        buy_redeal(table_id=table.pk, user_id=carol.pk, now=at)
        buy_redeal(table_id=table.pk, user_id=alice.pk, now=at + timedelta(seconds=1))
        resolve_pending_redeals(now=at + timedelta(seconds=3))
        buy_redeal(table_id=table.pk, user_id=carol.pk, now=at + timedelta(seconds=4))
        settle(table)
    export = logged_in(auditor).get(f"/history/hands/{hand.pk}/export.json").json()
    jsonschema.validate(export, export_schema(), format_checker=jsonschema.FormatChecker())
    assert export["hand"]["algorithm"] == 3 and len(export["hand"]["redeal_rounds"]) == 3
    assert outside_verify(export, ref) == []
    # The verifier can fail: another deal round value is caught.
    export["hand"]["deal_beacon"]["value"] = "00" * 32
    assert "hand seed" in outside_verify(export, ref)


def test_ordinary_special_and_jackpot_hands_verify_from_their_exports(
    alice: User, bob: User, carol: User, auditor: User, croupier: User, now: datetime
) -> None:
    table: Table = create_fun_table(name="Verifier Rail")
    royal = Jackpot.objects.create(name="Royal V", kind="royal", currency="FUN", contribution_bps=120, reset_minor=100)
    spin = Jackpot.objects.create(name="Bronze V", kind="bronze", currency="FUN", contribution_bps=60, one_in=3)
    table.jackpots.set([royal, spin])
    jackpot_services.fund_jackpot(jackpot_id=spin.pk, amount_minor=777, reference="v-spin", staff_user_id=croupier.pk)
    save_schedule(
        table_id=table.pk,
        schedule=ScheduleInput(name="Cheap draws", kind="every_n", every_n=2, overrides={"draw_price_bps": 2000}),
        staff_user_id=croupier.pk,
        reason="verifier test",
        now=now,
    )
    powerups.save_rules(draw_every_hands=1, draw_step=0)
    ref = reference_code()
    # Alice picks her client seed so that the first hand wins the bronze spin jackpot.
    players = [alice, bob, carol]
    steer_next_hand(table, players, lambda s: ref["spin"](s, {"bronze": 3}) == "bronze", now=now)
    seat_players(table, players, now)
    hand_ids = []
    hand = deal(table, now)
    for number in range(4):
        at = hand.started_at
        buy_draw(table_id=table.pk, user_id=alice.pk, now=at, free=True)
        buy_draw(table_id=table.pk, user_id=bob.pk, now=at)
        buy_redeal(table_id=table.pk, user_id=carol.pk, now=at)
        hand_ids.append(hand.pk)
        settle(table)
        table.refresh_from_db()
        if number == 3:
            break
        results_end = table.phase_deadline
        assert results_end is not None
        for user in players:
            touch_presence(table_id=table.pk, user_id=user.pk, now=results_end)
        assert advance_table(table_id=table.pk, now=results_end)
        table.refresh_from_db()
        assert table.current_hand is not None
        hand = table.current_hand

    client = logged_in(auditor)
    exports = [client.get(f"/history/hands/{hand_id}/export.json").json() for hand_id in hand_ids]
    assert exports[0]["hand"]["spin_jackpot"] == "bronze" and exports[0]["hand"]["spin_award_minor"] == 777
    assert [bool(e["hand"]["config"].get("overrides")) for e in exports] == [False, True, False, True]
    assert exports[1]["hand"]["config"]["draw_price_minor"] == 20
    for export in exports:
        (ana,) = [e for e in export["entries"] if e["player"] == alice.username]
        assert ana["promo_minor"] == export["hand"]["config"]["draw_price_minor"]  # her free draw
        assert export["hand"]["algorithm"] == 2 and export["hand"]["beacon"]["value"]
    schema = export_schema()
    for export in exports:
        jsonschema.validate(export, schema, format_checker=jsonschema.FormatChecker())
        assert outside_verify(export, ref) == [], export["hand"]["number"]
    # The verifier can fail: a pool one cent off is caught.
    exports[0]["hand"]["pool_minor"] += 1
    assert outside_verify(exports[0], ref) == ["rake or pool"]


def holdem_reference() -> dict[str, Any]:
    """Section 10's reference code plus section 12's ``holdem_deal``, read from the page."""
    namespace = reference_code()
    section = PAGE.read_text().split("## 12. Texas Hold'em")[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert code is not None
    exec(code.group(1), namespace)
    return namespace


def opens(commitment: str, card: str, salt_hex: str) -> bool:
    """Card commitments (docs/provably-fair.md, section 12): SHA-256(card code || salt)."""
    return hashlib.sha256(card.encode() + bytes.fromhex(salt_hex)).hexdigest() == commitment


def salt(seed: bytes, position: int) -> bytes:
    """Block ``position`` of stream ``holdem-card-salt`` (section 2's block rule)."""
    return hmac.new(seed, b"holdem-card-salt\x00" + struct.pack(">Q", position), hashlib.sha256).digest()


def test_a_holdem_player_verifies_his_and_the_shown_cards_at_once_and_the_whole_deck_after_the_delay(
    alice: User, bob: User
) -> None:
    # Written from docs/provably-fair.md (section 12, Card commitments) and docs/protocol.md
    # alone, through the snapshot URL a client reads; nothing of the engine is imported.
    from tests.tables.holdem_helpers import holdem_table, passive_kind, tick

    table = holdem_table("Verifier Hold'em")
    for user, seat in ((alice, 0), (bob, 1)):
        client = logged_in(user)
        joined = client.post(
            f"/api/tables/{table.pk}/holdem/join/",
            {"seat": seat, "buy_in_minor": 1_000},
            content_type="application/json",
        )
        assert joined.status_code == 200, joined.json()
    tick(table, timezone.now() + timedelta(milliseconds=1))
    a, b = logged_in(alice), logged_in(bob)
    at_deal = a.get(f"/tables/{table.pk}/snapshot.json").json()
    commitments = at_deal["table"]["hand"]["card_commitments"]
    own = at_deal["private"]["hole_openings"]
    assert len(commitments) == 2 * 2 + 8 and len(own) == 2
    assert all(opens(commitments[o["position"]], o["card"], o["salt"]) for o in own)
    clients = {0: a, 1: b}
    for _ in range(20):  # check or call down to the showdown, through the REST doors
        hand_frame = a.get(f"/tables/{table.pk}/snapshot.json").json()["table"]["hand"]
        seat = hand_frame["to_act"]
        if hand_frame["result"] is not None or seat is None:
            break
        legal = clients[seat].get(f"/tables/{table.pk}/snapshot.json").json()["private"]["legal"]
        kind = passive_kind(legal["kinds"])
        acted = clients[seat].post(f"/api/tables/{table.pk}/holdem/{kind}/", {}, content_type="application/json")
        assert acted.status_code == 200, acted.json()
    over = a.get(f"/tables/{table.pk}/snapshot.json").json()["table"]["hand"]
    result = over["result"]
    assert result is not None and over["card_commitments"] == commitments
    assert result["server_seed"] is None and result["chain_seed"] is None
    assert result["revealed"] and all(
        opens(commitments[o["position"]], o["card"], o["salt"]) for o in result["revealed"]
    )
    assert [o["card"] for o in result["revealed"] if o["position"] >= 2 * 2 + 1] == over["board"]
    # After the delay the snapshot gives the seed, and the seed reproduces every commitment
    # published at the deal (section 12's deck, then the salts): the whole deck checks.
    later = datetime.fromisoformat(result["seed_public_at"]) + timedelta(seconds=1)
    with mock.patch("django.utils.timezone.now", return_value=later):  # a day later: a new login
        released = logged_in(alice).get(f"/tables/{table.pk}/snapshot.json").json()["table"]["hand"]["result"]
    seed = bytes.fromhex(released["server_seed"])
    ref = holdem_reference()
    cards, _hole, _board, _burns = ref["holdem_deal"](seed, 2)
    codes = [RANKS[c // 4] + SUITS[c % 4] for c in cards]
    assert all(opens(c, codes[i], salt(seed, i).hex()) for i, c in enumerate(commitments))
    assert hashlib.sha256(bytes.fromhex(released["chain_seed"])).hexdigest() == over["commitment"]
    # The same day-later player downloads the hand's export (docs/holdem-export.md) and
    # recomputes its seed from published data (docs/provably-fair.md, 12, Algorithm 3).
    hand_id = int(over["id"])
    with mock.patch("django.utils.timezone.now", return_value=later):
        export = logged_in(alice).get(f"/history/holdem/{hand_id}/export.json").json()
    assert holdem_seed_problems(export, ref) == []
    # The verifier can fail: a bot's (or anyone's) seed other than the committed one is caught.
    export["fairness"]["client_seeds"][0]["seed"] += "0"
    assert "client seed commitment" in holdem_seed_problems(export, ref)


def holdem_seed_problems(export: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    """Step 1 of docs/holdem-export.md, "Checking a hand", from the export alone: the chain
    seed opens the commitment, each client seed opens its commitment, the frozen lines hash
    to the freeze digest, the deal round is the first after the freeze, and the server seed
    is HMAC(hand_seed_v2, "holdem-deal" 0x00 digest value) (provably-fair.md, 12)."""
    problems: list[str] = []
    hand, fair = export["hand"], export["fairness"]
    if fair["algorithm"] != 3 or fair["server_seed"] is None:
        return ["not an algorithm-3 hand with public seeds"]
    chain_seed = bytes.fromhex(fair["chain_seed"])
    if hashlib.sha256(chain_seed).hexdigest() != fair["commitment"]:
        problems.append("chain commitment")
    seeds = fair["client_seeds"]
    if any(hashlib.sha256(f"{c['name']}:{c['seed']}".encode()).hexdigest() != c["commitment"] for c in seeds):
        problems.append("client seed commitment")
    lines = [
        "holdem-freeze/1",
        f"table:{hand['table_id']}",
        f"hand:{hand['number']}",
        f"chain:{fair['chain_id']}:{fair['chain_index']}",
        f"commitment:{fair['commitment']}",
        f"button:{export['button']}",
        f"round:{fair['deal_round']}",
        *(
            f"seat:{c['seat']}:{c['name']}:{c['commitment']}"
            for c in sorted(seeds, key=lambda c: c["seat"])
            if c["seat"] is not None
        ),
    ]
    digest = hashlib.sha256("\n".join(lines).encode()).digest()
    if digest.hex() != fair["freeze_digest"]:
        problems.append("freeze digest")
    frozen_at = datetime.fromisoformat(fair["frozen_at"])
    round_at = datetime.fromisoformat(fair["deal_round_at"])
    if not round_at - timedelta(seconds=fair["beacon_period_seconds"]) <= frozen_at < round_at:
        problems.append("deal round")
    v2 = ref["hand_seed"](chain_seed, hand["table_id"], hand["number"], {c["name"]: c["seed"] for c in seeds})
    server = hmac.digest(v2, b"holdem-deal\x00" + digest + bytes.fromhex(fair["deal_beacon_value"]), "sha256")
    if server.hex() != fair["server_seed"]:
        problems.append("server seed")
    return problems
