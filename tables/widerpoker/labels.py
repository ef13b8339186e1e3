"""Names of cards and poker hands for people, in the active language (issue 11, item 4).

The engine (``tables/engine``) keeps its English labels and imports nothing of Django; the
site shows these instead. Italian follows what Italian players say (seed 002 speaks of
"carte francesi"; ranks Asso, Re, Donna, Fante; suits cuori, quadri, fiori, picche; hands
Scala reale, Scala colore, Poker, Full, Colore, Scala, Tris, Doppia coppia, Coppia, Carta alta):
the translations are in ``locale/it/LC_MESSAGES/django.po`` (context "card" and "poker hand").
"""

from __future__ import annotations

from django.utils.translation import pgettext, pgettext_lazy

from tables.engine.evaluator_tables import HandCategory

# Suit names as used inside a card's name ("10 of hearts").
SUIT_NAMES = {
    "c": pgettext_lazy("card suit", "clubs"),
    "d": pgettext_lazy("card suit", "diamonds"),
    "h": pgettext_lazy("card suit", "hearts"),
    "s": pgettext_lazy("card suit", "spades"),
}
RANK_NAMES = {
    "A": pgettext_lazy("card rank", "Ace"),
    "K": pgettext_lazy("card rank", "King"),
    "Q": pgettext_lazy("card rank", "Queen"),
    "J": pgettext_lazy("card rank", "Jack"),
    "T": "10",
}
CATEGORY_NAMES = {
    HandCategory.HIGH_CARD: pgettext_lazy("poker hand", "High card"),
    HandCategory.ONE_PAIR: pgettext_lazy("poker hand", "One pair"),
    HandCategory.TWO_PAIR: pgettext_lazy("poker hand", "Two pair"),
    HandCategory.THREE_OF_A_KIND: pgettext_lazy("poker hand", "Three of a kind"),
    HandCategory.STRAIGHT: pgettext_lazy("poker hand", "Straight"),
    HandCategory.FLUSH: pgettext_lazy("poker hand", "Flush"),
    HandCategory.FULL_HOUSE: pgettext_lazy("poker hand", "Full house"),
    HandCategory.FOUR_OF_A_KIND: pgettext_lazy("poker hand", "Four of a kind"),
    HandCategory.STRAIGHT_FLUSH: pgettext_lazy("poker hand", "Straight flush"),
    HandCategory.ROYAL_FLUSH: pgettext_lazy("poker hand", "Royal flush"),
}


def card_name(code: str) -> str:
    """A card code as people say it, in the active language: ``"Th"`` -> "10 of hearts"
    ("10 di cuori" in Italian), ``"Qs"`` -> "Queen of spades" ("Donna di picche").

    Raises:
        KeyError: ``code`` is not a rank (``23456789TJQKA``) followed by a suit (``cdhs``).
    """
    rank = code[0]
    if rank not in RANK_NAMES and rank not in "23456789":
        raise KeyError(code)
    return pgettext("card name", "%(rank)s of %(suit)s") % {
        "rank": str(RANK_NAMES.get(rank, rank)),
        "suit": str(SUIT_NAMES[code[1]]),
    }


def category_name(category: int | None) -> str:
    """A hand category (``HandCategory`` value 0..9) as people name it in the active
    language ("Two pair", "Doppia coppia"); an empty string for None.

    Raises:
        ValueError: ``category`` is not a HandCategory value.
    """
    if category is None:
        return ""
    return str(CATEGORY_NAMES[HandCategory(category)])
