"""JSON on the wire, as every door reads it (socket frames, REST bodies, HTML forms): at most
so many bytes, at most ``MAX_JSON_DEPTH`` levels, no NaN or Infinity, and an object where an
object is expected; each refusal a ``DomainError`` with a stable code (security audit F7;
docs/protocol.md). Plumbing: the apps' doors (tables/commands.py, wallet/api.py,
config/parsers.py) read their bodies with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from django.utils.translation import gettext_lazy as _

from config.infra.errors import DomainError

MAX_JSON_DEPTH: Final = 8
"""Deepest nesting of arrays and objects any body or frame needs (a hold is depth 2)."""


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


class UnknownFieldError(DomainError):
    """The body or frame carries a field its action does not take."""

    code = "unknown_field"
    summary = _("The message carries a field this action does not take.")


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
