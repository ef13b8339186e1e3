"""``manage.py verify_hands [--table ID] [--since DATE]``: recompute terminal hands from
their revealed seeds and report every mismatch; exit code 1 if any hand fails."""

from __future__ import annotations

from datetime import UTC, datetime, time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from handhistory.selectors import list_verifiable_hand_ids
from handhistory.verification import verify_hand


def _since(text: str) -> datetime:
    """``YYYY-MM-DD`` (midnight UTC) or an ISO date-time; naive times are UTC."""
    moment = parse_datetime(text)
    if moment is None:
        day = parse_date(text)
        if day is None:
            raise CommandError(f"--since: {text!r} is not a date (YYYY-MM-DD) or a date-time")
        moment = datetime.combine(day, time.min)
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

    def handle(self, *args: Any, **options: Any) -> None:
        since = _since(options["since"]) if options["since"] else None
        checked = failed = 0
        for hand_id in list(list_verifiable_hand_ids(table_id=options["table"], since=since)):
            report = verify_hand(hand_id=hand_id)
            checked += 1
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
        if failed:
            raise CommandError(summary, returncode=1)
        self.stdout.write(self.style.SUCCESS(summary))
