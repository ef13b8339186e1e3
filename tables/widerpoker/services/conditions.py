"""The conditions of a hand: the table's configuration, plus the rules a special hand or a
spin jackpot changes (seed 001, D and Jackpots 2; DESIGN items 12 and 16).

A hand's conditions are frozen in ``Hand.config`` when it is dealt; everything that prices
or limits a player's action reads them from there, so an override applies to exactly the
hand it was drawn or scheduled for. The rules themselves are the engine's
(``tables.engine.widerpoker.conditions``); this module answers their refusals with the
platform's error (``InvalidTableConfigError``, code ``invalid_table_config``).
"""

from __future__ import annotations

from typing import Any

from tables.engine.widerpoker import conditions as rules
from tables.errors import InvalidTableConfigError


def _refused(error: rules.ConditionsError) -> InvalidTableConfigError:
    """The engine's refusal as the platform's error (same message, ``field`` and ``value``)."""
    if error.value is None:
        return InvalidTableConfigError(str(error), field=error.field)
    return InvalidTableConfigError(str(error), field=error.field, value=error.value)


def validate_overrides(overrides: Any) -> dict[str, Any]:
    """Check an overrides mapping (``rules.validate_overrides``); returns a clean copy.
    Raises InvalidTableConfigError naming the key at fault."""
    try:
        return rules.validate_overrides(overrides)
    except rules.ConditionsError as error:
        raise _refused(error) from error


def validate_table_config(config: dict[str, Any]) -> None:
    """Check a table configuration against the rules (``rules.validate``: rake at most 10%,
    1 to 5 draws, ...); raise InvalidTableConfigError naming the field."""
    try:
        rules.validate(config)
    except rules.ConditionsError as error:
        raise _refused(error) from error


def apply_overrides(config: dict[str, Any], overrides: dict[str, Any], *, source: str) -> dict[str, Any]:
    """The conditions ``config`` with ``overrides`` applied, recording them under
    ``config["overrides"]`` with their ``source`` (``"special"`` or ``"spin:<kind>"``;
    ``rules.apply_overrides``). Raises InvalidTableConfigError when the merged conditions
    break the table rules."""
    try:
        return rules.apply_overrides(config, overrides, source=source)
    except rules.ConditionsError as error:
        raise _refused(error) from error
