"""Parsing and formatting of money at the edges. Inside, money is always integer minor units."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

MINOR_DIGITS = 2


def parse_minor(text: str) -> int:
    """Parse a major-unit amount like ``"12.50"`` into minor units (1250).

    Raises ValueError for anything that is not a positive amount with at most two decimals.

    >>> parse_minor("12.5")
    1250
    """
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation as error:
        raise ValueError(f"{text!r} is not an amount") from error
    if not value.is_finite() or value <= 0:
        raise ValueError("the amount must be positive")
    minor = value.scaleb(MINOR_DIGITS)
    if minor != minor.to_integral_value():
        raise ValueError("at most two decimals")
    return int(minor)


# How each language writes an amount: (thousands separator, decimal separator, symbol of
# a currency written before or after the number). Italian writes "1.234,56 €" (the
# Accademia della Crusca and Banca d'Italia usage); English keeps the ISO code after the
# number, "1,234.56 EUR". FUN chips are never a currency symbol.
_LANGUAGE_STYLE: dict[str, tuple[str, str, dict[str, str]]] = {
    "en": (",", ".", {}),
    "it": (".", ",", {"EUR": "€"}),
}


def _active_language() -> str:
    """The language of the current request (Django's active translation), or English
    when translations are not set up (doctests, scripts)."""
    try:
        from django.utils import translation

        return (translation.get_language() or "en").split("-")[0]
    except Exception:  # settings not configured
        return "en"


def format_minor(amount_minor: int, currency: str = "", *, language: str | None = None) -> str:
    """Format minor units for people, in the way ``language`` writes amounts.

    ``language`` is a language code ("en", "it"); ``None`` means the active language of
    the request (``django.utils.translation``). Unknown languages write English. Text that
    is stored (ledger memos) passes ``language="en"``.

    >>> format_minor(123456, "EUR", language="en")
    '1,234.56 EUR'
    >>> format_minor(123456, "EUR", language="it")
    '1.234,56 €'
    >>> format_minor(-5, "FUN", language="it")
    '-0,05 FUN'
    >>> format_minor(-5, "FUN", language="en")
    '-0.05 FUN'
    """
    code = (language or _active_language()).split("-")[0]
    thousands, decimal, symbols = _LANGUAGE_STYLE.get(code, _LANGUAGE_STYLE["en"])
    sign = "-" if amount_minor < 0 else ""
    whole, cents = divmod(abs(amount_minor), 10**MINOR_DIGITS)
    text = f"{sign}{whole:,}".replace(",", thousands) + f"{decimal}{cents:02d}"
    if currency[:1] == "T" and currency[1:].isdigit():  # a tournament's chips (wallet.models.chip_currency)
        return f"{text} {_CHIPS_WORD.get(code, 'chips')}"
    return f"{text} {symbols.get(currency, currency)}".strip()


_CHIPS_WORD = {"en": "chips", "it": "fiches"}
"""How each language names a tournament's chips after an amount (``format_minor``)."""
