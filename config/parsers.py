"""The REST API's JSON parser: the same strict decoding as the table socket.

DRF's own parser let a deeply nested body raise RecursionError (a 500 on every POST, since
the CSRF check reads the body; security audit F7). This one reads the body with
``config.infra.jsonwire.parse_json`` and turns every refusal into a 400 (413 when too large)
whose ``code`` is the refusal's stable code.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from config.infra.errors import DomainError
from config.infra.jsonwire import TooLargeError, parse_json


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"


class StrictJSONParser(JSONParser):
    """``application/json`` bodies of at most ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes and
    ``config.infra.jsonwire.MAX_JSON_DEPTH`` levels; NaN and Infinity refused."""

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 2_621_440
        raw = stream.read(limit + 1) if stream is not None else b""
        try:
            return parse_json(raw, max_bytes=limit)
        except TooLargeError as error:
            raise BodyTooLarge(str(error), code=error.code) from error
        except DomainError as error:
            raise ParseError(str(error), code=error.code) from error
