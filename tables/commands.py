"""The one way in for every player action, whichever way it arrives (socket frame, REST
body, HTML form): one parse (``parse_action``) and one execute (``execute``).

Each game registers its actions in ``COMMANDS`` (game -> action name -> ``Command``): the
fields the action takes, how their values are parsed, and the service that runs it. A
third game adds its own entry here; the transports do not change.

Security audit F7: a deeply nested JSON body (``"[" * 5000``) gave a 500 on every REST POST
and crashed the socket consumer, and REST accepted what the socket refused (``[1,0,1,0,1]``
as a hold, unknown fields). Both transports now read JSON with ``parse_json`` and check an
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

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from django.http import QueryDict
from django.utils.translation import gettext_lazy as _

from config import metrics
from config.observability import bind
from tables.errors import InvalidHoldError, TableNotFoundError
from wallet.errors import DomainError

WIDERPOKER: Final = "widerpoker"
"""The game key of WiderPoker tables (``COMMANDS``)."""

HOLDEM: Final = "holdem"
"""The game key of Texas Hold'em tables (``COMMANDS``; docs/protocol.md, "Texas Hold'em")."""

MAX_JSON_DEPTH: Final = 8
"""Deepest nesting of arrays and objects any body or frame needs (a hold is depth 2)."""

FRAME_ENVELOPE: Final = frozenset({"type", "ref"})
# A browser's form post carries its CSRF token as a field; it is not an action field.
FORM_ENVELOPE: Final = frozenset({"csrfmiddlewaretoken"})


class BadJsonError(DomainError):
    """The body is not UTF-8 JSON."""

    code = "bad_json"
    summary = _("The message is not valid JSON.")


class TooLargeError(DomainError):
    """The body or frame is larger than the transport allows."""

    code = "too_large"
    summary = _("The message is too large.")
    http_status = 413


class TooDeepError(DomainError):
    """The JSON nests arrays and objects deeper than ``MAX_JSON_DEPTH``."""

    code = "too_deep"
    summary = _("The message is nested too deeply.")


class BadMessageError(DomainError):
    """The JSON is not an object, or a frame has no string ``type``."""

    code = "bad_message"
    summary = _("The message is not understood.")


class UnknownActionError(DomainError):
    """A socket frame's ``type`` names no action."""

    code = "unknown_type"
    summary = _("Unknown action.")


class UnknownFieldError(DomainError):
    """The body or frame carries a field its action does not take."""

    code = "unknown_field"
    summary = _("The message carries a field this action does not take.")


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
    after it the player is seated, so the socket that sent it counts as his presence.
    """

    fields: frozenset[str]
    run: Callable[..., Any] | None
    parse: Mapping[str, Callable[[object], Any]] = field(default_factory=dict)
    seats: bool = False


def json_depth(value: Any) -> int:
    """Nesting depth of arrays and objects (a scalar is 0, ``[]`` is 1), computed without
    recursion so a hostile value cannot exhaust the stack.

    >>> json_depth({"hold": [True, False]})
    2
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            deepest = max(deepest, depth + 1)
            stack.extend((child, depth + 1) for child in item)
    return deepest


def parse_json(raw: str | bytes, *, max_bytes: int) -> Any:
    """Decode one JSON document of at most ``max_bytes`` bytes and ``MAX_JSON_DEPTH`` levels.

    Raises TooLargeError, BadJsonError (not UTF-8, not JSON, NaN or Infinity) or TooDeepError.
    """
    size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise TooLargeError(f"at most {max_bytes} bytes", max_bytes=max_bytes)
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError as error:
        raise TooDeepError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from error
    except ValueError as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise BadJsonError("not valid JSON") from error
    if json_depth(value) > MAX_JSON_DEPTH:
        raise TooDeepError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_hold(value: object) -> tuple[bool, ...]:
    """Five JSON booleans, column 0 first (rules B.2). ``1``, ``"true"`` and ``null`` are not
    booleans. Raises InvalidHoldError."""
    if not isinstance(value, list) or len(value) != 5 or not all(isinstance(item, bool) for item in value):
        raise InvalidHoldError("a hold is five booleans, one per column", hold=repr(value)[:60])
    return tuple(value)


def find_command(name: str, *, game: str = WIDERPOKER, socket: bool = False) -> Command:
    """The command ``name`` of ``game`` (with ``socket``, also the socket's own frames).
    Raises UnknownActionError."""
    command = COMMANDS.get(game, {}).get(name) or (SOCKET_ONLY.get(name) if socket else None)
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
    game: str = WIDERPOKER,
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
        if key in fields or key in REQUIRED_FIELDS
    }
    return Action(name, params)


def _as_sent(value: object) -> object:
    return value


def game_of_table(table_id: int) -> str:
    """The game of table ``table_id`` (a key of ``COMMANDS``). Raises TableNotFoundError."""
    from tables.models import Table

    game = Table.objects.filter(pk=table_id).values_list("game", flat=True).first()
    if game is None:
        raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
    return str(game)


def execute(action: Action, *, table_id: int, user_id: int, now: datetime, game: str = WIDERPOKER) -> Any:
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
            metrics.PLAYER_ACTIONS.labels(game, action.name, "refused", error.code).inc()
            raise
    metrics.PLAYER_ACTIONS.labels(game, action.name, "confirmed", "").inc()
    return result


def parse_free(value: object) -> bool:
    """Whether to use a free item of the player's power-ups: a JSON boolean (an HTML form's
    ``"true"``/``"false"`` arrive as one through ``form_value``). Raises InvalidFieldError."""
    if isinstance(value, bool):
        return value
    raise InvalidFieldError('"free" is true or false', field="free")


def _service(name: str) -> Callable[..., Any]:
    """A WiderPoker service (tables/widerpoker/services/play.py, seating.py), looked up when
    the action runs (tests may patch it)."""

    def run(**kwargs: Any) -> Any:
        from tables.widerpoker.services import play, seating

        return getattr(play if hasattr(play, name) else seating, name)(**kwargs)

    run.__name__ = name
    return run


def parse_chips(value: object) -> int:
    """An amount of chips in minor units: a positive JSON integer below 10^15 (not a
    boolean, not a string: ``"300"`` is refused over JSON and the socket; an HTML form's
    digits arrive as an integer through ``form_value``). Raises InvalidFieldError."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 < value < 10**15:
        raise InvalidFieldError("an amount is a positive whole number of minor units", amount=repr(value)[:30])
    return value


def parse_seat(value: object) -> int:
    """A Hold'em seat number 0..9, a JSON integer (a form's digits arrive as one through
    ``form_value``; the table's own range is the service's check). Raises
    InvalidFieldError."""
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 9:
        raise InvalidFieldError("a seat is a number 0 to 9", field="seat")
    return value


def parse_blind(value: object) -> str:
    """How a new Hold'em player enters: ``"wait"`` for the big blind or ``"post"`` one now.
    Raises InvalidFieldError."""
    if value not in ("wait", "post"):
        raise InvalidFieldError('blind is "wait" or "post"', field="blind")
    return str(value)


def _holdem(name: str) -> Callable[..., Any]:
    """A Hold'em player service (tables/holdem/services/player.py), looked up when run."""

    def run(**kwargs: Any) -> Any:
        from tables.holdem.services import player

        return getattr(player, name)(**kwargs)

    run.__name__ = name
    return run


def _holdem_bet(kind: str) -> Callable[..., Any]:
    """The Hold'em betting action ``kind``: ``act_in_hand(kind=kind, amount=...)``."""

    def run(*, table_id: int, user_id: int, now: datetime, amount: int | None = None) -> Any:
        from tables.holdem.services import player

        return player.act_in_hand(table_id=table_id, user_id=user_id, kind=kind, amount=amount, now=now)

    run.__name__ = f"holdem_{kind}"
    return run


COMMANDS: dict[str, dict[str, Command]] = {
    WIDERPOKER: {
        "hold": Command(frozenset({"hold"}), _service("set_hold"), {"hold": parse_hold}),
        "buy_draw": Command(frozenset({"free"}), _service("buy_draw"), {"free": parse_free}),
        "redeal": Command(frozenset({"free"}), _service("buy_redeal"), {"free": parse_free}),
        "join": Command(frozenset(), _service("join_table"), seats=True),
        "leave": Command(frozenset(), _service("leave_table")),
        "sit_out": Command(frozenset(), _service("sit_out")),
        "sit_in": Command(frozenset(), _service("sit_in"), seats=True),
    },
    HOLDEM: {
        "join": Command(
            frozenset({"seat", "buy_in_minor", "blind"}),
            _holdem("join_holdem"),
            {"seat": parse_seat, "buy_in_minor": parse_chips, "blind": parse_blind},
            seats=True,
        ),
        "add_chips": Command(frozenset({"amount_minor"}), _holdem("add_chips"), {"amount_minor": parse_chips}),
        "leave": Command(frozenset(), _holdem("leave_holdem_table")),
        "sit_out": Command(frozenset(), _holdem("sit_out_holdem")),
        "sit_in": Command(frozenset(), _holdem("sit_in_holdem"), seats=True),
        "fold": Command(frozenset(), _holdem_bet("fold")),
        "check": Command(frozenset(), _holdem_bet("check")),
        "call": Command(frozenset(), _holdem_bet("call")),
        "all_in": Command(frozenset(), _holdem_bet("all_in")),
        "show": Command(frozenset(), _holdem_bet("show")),
        "muck": Command(frozenset(), _holdem_bet("muck")),
        "bet": Command(frozenset({"amount"}), _holdem_bet("bet"), {"amount": parse_chips}),
        "raise": Command(frozenset({"amount"}), _holdem_bet("raise"), {"amount": parse_chips}),
    },
}
"""Every game's actions. ``snapshot`` and ``ping`` are the socket's own (``SOCKET_ONLY``)."""

SOCKET_ONLY: Final = {"snapshot": Command(frozenset(), None), "ping": Command(frozenset(), None)}
"""Socket frames that run no service: resend the state, answer a heartbeat."""

REQUIRED_FIELDS: Final = frozenset({"hold", "seat", "buy_in_minor", "amount_minor"})
"""Fields an action cannot do without (the others have their service's default)."""


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


def parse_body(name: str, data: Any, *, game: str = WIDERPOKER) -> Action:
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


def parse_empty_body(data: Any) -> None:
    """A REST body for an endpoint that takes no field: empty, or an empty object. Raises
    BadMessageError or UnknownFieldError."""
    if data is None:
        return
    if not isinstance(data, Mapping):
        raise BadMessageError("the body is a JSON object")
    unknown = sorted(str(key)[:30] for key in data if key not in FORM_ENVELOPE)
    if unknown:
        raise UnknownFieldError(f"this endpoint takes no field {unknown[0]!r}", fields=unknown[:5])
