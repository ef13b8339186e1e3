"""Ledger memos for people, in the reader's language (UX audit 2026-11-26, N13).

A transfer's ``memo`` is stored in English once and for all (it is part of the ledger's hash
chain, wallet/chain.py). The player's wallet page reads each memo the platform writes
(tables/services, wallet/services.py) through ``memo_for_people``: a known English pattern
is rewritten in the active language, its amounts in the language's way of writing them
(``wallet.money.format_minor``). Memos typed by staff (a deposit's reason) and any memo
no pattern knows are shown as written.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _

from wallet.money import MINOR_DIGITS, format_minor

_AMOUNT = r"-?[\d,]+\.\d{2} [A-Z]{3}"

# (pattern of the stored English memo, its sentence for people), the named groups in both.
_MEMOS: tuple[tuple[re.Pattern[str], str | Promise], ...] = tuple(
    (re.compile(pattern + r"\Z", re.DOTALL), sentence)
    for pattern, sentence in (
        (
            rf"Settlement of hand (?P<hand>\S+): rake (?P<rake>{_AMOUNT}), pool (?P<pool>{_AMOUNT})",
            _("Settlement of hand %(hand)s: rake %(rake)s, pool %(pool)s"),
        ),
        (r"Ante of hand (?P<table>.+) #(?P<number>\d+)", _("Ante of hand #%(number)s at %(table)s")),
        (r"Draws and redeals bought in hand (?P<hand>\S+)", _("Draws and redeals bought in hand %(hand)s")),
        (r"Draw (?P<number>\d+) in hand (?P<hand>\S+)", _("Draw %(number)s in hand %(hand)s")),
        (r"Free redeal in hand (?P<hand>\S+)", _("Free redeal in hand %(hand)s")),
        (r"Redeal in hand (?P<hand>\S+)", _("Redeal in hand %(hand)s")),
        (r"Refund of cancelled hand (?P<hand>\S+): (?P<reason>.*)", _("Refund of cancelled hand %(hand)s: %(reason)s")),
        (r"Chips bought at (?P<table>.+)", _("Chips bought at %(table)s")),
        (r"Chips returned from (?P<table>.+)", _("Chips returned from %(table)s")),
        (r"Fun chips granted at sign-up", _("Fun chips granted at sign-up")),
        (r"Fun chips top-up", _("Fun chips top-up")),
    )
)


def _amount_for_people(text: str) -> str:
    """``"1,234.56 EUR"`` (English, as stored) -> the active language's ``format_minor``."""
    number, currency = text.rsplit(" ", 1)
    minor = int(Decimal(number.replace(",", "")).scaleb(MINOR_DIGITS))
    return format_minor(minor, currency)


_CONVERT: dict[str, Callable[[str], str]] = {"rake": _amount_for_people, "pool": _amount_for_people}


_HAND = re.compile(r"(?P<table>\d+)#(?P<number>\d+)\Z")


def _settlement_for_people(values: dict[str, str], table: str) -> str:
    """A settlement is, on a player's wallet, the prize he won (issue 24: "Settlement of
    hand 1#1" read as nothing to players)."""
    return str(_("Prize of hand #%(number)s at %(table)s (pool %(pool)s, rake %(rake)s)")) % {**values, "table": table}


def memo_for_people(memo: str, *, table_name: Callable[[int], str | None] | None = None) -> str:
    """The stored English ``memo`` in the active language: a platform memo's sentence
    translated, its amounts formatted for the language; any other memo unchanged. With
    ``table_name`` (a table's name by id, None if unknown), a hand written ``<table id>#<number>``
    reads ``#<number> at <table name>``, and a settlement reads as the prize of that hand.

    >>> from django.utils import translation
    >>> with translation.override("en"):
    ...     memo_for_people("Settlement of hand 2#2: rake 1,000.25 FUN, pool 3.80 FUN")
    'Settlement of hand 2#2: rake 1,000.25 FUN, pool 3.80 FUN'
    >>> memo_for_people("cash at the desk")
    'cash at the desk'
    """
    for pattern, sentence in _MEMOS:
        match = pattern.match(memo)
        if match is not None:
            values = {name: _CONVERT.get(name, str)(value) for name, value in match.groupdict().items()}
            hand = _HAND.match(values.get("hand", ""))
            name = None if hand is None or table_name is None else table_name(int(hand.group("table")))
            if hand is not None and name:
                if memo.startswith("Settlement of hand "):
                    return _settlement_for_people({**values, "number": hand.group("number")}, name)
                values["hand"] = str(_("#%(number)s at %(table)s")) % {"number": hand.group("number"), "table": name}
            return str(sentence) % values
    return memo
