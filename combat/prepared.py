"""Reads a tap makes every time, compiled once: the same SQL, only its values change.

Building and compiling a queryset costs a tap more CPU than running it (the scene's lock
with who may post, ~3 ms of ORM work for a 0.05 ms query). A :class:`Prepared` read is
built by the ORM the first time a process meets its shape, with stand-in values (numbers
no row has); its SQL, its columns and how rows become objects are kept, and every later call
runs that SQL with its own values and builds the objects as the ORM's own iterator does
(``select_related`` rows, annotations, the database's converters).

The shape key must name everything the built query's text depends on (a user's flags when
the storyteller rule reads them, whether a row is locked): the values passed are the only
thing that varies. A stand-in that does not reach the SQL as a parameter, or a shape that
reads in a way kept here does not cover (prefetches, extra select columns), is refused the
first time it is built, not answered wrongly.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.db import DEFAULT_DB_ALIAS, connections, router
from django.db.models import Model, QuerySet, sql
from django.db.models.query import ModelIterable, get_related_populators
from django.db.models.signals import post_save, pre_save
from django.db.transaction import TransactionManagementError

M = TypeVar("M", bound=Model)

#: Two sets of stand-in values (the n-th is ``base + n``): ids no table here comes near, yet
#: within a 32-bit integer column's range (a value out of it makes the ORM compile a
#: lookup as "nothing", not as a parameter).
STAND_INS = (2_000_000_001, 2_100_000_002)  # odd, then even


@dataclass(frozen=True)
class _Shape:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, int], ...]  # (position in params, index of the value)
    alias: str
    locks: bool
    model: type[Model]
    init_list: tuple[str, ...]
    fields: tuple[int, int]  # the model's own columns: start, end
    populators: tuple[Any, ...]
    annotations: tuple[tuple[str, int], ...]
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]


class Prepared(Generic[M]):
    """A read of one shape, compiled once per process: ``build(shape, *values)`` returns the
    queryset; :meth:`rows` runs it for the given values (ints: ids)."""

    def __init__(self, build: Callable[..., QuerySet[M]], *, every_value: bool = True) -> None:
        self.build = build
        self.every_value = every_value  # False: a shape may leave a value out of its SQL
        self._shapes: dict[Hashable, _Shape] = {}

    def rows(self, shape: Hashable, *values: int) -> list[M]:
        """The rows the built queryset would return for ``values``."""
        known = self._shapes.get(shape)
        if known is None:
            known = self._shapes[shape] = self._compile(shape, len(values))
        connection = connections[known.alias]
        locks = known.locks and connection.features.has_select_for_update
        if locks and connection.get_autocommit():
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction."
            )
        params = list(known.params)
        for position, index in known.slots:
            params[position] = int(values[index])
        with connection.cursor() as cursor:
            cursor.execute(known.sql, params)
            found = cursor.fetchall()
        return [self._object(known, row, connection) for row in found]

    def first(self, shape: Hashable, *values: int) -> M | None:
        found = self.rows(shape, *values)
        return found[0] if found else None

    @staticmethod
    def _object(known: _Shape, row: Sequence[Any], connection: Any) -> M:
        if known.converters:
            row = list(row)
            for position, converters, expression in known.converters:
                value = row[position]
                for converter in converters:
                    value = converter(value, expression, connection)
                row[position] = value
        start, end = known.fields
        obj = known.model.from_db(known.alias, list(known.init_list), row[start:end])
        for populator in known.populators:
            populator.populate(row, obj)
        for name, position in known.annotations:
            setattr(obj, name, row[position])
        return obj  # type: ignore[return-value]

    def _compile(self, shape: Hashable, count: int) -> _Shape:
        return _twice(shape, count, self._built)

    def _built(self, shape: Hashable, stand_ins: list[int]) -> _Shape:
        queryset = self.build(shape, *stand_ins)
        if (
            queryset._iterable_class is not ModelIterable
            or queryset._prefetch_related_lookups
            or queryset._known_related_objects
        ):
            raise ValueError("a prepared read returns model rows, with no prefetch")
        alias = queryset.db or DEFAULT_DB_ALIAS
        compiler = queryset.query.get_compiler(using=alias)
        sql, params = compiler.as_sql()
        if compiler.has_extra_select:
            raise ValueError("a prepared read selects no extra columns")
        slots = _slots(shape, params, stand_ins, every=self.every_value)
        select, klass_info = compiler.select, compiler.klass_info
        start, last = klass_info["select_fields"][0], klass_info["select_fields"][-1]
        fields = [s[0] for s in select[: compiler.col_count]]
        converters = tuple(
            (position, tuple(found), expression)
            for position, (found, expression) in compiler.get_converters(fields).items()
        )
        return _Shape(
            sql=sql,
            params=tuple(params),
            slots=slots,
            alias=alias,
            locks=bool(queryset.query.select_for_update),
            model=klass_info["model"],
            init_list=tuple(f[0].target.attname for f in select[start : last + 1]),
            fields=(start, last + 1),
            populators=tuple(get_related_populators(klass_info, select, alias)),
            annotations=tuple(compiler.annotation_col_map.items()),
            converters=converters,
        )


class PreparedUpdate:
    """An UPDATE of one shape, compiled once per process: ``build(shape, *values)`` returns
    the queryset and what to set (``{field: value}``); :meth:`run` runs it for ``values``
    (ints) and answers the rows updated."""

    def __init__(self, build: Callable[..., tuple[QuerySet[Any], dict[str, Any]]]) -> None:
        self.build = build
        self._shapes: dict[Hashable, _Shape] = {}

    def run(self, shape: Hashable, *values: int) -> int:
        known = self._shapes.get(shape)
        if known is None:
            known = self._shapes[shape] = _twice(shape, len(values), self._built)
        params = list(known.params)
        for position, index in known.slots:
            params[position] = int(values[index])
        with connections[known.alias].cursor() as cursor:
            cursor.execute(known.sql, params)
            return cursor.rowcount

    def _built(self, shape: Hashable, stand_ins: list[int]) -> _Shape:
        queryset, changes = self.build(shape, *stand_ins)
        alias = queryset.db or DEFAULT_DB_ALIAS
        query = queryset.query.chain(sql.UpdateQuery)
        query.add_update_values(changes)
        compiler = query.get_compiler(using=alias)
        self_select = compiler.connection.features.update_can_self_select
        if query.related_updates or not self_select:
            raise ValueError("a prepared update is one statement")  # else it reads first
        text, params = compiler.as_sql()
        return _Shape(
            sql=text,
            params=tuple(params),
            slots=_slots(shape, params, stand_ins),
            alias=alias,
            locks=False,
            model=queryset.model,
            init_list=(),
            fields=(0, 0),
            populators=(),
            annotations=(),
            converters=(),
        )


def _slots(
    shape: Hashable, params: Sequence[Any], stand_ins: list[int], *, every: bool = True
) -> tuple[tuple[int, int], ...]:
    """Where each stand-in is in ``params``: every one somewhere (``every``), or the shape is
    refused."""
    slots = tuple(
        (position, stand_ins.index(value))
        for position, value in enumerate(params)
        if isinstance(value, int) and not isinstance(value, bool) and value in stand_ins
    )
    if every and {index for _, index in slots} != set(range(len(stand_ins))):
        raise ValueError(f"a value of the prepared query {shape!r} does not reach its SQL")
    return slots


def _twice(shape: Hashable, count: int, built: Callable[[Hashable, list[int]], _Shape]) -> _Shape:
    """Build and compile ``shape`` twice, with two sets of stand-in values: the same SQL and
    the same other parameters, the stand-ins in the same places, or it is refused (its text
    would depend on the values)."""
    first, second = (built(shape, [base + n for n in range(count)]) for base in STAND_INS)
    others = [
        [v for i, v in enumerate(one.params) if i not in dict(one.slots)] for one in (first, second)
    ]
    if (first.sql, first.slots) != (second.sql, second.slots) or others[0] != others[1]:
        raise ValueError(f"the prepared query {shape!r} changes with its values")
    return first


_ROW_UPDATES: dict[tuple[type[Model], str, tuple[str, ...]], tuple[str, tuple[Any, ...]]] = {}


def save_row(obj: Model, fields: Sequence[str] | None = None) -> None:
    """``obj.save(update_fields=fields)`` (every column when none are named) for a row that is
    there (read, and locked, by this transaction), its UPDATE's text built once per model and
    fields: each field's value is prepared as the ORM's own update prepares it. A model
    with a ``pre_save``/``post_save`` receiver, or a row not saved yet, is saved by ``save()``."""
    model = type(obj)
    if obj._state.adding or pre_save.has_listeners(model) or post_save.has_listeners(model):
        obj.save(update_fields=fields)  # a new row: the ORM inserts it
        return
    meta = model._meta
    connection = connections[obj._state.db or DEFAULT_DB_ALIAS]
    key = (model, connection.vendor, tuple(fields or ()))
    known = _ROW_UPDATES.get(key)
    if known is None:
        chosen = tuple(
            f
            for f in meta.concrete_fields
            if not f.primary_key and (fields is None or f.name in fields or f.attname in fields)
        )
        if fields is not None and len(chosen) != len(set(fields)):
            raise ValueError(f"not fields of {meta.label}: {fields}")
        if any(hasattr(f, "get_placeholder") for f in chosen):
            raise ValueError(f"{meta.label} has a field with a placeholder of its own")
        quote = connection.ops.quote_name
        sets = ", ".join(f"{quote(f.column)} = %s" for f in chosen)
        text = f"UPDATE {quote(meta.db_table)} SET {sets} WHERE {quote(meta.pk.column)} = %s"
        known = _ROW_UPDATES[key] = (text, chosen)
    text, chosen = known
    values = [f.get_db_prep_save(f.pre_save(obj, False), connection) for f in chosen]
    with connection.cursor() as cursor:
        cursor.execute(text, [*values, meta.pk.get_db_prep_value(obj.pk, connection)])
        if cursor.rowcount != 1:
            raise RuntimeError(f"{meta.label} {obj.pk} is not there to update")


_INSERTS: dict[tuple[type[Model], str, int], tuple[str, tuple[Any, ...], bool]] = {}


def insert_rows(objs: Sequence[Model]) -> None:
    """``bulk_create(objs)`` of one model (no signals, as it sends none), its INSERT's text
    built once per model and number of rows; each new row's id is set from ``RETURNING``.
    A database that cannot return them (an old SQLite) takes ``bulk_create``."""
    if not objs:
        return
    model = type(objs[0])
    meta = model._meta
    alias = router.db_for_write(model)
    connection = connections[alias]
    auto = meta.pk.db_returning and all(o.pk is None for o in objs)
    if not connection.features.can_return_rows_from_bulk_insert:
        model._default_manager.using(alias).bulk_create(objs)
        return
    key = (model, alias, len(objs))
    known = _INSERTS.get(key)
    if known is None:
        chosen = tuple(
            f for f in meta.concrete_fields if not f.generated and not (f.primary_key and auto)
        )
        if any(f.db_returning and not f.primary_key for f in meta.concrete_fields) or any(
            hasattr(f, "get_placeholder") for f in chosen
        ):
            raise ValueError(f"{meta.label} has a column the database fills or places")
        q = connection.ops.quote_name
        row = f"({', '.join(['%s'] * len(chosen))})"
        text = (
            f"INSERT INTO {q(meta.db_table)} ({', '.join(q(f.column) for f in chosen)})"
            f" VALUES {', '.join([row] * len(objs))}"
            + (f" RETURNING {q(meta.pk.column)}" if auto else "")
        )
        known = _INSERTS[key] = (text, chosen, auto)
    text, chosen, returns = known
    values = [f.get_db_prep_save(f.pre_save(o, True), connection) for o in objs for f in chosen]
    with connection.cursor() as cursor:
        cursor.execute(text, values)
        ids = [r[0] for r in cursor.fetchall()] if returns else []
    for n, obj in enumerate(objs):
        if returns:
            obj.pk = ids[n]
        obj._state.adding, obj._state.db = False, alias
