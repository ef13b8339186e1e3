"""The hand page and the list of hands in Italian: card faces named for screen readers as
Italian players say them, hand names in Italian, money in the Italian format."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.utils import translation

from tables.models import Entry, Hand
from tables.widerpoker.labels import card_name, category_name
from tests.helpers import logged_in
from wallet.money import format_minor

pytestmark = pytest.mark.django_db

ITALIAN = {"Accept-Language": "it"}


def test_the_hand_page_names_every_card_and_hand_in_italian(settled_hand: Hand, alice: User) -> None:
    page = logged_in(alice).get(f"/history/hands/{settled_hand.pk}/", headers=ITALIAN).content.decode()
    alts = re.findall(r'<img class="hh-card"[^>]* alt="([^"]+)"', page)
    assert len(alts) >= 52  # the 50 cards of the board and the 2 out, at least
    with translation.override("it"):
        for code in settled_hand.board["columns"][0]:
            assert card_name(code) in alts
        entry = Entry.objects.get(hand=settled_hand, user=alice)
        assert category_name(entry.category) in page
        assert format_minor(entry.paid_minor, settled_hand.currency) in page
    assert all(" of " not in alt for alt in alts)
    assert all(" di " in alt for alt in alts)
    assert "Verificata: ricalcolato dal seed rivelato" in page
    assert "Chiavi di cambio" in page and "Montepremi" in page


def test_my_hands_in_italian(settled_hand: Hand, alice: User) -> None:
    page = logged_in(alice).get("/history/", headers=ITALIAN).content.decode()
    assert "Le mie mani" in page and 'data-label="Mano finale"' in page
    entry = Entry.objects.get(hand=settled_hand, user=alice)
    with translation.override("it"):
        assert category_name(entry.category) in page
