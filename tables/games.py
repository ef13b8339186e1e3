"""The registry of games: the one place the house asks which game a table plays and how
(issue 21; the review's section 5.2).

``GAMES`` maps each ``Table.game`` key to its ``Game`` (tables/gamespec.py), built by the
game's own package: ``tables/widerpoker/game.py`` and ``tables/holdem/game.py``. The house
asks ``game_of(table)`` (or ``game_of(table_id)``, cached: a table's game never changes)
and calls the ``Game``'s functions; no shared module names a game. A third game adds its
package and one line here (a test registers one with ``register``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from types import MappingProxyType
from typing import Any

from django.db.models.signals import post_save

from tables.commands import execute, parse_action
from tables.config_text import register_value_text
from tables.errors import TableNotFoundError
from tables.gamespec import NO_STEP, ConditionsSpec, Game, GameAdmin, GameAudit, GameLobby, PurchaseDoor, Step
from tables.holdem.game import GAME as HOLDEM
from tables.models import Table
from tables.selectors import register_conditions_reader, register_lobby_row_reader, register_public_frame_reader
from tables.services import configuration
from tables.widerpoker.game import GAME as WIDERPOKER
from tables.widerpoker.services.special import schedule_text

__all__ = [
    "GAMES",
    "NO_STEP",
    "ConditionsSpec",
    "Game",
    "GameAdmin",
    "GameAudit",
    "GameLobby",
    "PurchaseDoor",
    "Step",
    "UnknownGameError",
    "change_table_config",
    "game_of",
    "get",
    "register",
    "registered",
    "run_command",
    "unregister",
]


class UnknownGameError(LookupError):
    """No game of the house has this key (a ``Table.game`` value no package registered)."""


_GAMES: dict[str, Game] = {game.key: game for game in (WIDERPOKER, HOLDEM)}

GAMES: Mapping[str, Game] = MappingProxyType(_GAMES)
"""Every game of the house by key, in the order the lobby lists them (read-only view)."""

_GAME_OF_TABLE: dict[int, str] = {}
"""Each table's game key, as read once (a table's game never changes after it is created)."""


def get(key: str) -> Game:
    """The game of ``key`` (a ``Table.game`` value). Raises UnknownGameError."""
    try:
        return _GAMES[key]
    except KeyError:
        raise UnknownGameError(f"no game {key!r}") from None


def game_of(table: Table | int) -> Game:
    """The game table ``table`` plays (a ``Table``, no query, or its id: one indexed read
    the first time per process, then cached). Raises TableNotFoundError (no such table) and
    UnknownGameError (a game no package registered)."""
    if isinstance(table, Table):
        return get(table.game)
    key = _GAME_OF_TABLE.get(table)
    if key is None:
        key = Table.objects.filter(pk=table).values_list("game", flat=True).first()
        if key is None:
            raise TableNotFoundError(f"no table {table}", table_id=table)
        _GAME_OF_TABLE[table] = key
    return get(key)


def _remember_created(sender: type[Table], instance: Table, created: bool, **kwargs: Any) -> None:
    """A new table's game replaces whatever the cache held for its id (an id reused after
    a rolled-back transaction, as SQLite does)."""
    if created:
        _GAME_OF_TABLE[instance.pk] = instance.game


post_save.connect(_remember_created, sender=Table, dispatch_uid="tables.games.remember_created")

# The pushes' public frame (tables.selectors.get_public_state), read by the table's game:
# the house names no game, it asks the reader registered here.
register_public_frame_reader(lambda table_id: game_of(table_id).public_frame(table_id))


def _lobby_row(table: Table) -> Mapping[str, Any]:
    """The game side of ``table``'s lobby line (``Game.lobby_row``); nothing for a game
    without one, or a key no package registered (the house's fields stand alone)."""
    game = _GAMES.get(table.game)
    return game.lobby_row(table) if game is not None and game.lobby_row is not None else {}


# The lobby line's game side (tables.selectors' lobby rows) and the audit log's special-hand
# text (tables.config_text, WiderPoker's schedules), likewise asked of what is registered here.
register_lobby_row_reader(_lobby_row)
register_conditions_reader(
    lambda table: game_of(table).conditions.current(table),
    lambda: tuple(game.conditions.relation for game in _GAMES.values() if game.conditions.relation),
)
register_value_text("special_hand", schedule_text)


def register(game: Game) -> None:
    """Add a game to the house (a test's dummy game; the real ones are listed above).
    Raises ValueError when its key is taken or longer than ``Table.game`` holds (12)."""
    if game.key in _GAMES:
        raise ValueError(f"game {game.key!r} is already registered")
    if len(game.key) > Table._meta.get_field("game").max_length:  # type: ignore[operator]
        raise ValueError(f"game key {game.key!r} is longer than Table.game holds")
    _GAMES[game.key] = game


def unregister(key: str) -> None:
    """Take a game ``register`` added away again (forgetting its tables' cached keys)."""
    _GAMES.pop(key, None)
    for table_id in [table_id for table_id, game in _GAME_OF_TABLE.items() if game == key]:
        del _GAME_OF_TABLE[table_id]


@contextmanager
def registered(game: Game) -> Iterator[Game]:
    """``register(game)`` for the ``with`` block (a test's dummy game), then ``unregister``."""
    register(game)
    try:
        yield game
    finally:
        unregister(game.key)


def change_table_config(
    *, table_id: int, changes: dict[str, Any], staff_user_id: int, reason: str, now: datetime
) -> Table:
    """A staff change of table ``table_id``'s conditions through its game's ``ConditionsSpec``
    (``tables.services.configuration.change_table_config``: audit-logged, applied between
    hands). Raises TableNotFoundError, InvalidTableConfigError; nothing changes then."""
    return configuration.change_table_config(
        table_id=table_id,
        changes=changes,
        staff_user_id=staff_user_id,
        reason=reason,
        now=now,
        conditions=game_of(table_id).conditions,
    )


def run_command(*, table_id: int, user_id: int, name: str, fields: Mapping[str, Any], now: datetime) -> Any:
    """A player's action ``name`` at table ``table_id``, whatever its game: the command of the
    table's game (``Game.commands``) with its ``fields`` (JSON values) checked and parsed
    (``tables.commands.parse_action``), then run for ``user_id`` (``execute``); returns what
    the service returns. Raises TableNotFoundError, UnknownActionError (``unknown_type``),
    UnknownFieldError (``unknown_field``), InvalidFieldError and the service's DomainError
    (nothing changed)."""
    game = game_of(table_id)
    action = parse_action(name, fields, game=game, socket=False)
    return execute(action, table_id=table_id, user_id=user_id, now=now, game=game)
