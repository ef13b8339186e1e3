"""A finished hand's record cannot be rewritten, on whatever database the suite runs (the
triggers of tables/migrations/0003 and 0016; PostgreSQL also refuses DELETE:
tests/config/test_db_role.py)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, InternalError, ProgrammingError, transaction
from django.utils import timezone

from tables.models import Entry, Hand
from tests.conftest import make_player
from tests.helpers import create_fun_table, deal_hand, settle

pytestmark = pytest.mark.django_db


def test_a_settled_hand_and_its_entries_refuse_updates_but_a_running_hand_does_not() -> None:
    table = create_fun_table("Final Rail")
    hand = deal_hand(table, [make_player("final-a"), make_player("final-b")], timezone.now())
    assert Hand.objects.filter(pk=hand.pk).update(cancel_reason="") == 1  # running: may change
    assert Entry.objects.filter(hand=hand).update(place=None) == 2
    settle(table)
    with pytest.raises((IntegrityError, InternalError, ProgrammingError)), transaction.atomic():
        Hand.objects.filter(pk=hand.pk).update(rake_minor=0)
    with pytest.raises((IntegrityError, InternalError, ProgrammingError)), transaction.atomic():
        Entry.objects.filter(hand=hand).update(place=1)
