"""``manage.py verify_hands [--table ID] [--since DATE] [--until DATE] [--report FILE]``:
recompute terminal hands of both games from their revealed seeds and report every mismatch;
exit code 1 if any hand fails. WiderPoker hands: ``handhistory.verification``; Hold'em hands:
``handhistory.holdem_verification`` (the log replayed through the engine, the PHH text, the
players' rows, the results and the ledger's rake), with a count of the Hold'em hands that
have no PHH text (checked from their action log only). ``--report`` writes a JSON report
whose ``digest`` an auditor can cite (docs/auditing.md says how to recompute it)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, time, timedelta
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from handhistory.export import list_verifiable_hand_ids
from handhistory.holdem_verification import HoldemReport, list_verifiable_holdem_hands, verify_holdem_hand_records
from handhistory.verification import verify_hand
from tables.models import Hand, HoldemHandStatus

REPORT_FORMAT = "widerpoker-verification-report/1"


def _since(text: str, option: str = "--since", next_day: bool = False) -> datetime:
    """``YYYY-MM-DD`` (midnight UTC; with ``next_day`` the midnight after it, so that
    ``--until`` includes its day) or an ISO date-time; naive times are UTC."""
    try:
        day = parse_date(text) if len(text) == 10 else None  # a bare date (parse_datetime takes it as midnight)
    except ValueError:
        raise CommandError(f"{option}: {text!r} is not a valid date") from None
    if day is not None:
        moment = datetime.combine(day + timedelta(days=1) if next_day else day, time.min)
    else:
        parsed = parse_datetime(text)
        if parsed is None:
            raise CommandError(f"{option}: {text!r} is not a date (YYYY-MM-DD) or a date-time")
        moment = parsed
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment, UTC)
    return moment


class Command(BaseCommand):
    help = (
        "Recompute settled and cancelled hands from their revealed seeds and compare with "
        "what is stored; exit code 1 if any hand does not match."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--table", type=int, help="Only the hands of this table id.")
        parser.add_argument("--since", type=str, help="Only hands dealt at or after this date (YYYY-MM-DD).")
        parser.add_argument(
            "--until", type=str, help="Only hands dealt before the end of this date (YYYY-MM-DD, included)."
        )
        parser.add_argument("--report", type=Path, help="Write a JSON report with a citable digest to this file.")

    def handle(self, *args: Any, **options: Any) -> None:
        since = _since(options["since"]) if options["since"] else None
        until = _since(options["until"], "--until", next_day=True) if options["until"] else None
        hand_ids = list_verifiable_hand_ids(table_id=options["table"], since=since)
        if until is not None:
            hand_ids = hand_ids.filter(started_at__lt=until)
        checked = failed = 0
        lines: list[dict[str, Any]] = []
        for hand_id in list(hand_ids):
            report = verify_hand(hand_id=hand_id)
            checked += 1
            if options["report"] is not None:
                lines.append(_report_line(hand_id, report.ok, [str(m) for m in report.mismatches]))
            if report.ok:
                continue
            failed += 1
            self.stdout.write(
                self.style.ERROR(
                    f"hand {report.hand_id} ({report.table_name} #{report.number}): "
                    f"{report.mismatch_count} mismatch(es)"
                )
            )
            for mismatch in report.mismatches:
                self.stdout.write(f"  {mismatch}")
        summary = f"Verified {checked} hand(s): {checked - failed} ok, {failed} with mismatches."
        holdem = self._verify_holdem(options["table"], since, until, options["report"] is not None)
        summary += (
            f" Verified {holdem['checked']} Hold'em hand(s): {holdem['checked'] - holdem['failed']} ok, "
            f"{holdem['failed']} with mismatches; {holdem['without_phh']} settled with no PHH text "
            "(PHH cannot express them) were checked by replaying their action log through the engine."
        )
        if options["report"] is not None:
            body = {
                "format": REPORT_FORMAT,
                "range": {
                    "table": options["table"],
                    "since": since.isoformat() if since else None,
                    "until": until.isoformat() if until else None,
                },
                "summary": {"checked": checked, "ok": checked - failed, "failed": failed},
                "hands": lines,
                "holdem_summary": {
                    "checked": holdem["checked"],
                    "ok": holdem["checked"] - holdem["failed"],
                    "failed": holdem["failed"],
                    "without_phh": holdem["without_phh"],
                },
                "holdem_hands": holdem["lines"],
            }
            digest = report_digest(body)
            document = {**body, "generated_at": timezone.now().isoformat(), "digest": digest}
            options["report"].write_text(json.dumps(document, indent=1) + "\n")
            self.stdout.write(f"Report written to {options['report']} (digest {digest}).")
        if failed or holdem["failed"]:
            raise CommandError(summary, returncode=1)
        self.stdout.write(self.style.SUCCESS(summary))

    def _verify_holdem(
        self, table_id: int | None, since: datetime | None, until: datetime | None, report: bool
    ) -> dict[str, Any]:
        """Verify the terminal Hold'em hands in range, print each one that fails; returns
        the counts (checked, failed, without_phh) and the report's lines."""
        checked = failed = without_phh = 0
        lines: list[dict[str, Any]] = []
        for hand in list_verifiable_holdem_hands(table_id=table_id, since=since, until=until).iterator(chunk_size=500):
            result = verify_holdem_hand_records(hand)
            checked += 1
            if hand.status == HoldemHandStatus.SETTLED and not result.phh_checked:
                without_phh += 1
            if report:
                lines.append(_holdem_report_line(result))
            if result.ok:
                continue
            failed += 1
            self.stdout.write(
                self.style.ERROR(
                    f"Hold'em hand {hand.pk} ({hand.table.name} #{hand.number}): {len(result.mismatches)} mismatch(es)"
                )
            )
            for mismatch in result.mismatches:
                self.stdout.write(f"  {mismatch.name}" + (f": {mismatch.detail}" if mismatch.detail else ""))
        return {"checked": checked, "failed": failed, "without_phh": without_phh, "lines": lines}


def _report_line(hand_id: int, ok: bool, mismatches: list[str]) -> dict[str, Any]:
    """What the report says of one hand: who it is, what was committed and revealed, the
    stored totals that were checked, and the verdict."""
    hand = Hand.objects.select_related("table").get(pk=hand_id)
    return {
        "hand_id": hand.pk,
        "table_id": hand.table_id,
        "number": hand.number,
        "status": hand.status,
        "commitment": hand.commitment,
        "server_seed": hand.server_seed,
        "entry_count": hand.entry_count,
        "gross_minor": hand.gross_minor,
        "rake_minor": hand.rake_minor,
        "pool_minor": hand.pool_minor,
        "breakage_minor": hand.breakage_minor,
        "ok": ok,
        "mismatches": mismatches,
    }


def _holdem_report_line(result: HoldemReport) -> dict[str, Any]:
    """What the report says of one Hold'em hand (amounts in minor units)."""
    hand = result.hand
    return {
        "hand_id": hand.pk,
        "table_id": hand.table_id,
        "number": hand.number,
        "status": hand.status,
        "commitment": hand.commitment,
        "server_seed": hand.server_seed,
        "pot_minor": hand.pot_minor,
        "rake_minor": hand.rake_minor,
        "phh_checked": result.phh_checked,
        "ok": result.ok,
        "mismatches": [m.name + (f": {m.detail}" if m.detail else "") for m in result.mismatches],
    }


def report_digest(body: dict[str, Any]) -> str:
    """``"sha256:<hex>"`` of the report's body (everything but ``generated_at`` and
    ``digest``) as canonical JSON: keys sorted, no spaces, UTF-8.

    >>> report_digest({"b": 1, "a": [1, 2]}) == "sha256:" + hashlib.sha256(b'{"a":[1,2],"b":1}').hexdigest()
    True
    """
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return "sha256:" + hashlib.sha256(canonical).hexdigest()
