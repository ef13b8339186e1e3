"""The auditor report: totals by day, table and player over any range with return to
player, charts, streamed CSV and JSON exports of hands, entries and ledger legs, and a
verification report with a digest to cite."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.http import StreamingHttpResponse

from backoffice import audit_exports, auditing
from handhistory.management.commands.verify_hands import report_digest
from tables.models import Entry, Hand
from tests.helpers import logged_in
from wallet.models import LedgerEntry

pytestmark = pytest.mark.django_db


def _day(hand: Hand) -> str:
    assert hand.settled_at is not None
    return hand.settled_at.date().isoformat()


def _body(response: Any) -> str:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content).decode()  # type: ignore[arg-type]  # sync iterator of bytes


def test_players_cannot_open_the_auditor_report_or_its_exports(alice: User) -> None:
    client = logged_in(alice)
    for url in ("/backoffice/audit/", "/backoffice/audit/hands.csv", "/backoffice/audit/transfers.json"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert "/admin/login/" in response["Location"]


def test_totals_by_day_and_table_match_the_hand(settled_hand: Hand, auditor: User) -> None:
    day = _day(settled_hand)
    client = logged_in(auditor)
    for group in ("day", "table"):
        response = client.get("/backoffice/audit/", {"start": day, "end": day, "group": group})
        assert response.status_code == 200
        [row] = response.context["rows"]
        prizes = settled_hand.pool_minor - settled_hand.breakage_minor
        assert (row.hands, row.entries, row.gross_minor, row.rake_minor, row.prizes_minor) == (
            1,
            2,
            settled_hand.gross_minor,
            settled_hand.rake_minor,
            prizes,
        )
        assert row.rtp == auditing.rtp(prizes, settled_hand.gross_minor)
        assert row.label == (day if group == "day" else "Test Rail")


def test_totals_by_player_are_what_each_paid_and_won(settled_hand: Hand, auditor: User) -> None:
    day = _day(settled_hand)
    rows = auditing.list_audit_totals(
        start=settled_hand.settled_at.date(),  # type: ignore[union-attr]
        end=settled_hand.settled_at.date(),  # type: ignore[union-attr]
        group_by="player",
    )
    expected = {e.user.username: (e.paid_minor, e.prize_minor) for e in Entry.objects.filter(hand=settled_hand)}
    assert {row.label: (row.gross_minor, row.prizes_minor) for row in rows} == expected
    assert sum(row.gross_minor for row in rows) == settled_hand.gross_minor
    page = logged_in(auditor).get("/backoffice/audit/", {"start": day, "end": day, "group": "player"})
    assert "alice" in page.content.decode() and "bob" in page.content.decode()


def test_a_range_without_hands_is_empty_and_a_bad_grouping_is_refused(settled_hand: Hand) -> None:
    assert settled_hand.settled_at is not None
    last_year = settled_hand.settled_at.date() - timedelta(days=365)
    assert auditing.list_audit_totals(start=last_year, end=last_year, group_by="day") == []
    with pytest.raises(ValueError, match="group_by"):
        auditing.list_audit_totals(start=last_year, end=last_year, group_by="week")  # type: ignore[arg-type]


def test_the_charts_have_a_day_series_and_the_prize_distribution(settled_hand: Hand, auditor: User) -> None:
    day = _day(settled_hand)
    response = logged_in(auditor).get("/backoffice/audit/", {"start": day, "end": day})
    [chart] = response.context["charts"]
    assert chart["days"] == (day,)
    assert chart["rake_minor"] == (settled_hand.rake_minor,)
    winners = Entry.objects.filter(hand=settled_hand, prize_minor__gt=0).count()
    assert sum(chart["prize_counts"]) == winners
    page = response.content.decode()
    assert 'id="audit-charts"' in page and "chart.umd.min.js" in page


def test_the_hands_csv_streams_every_hand_of_the_range_with_its_revealed_seed(
    settled_hand: Hand, auditor: User
) -> None:
    day = _day(settled_hand)
    response = logged_in(auditor).get("/backoffice/audit/hands.csv", {"start": day, "end": day})
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="hands-{day}-{day}.csv"'
    rows = list(csv.DictReader(io.StringIO(_body(response))))
    assert [int(row["id"]) for row in rows] == [settled_hand.pk]
    assert rows[0]["server_seed"] == settled_hand.server_seed
    assert int(rows[0]["rake_minor"]) == settled_hand.rake_minor
    assert rows[0]["table_name"] == "Test Rail"


def test_the_entries_json_is_an_array_of_every_entry(settled_hand: Hand, auditor: User) -> None:
    day = _day(settled_hand)
    response = logged_in(auditor).get("/backoffice/audit/entries.json", {"start": day, "end": day})
    entries = json.loads(_body(response))
    assert sorted(item["user_username"] for item in entries) == ["alice", "bob"]
    assert sum(item["paid_minor"] for item in entries) == settled_hand.gross_minor
    assert set(entries[0]) == set(audit_exports.export_header("entries"))


def test_the_transfers_export_has_every_ledger_leg_and_they_balance(settled_hand: Hand, auditor: User) -> None:
    day = _day(settled_hand)
    response = logged_in(auditor).get("/backoffice/audit/transfers.csv", {"start": day, "end": day})
    legs = list(csv.DictReader(io.StringIO(_body(response))))
    assert len(legs) == LedgerEntry.objects.count()
    by_transfer: dict[str, int] = {}
    for leg in legs:
        by_transfer[leg["reference"]] = by_transfer.get(leg["reference"], 0) + int(leg["delta_minor"])
    assert set(by_transfer.values()) == {0}
    assert f"settle:{settled_hand.pk}" in by_transfer


def test_an_unknown_export_is_a_404(auditor: User) -> None:
    client = logged_in(auditor)
    assert client.get("/backoffice/audit/seeds.csv").status_code == 404
    assert client.get("/backoffice/audit/hands.xml").status_code == 404


def test_exports_read_in_chunks_rather_than_loading_the_range(
    settled_hand: Hand, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(auditing, "EXPORT_CHUNK", 1)
    assert settled_hand.settled_at is not None
    day = settled_hand.settled_at.date()
    rows = audit_exports.iter_export_rows("entries", start=day, end=day)
    first = next(rows)
    assert first[0] == settled_hand.pk
    assert len(list(rows)) == 1


def test_verify_hands_writes_a_report_whose_digest_recomputes(settled_hand: Hand, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    day = _day(settled_hand)
    call_command("verify_hands", "--since", day, "--until", day, "--report", str(out))
    report = json.loads(out.read_text())
    assert report["summary"] == {"checked": 1, "ok": 1, "failed": 0}
    assert report["hands"][0]["server_seed"] == settled_hand.server_seed
    body = {key: value for key, value in report.items() if key not in {"digest", "generated_at"}}
    assert report["digest"] == report_digest(body)
    body["hands"][0]["rake_minor"] += 1
    assert report_digest(body) != report["digest"]


def test_verify_hands_until_excludes_later_days(settled_hand: Hand, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    assert settled_hand.settled_at is not None
    yesterday = (settled_hand.started_at.date() - timedelta(days=1)).isoformat()
    call_command("verify_hands", "--until", yesterday, "--report", str(out))
    assert json.loads(out.read_text())["summary"]["checked"] == 0


def test_the_report_by_player_shows_one_page_and_keeps_its_filters(
    settled_hand: Hand, auditor: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backoffice import views

    monkeypatch.setattr(views, "AUDIT_ROWS_PER_PAGE", 1)
    day = _day(settled_hand)
    players = Entry.objects.filter(hand=settled_hand).count()
    assert players >= 2
    client = logged_in(auditor)
    seen = []
    for number in range(1, players + 1):
        response = client.get("/backoffice/audit/", {"start": day, "end": day, "group": "player", "page": str(number)})
        assert len(response.context["rows"]) == 1
        seen.append(response.context["rows"][0].label)
        html = response.content.decode()
        assert f"Rows {number}\u2013{number} of {players}" in html  # en dash
        if number < players:
            assert f"group=player&amp;page={number + 1}" in html  # the next page keeps the grouping
        assert "page=" not in response.context["export_query"]  # downloads are never one page
    assert sorted(seen) == sorted(Entry.objects.filter(hand=settled_hand).values_list("user__username", flat=True))
