"""Model fields of our own: ``PlainJSONField``, a large JSON value written and read whole."""

from __future__ import annotations

import json
from typing import Any

from django.db import models


class PlainJSONField(models.JSONField):
    """A ``JSONField`` kept in PostgreSQL's ``json`` type, not ``jsonb``: the text as sent,
    checked as JSON but not parsed into ``jsonb``'s binary form, and given back as stored.
    For a large value written and read whole, never queried inside: a freeze's 6 MB of
    frozen players went in 135-220 ms as ``jsonb`` and 50-60 ms as ``json`` (both LZ4), and
    came back in 60-75 against 15-20 ms (issue 23, docs/benchmarks.md). Key order and
    duplicate keys are kept as written; the ``jsonb`` lookups (``__contains``, ``__has_key``)
    do not apply. Other databases: a plain ``JSONField``."""

    def db_type(self, connection: Any) -> str | None:
        return "json" if connection.vendor == "postgresql" else super().db_type(connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        from psycopg.types.json import Json

        if not prepared:
            value = self.get_prep_value(value)
        encoder = self.encoder
        return Json(value, dumps=lambda obj: json.dumps(obj, cls=encoder))  # sent as json, not jsonb

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        if value is not None and not isinstance(value, str):
            return value  # psycopg decodes the json type itself (Django registers jsonb only)
        return super().from_db_value(value, expression, connection)
