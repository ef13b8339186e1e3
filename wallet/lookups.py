"""``field__any_of=[...]``: membership in a long list of integers as one parameter.

``field__in`` with 100,000 ids sends 100,000 placeholders (psycopg spent seconds converting
such a query); ``any_of`` sends one array: ``field = ANY(%s::bigint[])`` on PostgreSQL and
``field IN (SELECT value FROM json_each(%s))`` on SQLite. Registered on every field by
``WalletConfig.ready`` (the lowest app, so every app may use it)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Lookup
from django.db.models.sql.compiler import SQLCompiler


class AnyOf(Lookup):  # type: ignore[type-arg]  # django-stubs' Lookup is generic in the value type
    lookup_name = "any_of"
    prepare_rhs = False

    def get_db_prep_lookup(self, value: Any, connection: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
        return "%s", [value]

    def as_sql(self, compiler: SQLCompiler, connection: BaseDatabaseWrapper) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        values: Iterable[Any] = self.rhs.tolist() if hasattr(self.rhs, "tolist") else self.rhs
        ints = [int(value) for value in values]
        if connection.vendor == "postgresql":
            return f"{lhs} = ANY(%s::bigint[])", [*lhs_params, "{" + ",".join(map(str, ints)) + "}"]
        return f"{lhs} IN (SELECT value FROM json_each(%s))", [*lhs_params, json.dumps(ints)]
