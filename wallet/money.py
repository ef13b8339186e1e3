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


def format_minor(amount_minor: int, currency: str = "") -> str:
    """Format minor units for people: ``format_minor(123456, "EUR")`` -> ``"1,234.56 EUR"``.

    >>> format_minor(-5, "FUN")
    '-0.05 FUN'
    """
    sign = "-" if amount_minor < 0 else ""
    whole, cents = divmod(abs(amount_minor), 10**MINOR_DIGITS)
    text = f"{sign}{whole:,}.{cents:02d}"
    return f"{text} {currency}".strip()
