"""The back office's rake report includes Hold'em tables: pots, rake and players per day."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from backoffice.selectors import list_table_day_totals
from tests.handhistory.test_holdem_history import played_hand
from wallet.models import Account

pytestmark = pytest.mark.django_db


def test_the_rake_report_counts_holdem_hands_and_matches_the_rake_account(alice: User, bob: User) -> None:
    hand = played_hand(alice, bob)
    today = timezone.now().date()
    rows = [row for row in list_table_day_totals(start=today, end=today) if row.table_id == hand.table_id]
    assert len(rows) == 1
    row = rows[0]
    assert (row.hands, row.entries, row.gross_minor, row.rake_minor) == (1, 2, hand.pot_minor, hand.rake_minor)
    assert row.prizes_minor == hand.pot_minor - hand.rake_minor
    assert Account.objects.get(key="rake:FUN").balance_minor == hand.rake_minor > 0
