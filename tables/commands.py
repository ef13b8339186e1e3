"""The one way in for every player action, whichever way it arrives (socket frame, REST
body, HTML form): one parse (``parse_action``) and one execute (``execute``).

Each game lists its actions in its own package (``tables/widerpoker/commands.py``,
``tables/holdem/commands.py``: action name -> ``Command``, the fields the action takes, how
their values are parsed, and the service that runs it) and the game registry
(``tables.games``) hands them to the transports as ``Game.commands``. This module names no
game: a third game adds its own commands module; the transports do not change.

Security audit F7: a deeply nested JSON body (``"[" * 5000``) gave a 500 on every REST POST
and crashed the socket consumer, and REST accepted what the socket refused (``[1,0,1,0,1]``
as a hold, unknown fields). Both transports now read JSON with ``parse_json`` (the plumbing,
config/infra/jsonwire.py, with the JSON refusals) and check an
action's fields with ``parse_action``; a bad body or frame gets a 4xx or an error frame with
one of these stable codes:

| code            | when                                                         |
| --------------- | ------------------------------------------------------------ |
| `bad_json`      | not UTF-8 JSON                                               |
| `too_large`     | more bytes than the transport allows                         |
| `too_deep`      | nested deeper than ``MAX_JSON_DEPTH`` arrays/objects          |
| `bad_message`   | not a JSON object, or a socket frame without a string `type`  |
| `unknown_type`  | a socket frame of a type the table socket does not know      |
| `unknown_field` | a field the action does not take (the message names it)      |
| `invalid_hold`  | a hold that is not exactly five JSON booleans                 |
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Protocol

from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from config.infra import metrics
from config.infra.errors import DomainError
from config.infra.jsonwire import (
    FORM_ENVELOPE,
    BadMessageError,
    UnknownFieldError,
    parse_json,
)
from config.infra.observability import bind

FRAME_ENVELOPE: Final = frozenset({"type", "ref"})


class UnknownActionError(DomainError):
    """A socket frame's ``type`` names no action."""

    code = "unknown_type"
    summary = _("Unknown action.")


class InvalidFieldError(DomainError):
    """A field the action takes has a value it cannot take."""

    code = "invalid_field"
    summary = _("A field of the message has a value it cannot take.")


@dataclass(frozen=True, slots=True)
class Action:
    """A parsed player action: its name and its parsed parameters, the keyword arguments of
    its service besides ``table_id``, ``user_id`` and ``now`` (e.g. ``hold``: five booleans,
    column 0 first; ``free``: use a free item)."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def hold(self) -> tuple[bool, ...] | None:
        """The hold of a ``hold`` action (None for other actions)."""
        value = self.params.get("hold")
        return None if value is None else tuple(value)


@dataclass(frozen=True, slots=True)
class Command:
    """One action of one game.

    ``fields``: the fields it takes besides the transport's envelope; ``parse``: the parsed
    value of each field present (raises a DomainError with a stable code); ``run``: the
    service, called as ``run(table_id=..., user_id=..., now=..., **params)``; ``seats``:
    after it the player is seated, so the socket that sent it counts as his presence;
    ``required``: the fields it cannot do without, parsed even when absent (so their parser
    refuses the absence; the others get their service's default).
    """

    fields: frozenset[str]
    run: Callable[..., Any] | None
    parse: Mapping[str, Callable[[object], Any]] = field(default_factory=dict)
    seats: bool = False
    required: frozenset[str] = frozenset()


class GameCommands(Protocol):
    """What the one way in needs of a game (``tables.games.Game`` is one): its key (the
    ``TableGame`` value, a label of the metrics) and its actions by name."""

    @property
    def key(self) -> str: ...

    @property
    def commands(self) -> Mapping[str, Command]: ...


def find_command(name: str, *, game: GameCommands, socket: bool = False) -> Command:
    """The command ``name`` of ``game`` (with ``socket``, also the socket's own frames).
    Raises UnknownActionError."""
    command = game.commands.get(name) or (SOCKET_ONLY.get(name) if socket else None)
    if command is None:
        raise UnknownActionError(f"unknown frame type {name[:30]!r}")
    return command


def form_value(value: object) -> object:
    """A value of an HTML form (always text) as the JSON value it stands for: digits (at most
    15) -> int, ``"true"``/``"false"`` -> bool, anything else unchanged (the field's parser
    judges it). Only form bodies go through it: JSON bodies and socket frames carry their
    numbers and booleans as JSON (security audit 2026-11-26, L6).

    >>> form_value("300"), form_value("true"), form_value("3.5")
    (300, True, '3.5')
    """
    if isinstance(value, str):
        if value.isdigit() and value.isascii() and len(value) <= 15:
            return int(value)
        if value in ("true", "false"):
            return value == "true"
    return value


def parse_action(
    name: str,
    fields: Mapping[str, Any],
    *,
    envelope: Sequence[str] | frozenset[str] = (),
    game: GameCommands,
    socket: bool = True,
    form: bool = False,
) -> Action:
    """Check the fields of action ``name`` of ``game`` and return it parsed.

    ``fields``: the body or frame (a mapping); ``envelope``: fields the transport adds and
    the action ignores (``type`` and ``ref`` on the socket, the CSRF token of a form);
    ``socket``: the socket's own frames (``snapshot``, ``ping``) are known too; ``form``: the
    fields come from an HTML form (text), read through ``form_value``; otherwise they are
    JSON and an amount, a seat or a flag sent as a string is refused (``invalid_field``).
    Raises UnknownActionError, UnknownFieldError, InvalidHoldError or InvalidFieldError.
    """
    command = find_command(name, game=game, socket=socket)
    unknown = sorted(str(key)[:30] for key in fields if key not in command.fields and key not in envelope)
    if unknown:
        raise UnknownFieldError(f"{name} takes no field {unknown[0]!r}", fields=unknown[:5])
    read = form_value if form else _as_sent
    params = {
        key: parse(read(fields.get(key)))
        for key, parse in command.parse.items()
        if key in fields or key in command.required
    }
    return Action(name, params)


def _as_sent(value: object) -> object:
    return value


def execute(action: Action, *, table_id: int, user_id: int, now: datetime, game: GameCommands) -> Any:
    """Run a parsed action for ``user_id`` at ``table_id`` (sync code; the socket calls it
    through ``database_sync_to_async``) and return what its service returns.

    The service changes the state and, after commit, pushes the public state to the table and
    the player's private state to his sockets (tables/realtime/push.py): the caller answers
    with an ``ack`` (socket) or the new state (REST) and sends nothing else. Raises the
    service's DomainError (nothing changed) or UnknownActionError for a socket-only frame.
    Each run is counted, confirmed or refused with its code (``widerpoker_player_actions``;
    purchases are the actions ``buy_draw`` and ``redeal``).
    """
    command = find_command(action.name, game=game)
    assert command.run is not None
    with bind(table_id=table_id, user_id=user_id):
        try:
            result = command.run(table_id=table_id, user_id=user_id, now=now, **action.params)
        except DomainError as error:
            metrics.PLAYER_ACTIONS.labels(game.key, action.name, "refused", error.code).inc()
            raise
    metrics.PLAYER_ACTIONS.labels(game.key, action.name, "confirmed", "").inc()
    return result


SOCKET_ONLY: Final = {"snapshot": Command(frozenset(), None), "ping": Command(frozenset(), None)}
"""Socket frames that run no service: resend the state, answer a heartbeat."""


def read_frame(text: str | None, *, max_bytes: int) -> dict[str, Any]:
    """A socket text frame decoded: an object with a string ``type``.

    Raises BadMessageError (a binary frame, not an object, no string ``type``) and
    everything ``parse_json`` raises.
    """
    if text is None:
        raise BadMessageError("send JSON text frames")
    content = parse_json(text, max_bytes=max_bytes)
    if not isinstance(content, dict) or not isinstance(content.get("type"), str):
        raise BadMessageError('a frame is an object with a "type"')
    return content


def frame_ref(content: Mapping[str, Any]) -> str | int | None:
    """The frame's ``ref`` to echo in its answer: a string of at most 64 characters or an
    integer; anything else is ignored."""
    ref = content.get("ref")
    if isinstance(ref, bool) or not isinstance(ref, str | int) or (isinstance(ref, str) and len(ref) > 64):
        return None
    return ref


def parse_body(name: str, data: Any, *, game: GameCommands) -> Action:
    """A REST body (already decoded by the parser: a dict, a form QueryDict, or a list) ->
    the action; a form's text values are read through ``form_value``, a JSON body's are
    not. An empty body is an empty object. Raises BadMessageError when the body is not an
    object, and everything ``parse_action`` raises."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise BadMessageError("the body is a JSON object")
    form = isinstance(data, QueryDict)  # form-encoded or multipart: text only
    return parse_action(name, data, envelope=FORM_ENVELOPE, game=game, socket=False, form=form)
