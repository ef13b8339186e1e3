"""Template filters of the hand history and report pages: money, cards, combinations."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template
from django.templatetags.static import static
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from handhistory.labels import check_detail as _check_detail
from handhistory.labels import check_label as _check_label
from handhistory.labels import holdem_action_label as _holdem_action_label
from tables.widerpoker import labels
from wallet.money import format_minor

register = template.Library()

_SUITS = "cdhs"


def card_name(code: str) -> str:
    """``"Th"`` -> ``"10 of hearts"`` in English, ``"10 di cuori"`` in Italian: the card's
    text for screen readers and copying (``tables.widerpoker.labels.card_name``).

    >>> card_name("Qs")
    'Queen of spades'
    """
    return labels.card_name(code)


@register.filter
def check_label(name: str) -> str:
    """``{{ check|check_label }}``: a verification check's name in the active language."""
    return _check_label(str(name))


@register.filter
def check_detail(detail: str) -> str:
    """``{{ check.detail|check_detail }}``: a Hold'em check's detail in the active language."""
    return _check_detail(str(detail))


@register.filter
def holdem_action(kind: str) -> str:
    """``{{ action.kind|holdem_action }}``: a Hold'em action as a verb in the active language."""
    return _holdem_action_label(str(kind))


@register.filter
def money(amount_minor: int | None, currency: str = "") -> str:
    """``{{ 12345|money:"FUN" }}`` -> ``123.45 FUN``; an unknown amount shows as a dash."""
    if amount_minor is None:
        return "—"
    return format_minor(int(amount_minor), currency)


@register.filter
def percent_bps(bps: int | None) -> str:
    """Basis points as a percentage with two decimals: ``500`` -> ``5.00%``."""
    if bps is None:
        return "—"
    text = f"{int(bps) / 100:.2f}%"
    return text.replace(".", ",") if (get_language() or "en").startswith("it") else text


@register.filter
def card(code: str) -> SafeString:
    """A card code (``"Th"``) as its face (``static/cards/mini/Th.svg``, drawn by
    ``bin/make-card-faces``), named for screen readers ("10 of hearts"), its code as the tooltip."""
    if len(code) != 2 or code[1] not in _SUITS:
        return format_html('<span class="hh-card">{}</span>', code)
    return format_html(
        '<img class="hh-card" src="{}" alt="{}" title="{}" width="25" height="35">',
        static(f"cards/mini/{code}.svg"),
        card_name(code),
        code,
    )


@register.filter
def cards(codes: Iterable[str] | None) -> SafeString:
    """Several card codes, each as ``card`` renders it, kept on one line."""
    return format_html(
        '<span class="hh-hand">{}</span>',
        format_html_join(" ", "{}", ((card(code),) for code in codes or ())),
    )


@register.filter
def digits(combination: Iterable[int] | None) -> str:
    """A combination's positions p0..p4 as five digits (``(0, 3, 1, 4, 1)`` -> ``03141``)."""
    return "".join(str(d) for d in combination or ())


_SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}


@register.filter
def face(code: str, extra: str = "") -> SafeString:
    """A card as the WiderPoker game screen draws it (``static/js/cards.js``, ``card``): a
    ``.card`` tile with its rank and suit symbol, red for diamonds and hearts, named for
    screen readers ("King of spades"); ``extra`` adds classes (``"mine changed"``)."""
    if len(code) != 2 or code[1] not in _SUITS:
        return format_html('<span class="card">{}</span>', code)
    from django.utils.translation import gettext

    classes = " ".join(part for part in ("card", "red" if code[1] in "dh" else "", extra) if part)
    held = gettext("HELD") if "held" in extra.split() else ""
    return format_html(
        '<span class="{}" role="img" aria-label="{}" title="{}"{}><span class="rank" aria-hidden="true">{}</span>'
        '<span class="suit" aria-hidden="true">{}</span></span>',
        classes,
        card_name(code),
        card_name(code),
        format_html(' data-held-label="{}"', held) if held else "",
        "10" if code[0] == "T" else code[0],
        _SUIT_SYMBOLS[code[1]],
    )


@register.filter
def pcard(code: str, size: str = "") -> SafeString:
    """A card as the Hold'em game screen draws it (``static/js/holdem.js``): its SVG face
    (``static/cards/<code>.svg``) named for screen readers; ``size`` ``"small"`` for a
    smaller one."""
    if len(code) != 2 or code[1] not in _SUITS:
        return format_html('<span class="pcard pcard-slot">{}</span>', code)
    return format_html(
        '<img class="pcard{}" src="{}" alt="{}" title="{}" width="56" height="78">',
        " pcard-small" if size == "small" else "",
        static(f"cards/{code}.svg"),
        card_name(code),
        card_name(code),
    )


@register.filter
def columns_list(columns: Iterable[int]) -> str:
    """Column numbers (1..5) as people list them: ``[1, 3, 5]`` -> ``"1, 3 and 5"`` in
    English, ``"1, 3 e 5"`` in Italian."""
    from django.utils.text import get_text_list
    from django.utils.translation import gettext

    return str(get_text_list([str(c) for c in columns], gettext("and")))


@register.filter
def held_columns(code: str | None) -> list[int]:
    """A hold code (``"HDHHD"``, column 1 first) as the held columns, 1-based: ``[1, 3, 4]``."""
    return [c + 1 for c, flag in enumerate(code or "") if flag == "H"]


@register.filter
def get_item(mapping: dict[Any, Any] | None, key: Any) -> Any:
    """``{{ mapping|get_item:key }}``: the value at ``key``, or an empty tuple."""
    return (mapping or {}).get(key, ())
