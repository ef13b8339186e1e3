"""Template filters of the hand history and report pages: money, cards, combinations."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from wallet.money import format_minor

register = template.Library()

_SUITS = {"c": ("♣", "black"), "d": ("♦", "red"), "h": ("♥", "red"), "s": ("♠", "black")}


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
    return f"{int(bps) / 100:.2f}%"


@register.filter
def card(code: str) -> SafeString:
    """A card code (``"Th"``) as its rank and suit symbol, red or black (``10♥``)."""
    rank, suit = code[0], code[1]
    symbol, colour = _SUITS[suit]
    return format_html(
        '<span class="hh-card hh-{}" title="{}">{}{}</span>',
        colour,
        code,
        "10" if rank == "T" else rank,
        symbol,
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
