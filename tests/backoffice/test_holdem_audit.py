"""Auditing both games (issue 20): an Auditor (view-only staff, never a superuser) finds
Hold'em hands in the admin and in every report and download, searches hands of both games
by player, and does not see practice games among the operator's figures unless she asks.
A day with a WiderPoker and a Hold'em hand: the downloads agree with the ledger."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.http import StreamingHttpResponse
from django.utils import timezone

from handhistory.holdem_export import holdem_export_schema
from jackpots.admin import JackpotForm
from tables.holdem.practice.services import start_practice_game
from tables.holdem.practice.setup import PracticeSetup
from tables.holdem.services.money import escrow_key
from tables.models import Hand, HoldemHand, HoldemHandStatus
from tests.handhistory.test_holdem_export import outsider_check, timed_out_hand
from tests.handhistory.test_holdem_history import played_hand
from tests.helpers import logged_in
from tests.tables.holdem_helpers import run_until
from wallet.models import Account

QUICK = PracticeSetup(players=3, max_hands=None, max_minutes=240, stakes="short", betting="no-limit", ante=True)


def _body(response: Any) -> str:
    assert response.status_code == 200, response.status_code
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode()  # type: ignore[arg-type]  # sync iterator of bytes


def _today() -> str:
    return timezone.now().date().isoformat()


def _download(client: Any, kind: str, fmt: str, **params: Any) -> Any:
    body = _body(client.get(f"/backoffice/audit/{kind}.{fmt}", {"start": _today(), "end": _today(), **params}))
    return json.loads(body) if fmt == "json" else list(csv.DictReader(io.StringIO(body)))


def practice_hand() -> HoldemHand:
    """A bots-only practice game (seed 004) with one hand settled."""
    # Played from noon today: the clock runs the practice game ahead of the real one, and its
    # hand still ends today (a finished hand's record is final, so it cannot be moved after).
    now = timezone.localtime().replace(hour=12, minute=0, second=0, microsecond=0)
    game = start_practice_game(user_id=None, setup=QUICK, now=now)
    run_until(game.table, now, hands=1)
    hand = HoldemHand.objects.filter(table=game.table).exclude(status=HoldemHandStatus.PLAYING).first()
    assert hand is not None and hand.status == HoldemHandStatus.SETTLED
    assert hand.settled_at is not None and timezone.localtime(hand.settled_at).date() == now.date()
    return hand


@pytest.mark.django_db
def test_the_auditor_finds_holdem_hands_in_the_admin_and_searches_both_games_by_player(
    settled_hand: Hand, alice: User, bob: User, carol: User, auditor: User
) -> None:
    assert not auditor.is_superuser
    hand = played_hand(alice, bob)
    client = logged_in(auditor)
    page = client.get("/admin/tables/holdemhand/")
    assert page.status_code == 200
    assert f"/history/holdem/{hand.pk}/" in page.content.decode()
    assert f"/history/holdem/{hand.pk}/export.json" in page.content.decode()
    assert client.get("/admin/").content.decode().count("/admin/tables/holdemhand/") >= 1
    found = client.get("/admin/tables/holdemhand/", {"q": "alice"}).content.decode()
    assert f"/history/holdem/{hand.pk}/" in found
    assert f"/history/holdem/{hand.pk}/" not in client.get("/admin/tables/holdemhand/", {"q": "carol"}).content.decode()
    detail = client.get(f"/admin/tables/holdemhand/{hand.pk}/change/")
    assert detail.status_code == 200 and hand.server_seed in detail.content.decode()
    players = client.get("/admin/tables/holdemhandplayer/", {"q": "bob"})
    assert players.status_code == 200 and "bob" in players.content.decode()
    # WiderPoker hands by player too.
    wider = f"/history/hands/{settled_hand.pk}/"
    assert wider in client.get("/admin/tables/hand/", {"q": "alice"}).content.decode()
    assert wider not in client.get("/admin/tables/hand/", {"q": "carol"}).content.decode()
    # The ledger too: alice's transfers (her sign-up grant, her buy-in), not carol's.
    transfers = client.get("/admin/wallet/transfer/", {"q": "alice"}).content.decode()
    assert f"fun_grant:{alice.pk}" in transfers and f"fun_grant:{carol.pk}" not in transfers
    assert "buy_in:" in transfers
    legs = client.get("/admin/wallet/ledgerentry/", {"q": "carol"}).content.decode()
    assert f"player:{carol.pk}:FUN" in legs and f"player:{alice.pk}:FUN" not in legs
    # Read-only: the auditor changes nothing.
    assert client.post(f"/admin/tables/holdemhand/{hand.pk}/delete/", {"post": "yes"}).status_code == 403


@pytest.mark.django_db
def test_the_report_and_downloads_count_holdem_and_narrow_to_a_player(
    settled_hand: Hand, alice: User, bob: User, carol: User, auditor: User
) -> None:
    hand = played_hand(alice, bob)
    client = logged_in(auditor)
    page = client.get("/backoffice/audit/", {"start": _today(), "end": _today(), "group": "table"})
    rows = {row.label: row for row in page.context["rows"]}
    holdem = rows["Hold'em Rail"]
    assert (holdem.game, holdem.hands, holdem.entries) == ("holdem", 1, 2)
    assert (holdem.gross_minor, holdem.rake_minor) == (hand.pot_minor, hand.rake_minor)
    assert holdem.prizes_minor == hand.pot_minor - hand.rake_minor
    assert "download-holdem_hands-csv" in page.content.decode()
    assert 'href="/admin/tables/holdemhand/"' in page.content.decode()
    [row] = _download(client, "holdem_hands", "csv")
    assert (int(row["id"]), row["table_name"], row["server_seed"]) == (hand.pk, "Hold'em Rail", hand.server_seed)
    assert (int(row["pot_minor"]), int(row["rake_minor"]), int(row["players"])) == (hand.pot_minor, hand.rake_minor, 2)
    assert row["board"] == " ".join(hand.board)
    seats = _download(client, "holdem_players", "json", player="alice")
    assert [item["user_username"] for item in seats] == ["alice"]
    assert seats[0]["net_minor"] == seats[0]["won_minor"] - seats[0]["paid_minor"]
    # By player: alice's rows of both games, her figures only.
    mine = client.get("/backoffice/audit/", {"start": _today(), "end": _today(), "group": "player", "player": "alice"})
    assert {(row.label, row.game) for row in mine.context["rows"]} == {("alice", "widerpoker"), ("alice", "holdem")}
    assert _download(client, "holdem_hands", "json", player="carol") == []
    assert _download(client, "hands", "json", player="carol") == []
    assert [row["id"] for row in _download(client, "hands", "json", player="bob")] == [settled_hand.pk]
    legs = _download(client, "transfers", "json", player="carol")
    assert {leg["reference"].split(":")[0] for leg in legs} == {"fun_grant"}
    assert client.get("/backoffice/audit/holdem_records.csv").status_code == 404


@pytest.mark.django_db
def test_a_timed_out_all_in_reaches_the_auditor_as_a_whole_hand_document(alice: User, bob: User, auditor: User) -> None:
    hand = timed_out_hand(alice, bob)
    documents = _download(logged_in(auditor), "holdem_records", "json")
    [document] = documents
    jsonschema.Draft202012Validator(holdem_export_schema()).validate(document)
    assert document["hand"]["id"] == hand.pk and document["actions"][0]["kind"] == "timeout_all_in"
    assert all(seat["hole_cards"] for seat in document["seats"])
    assert outsider_check(document) == []


@pytest.mark.django_db
def test_practice_games_stay_out_of_staff_figures_and_public_lists_unless_asked(
    alice: User, bob: User, auditor: User
) -> None:
    hand = practice_hand()
    name = hand.table.name
    client = logged_in(auditor)
    dashboard = client.get("/backoffice/")
    assert dashboard.status_code == 200 and dashboard.context["rows"] == [] and dashboard.context["totals"] == []
    assert name not in client.get("/backoffice/rake/").content.decode()
    assert name not in client.get("/simulator/").content.decode()
    assert name not in client.get("/history/commitments/").content.decode()
    assert name not in client.get("/admin/tables/holdemhand/").content.decode()
    assert name in client.get("/admin/tables/holdemhand/", {"practice": "yes"}).content.decode()
    assert name not in client.get("/admin/tables/table/").content.decode()
    assert name not in client.get("/admin/tables/seat/").content.decode()
    assert not JackpotForm().fields["tables"].queryset.filter(pk=hand.table_id).exists()  # type: ignore[attr-defined]
    report = client.get("/backoffice/audit/", {"start": _today(), "end": _today(), "group": "table"})
    assert report.context["rows"] == [] and name not in report.content.decode()
    asked = client.get("/backoffice/audit/", {"start": _today(), "end": _today(), "group": "table", "practice": "yes"})
    assert [row.label for row in asked.context["rows"]] == [name]
    assert _download(client, "holdem_hands", "json") == []
    assert [row["id"] for row in _download(client, "holdem_hands", "json", practice="yes")] == [hand.pk]


def _sum(rows: list[dict[str, Any]], field: str) -> int:
    return sum(int(row[field]) for row in rows)


@pytest.mark.django_db(transaction=True)
def test_a_day_of_both_games_the_downloads_and_verify_hands_agree_with_the_books(
    settled_hand: Hand, alice: User, bob: User, auditor: User, tmp_path: Path
) -> None:
    holdem = timed_out_hand(alice, bob)
    client = logged_in(auditor)
    hands = _download(client, "hands", "json")
    entries = _download(client, "entries", "json")
    holdem_hands = _download(client, "holdem_hands", "csv")
    holdem_players = _download(client, "holdem_players", "json")
    records = _download(client, "holdem_records", "json")
    legs = _download(client, "transfers", "csv")
    assert [row["id"] for row in hands] == [settled_hand.pk]
    assert [int(row["id"]) for row in holdem_hands] == [holdem.pk]

    def moved(prefix: str, account: str) -> int:
        return sum(
            int(leg["delta_minor"])
            for leg in legs
            if leg["reference"].startswith(prefix) and leg["account_key"] == account
        )

    # Rake: both games' exported rake is what the rake account received, leg by leg.
    exported_rake = _sum(hands, "rake_minor") + _sum(holdem_hands, "rake_minor")
    assert exported_rake == moved("", "rake:FUN") == Account.objects.get(key="rake:FUN").balance_minor
    assert _sum(holdem_hands, "rake_minor") == moved(f"holdem_rake:{holdem.pk}", "rake:FUN")
    # WiderPoker prizes: what the settlement paid the players.
    prizes = sum(int(hand["pool_minor"]) - int(hand["breakage_minor"]) for hand in hands)
    paid_out = sum(
        int(leg["delta_minor"])
        for leg in legs
        if leg["reference"] == f"settle:{settled_hand.pk}" and leg["account_key"].startswith("player:")
    )
    assert prizes == _sum(entries, "prize_minor") == paid_out
    # Hold'em pots and prizes: the pots are the contributions, the winners took pot - rake,
    # and the chips left in the escrow are the players' finishing stacks.
    [record] = records
    assert sum(pot["amount_minor"] for pot in record["pots"]) == _sum(holdem_hands, "pot_minor")
    assert _sum(holdem_players, "won_minor") == _sum(holdem_hands, "prizes_minor")
    assert _sum(holdem_players, "paid_minor") == _sum(holdem_hands, "pot_minor")
    escrow = escrow_key(holdem.table_id)
    assert moved("", escrow) == _sum(holdem_players, "finishing_minor")
    assert outsider_check(record) == []
    # The auditor report's day totals: the same figures, per game.
    report = client.get("/backoffice/audit/", {"start": _today(), "end": _today()})
    assert sum(row.rake_minor or 0 for row in report.context["rows"]) == exported_rake
    assert {row.game for row in report.context["rows"]} == {"widerpoker", "holdem"}
    # verify_hands re-verifies the day: every hand it reports agrees with the exports.
    path = tmp_path / "report.json"
    call_command("verify_hands", since=_today(), until=_today(), report=path)
    verified = json.loads(path.read_text())
    assert verified["summary"]["failed"] == 0 and verified["summary"]["checked"] >= 1
    exported = {(int(row["table_id"]), int(row["number"])): row for row in [*hands, *holdem_hands]}
    for row in verified["hands"]:
        mine = exported[(int(row["table_id"]), int(row["number"]))]
        for field in ("rake_minor", "gross_minor", "pool_minor", "pot_minor"):
            if field in row and field in mine:
                assert int(row[field]) == int(mine[field]), field
