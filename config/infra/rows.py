"""Model rows read without the ORM's query compiler, for the few reads a hot loop repeats
(a Hold'em clock step: issue 23, item 6, clock CPU per step).

Building a queryset's SQL (``Query`` -> ``SQLCompiler.as_sql``) costs more CPU than
PostgreSQL spends answering a one-row primary-key read. ``RowReader`` writes a model's
column list once and turns each fetched row into an instance as the ORM does
(``Model.from_db`` after the database's and the fields' converters: JSON, datetimes on
SQLite), so the instances are the ORM's own: ``save(update_fields=...)`` and related
descriptors work on them. The caller writes the ``WHERE`` (and ``ORDER BY``) with ``%s``
placeholders: portable SQL only (PostgreSQL and SQLite).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Generic, TypeVar, cast

from django.db import connections
from django.db.models import Model

M = TypeVar("M", bound=Model)


class RowReader(Generic[M]):
    """Reads whole rows of ``model`` (every concrete field) into instances.

    ``joined``: ``(attribute, related model, its fields)`` of a foreign key to load with
    the row, as ``select_related`` would, reading only ``fields`` of the related row (its
    other fields deferred: read when asked for, one statement)."""

    def __init__(self, model: type[M], joined: tuple[str, type[Model], Sequence[str]] | None = None) -> None:
        self.model = model
        self.joined = joined
        meta = model._meta
        self.fields = list(meta.concrete_fields)
        self.table = meta.db_table
        self._converters: dict[str, list[Any]] = {}
        self._statements: dict[tuple[str, str], str] = {}
        self.related_fields: list[Any] = []
        self.pk_index = self.fields.index(meta.pk)
        self.names = [f.attname for f in self.fields]
        if joined is not None:
            attribute, related, names = joined
            self.foreign_key: Any = meta.get_field(attribute)
            self.related_fields = [related._meta.pk, *(related._meta.get_field(name) for name in names)]

    def _sql(self, connection: Any, where: str) -> str:
        quote = connection.ops.quote_name
        source = quote(self.table)
        if self.joined is not None:
            related_table = self.joined[1]._meta.db_table
            source += (
                f" INNER JOIN {quote(related_table)} ON ({quote(self.table)}.{quote(self.foreign_key.column)}"
                f" = {quote(related_table)}.{quote(self.related_fields[0].column)})"
            )
        return f"SELECT {', '.join(self.columns(connection))} FROM {source} WHERE {where}"

    def columns(self, connection: Any, alias: str | None = None, related_alias: str | None = None) -> list[str]:
        """The select list of a row: every concrete field's column, then the joined model's
        (``joined``), each qualified by ``alias`` (default: the table's name) and
        ``related_alias`` (default: the related table's name), for a statement that reads
        several models at once (``build`` turns each slice of its rows into an instance)."""
        quote = connection.ops.quote_name
        own = quote(alias or self.table)
        found = [f"{own}.{quote(f.column)}" for f in self.fields]
        if self.joined is not None:
            other = quote(related_alias or self.joined[1]._meta.db_table)
            found += [f"{other}.{quote(f.column)}" for f in self.related_fields]
        return found

    @property
    def width(self) -> int:
        """How many columns ``columns`` selects."""
        return len(self.fields) + len(self.related_fields)

    def build(self, values: Sequence[Any], *, using: str = "default") -> M | None:
        """The instance of one row's ``width`` values in ``columns``' order (as ``read``
        makes them: the fields' converters, ``Model.from_db``, the joined row set), or None
        when its primary key is NULL (an outer join found no row)."""
        connection = connections[using]
        values = list(values)
        count = len(self.fields)
        if values[self.pk_index] is None:
            return None
        for i, (found, column) in enumerate(self._converters_for(connection)):
            for converter in found:
                values[i] = converter(values[i], column, connection)
        instance = self.model.from_db(using, self.names, values[:count])
        if self.joined is not None:
            related = self.joined[1].from_db(using, [f.attname for f in self.related_fields], values[count:])
            setattr(instance, self.joined[0], related)
        return instance

    def _converters_for(self, connection: Any) -> list[Any]:
        converters = self._converters.get(connection.alias)
        if converters is None:
            converters = []
            for field in [*self.fields, *self.related_fields]:
                column = field.get_col(field.model._meta.db_table)
                found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
                converters.append((found, column))
            self._converters[connection.alias] = converters
        return converters

    def read(self, where: str, params: Sequence[Any], *, using: str = "default") -> list[M]:
        """The rows ``SELECT <every column> FROM <table> WHERE <where>`` (``where`` may end
        with ``ORDER BY``, ``LIMIT`` or ``FOR UPDATE``; ``%s`` placeholders for ``params``)
        as instances, in the order fetched. Raises what the database raises."""
        connection = connections[using]
        sql = self._statements.get((connection.alias, where))
        if sql is None:
            sql = self._statements[(connection.alias, where)] = self._sql(connection, where)
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            rows = cursor.fetchall()
        return [cast(M, self.build(row, using=using)) for row in rows]
