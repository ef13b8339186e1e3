"""Template filters of the hand history and report pages: money, cards, combinations."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.templatetags.static import static
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString
from django.utils.translation import get_language

from handhistory.labels import check_detail as _check_detail
from handhistory.labels import check_label as _check_label
from handhistory.labels import holdem_action_label as _holdem_action_label
from tables import labels
from wallet.money import format_minor

register = template.Library()

_SUITS = "cdhs"


def card_name(code: str) -> str:
    """``"Th"`` -> ``"10 of hearts"`` in English, ``"10 di cuori"`` in Italian: the card's
    text for screen readers and copying (``tables.labels.card_name``).

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
