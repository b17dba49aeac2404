"""Queries whose SQL is built once per process: the ORM compiles a queryset anew every time it
runs, and for a read made on every tap (a scene's row with its features' flags, the scene's
lock with who may post) that costs more CPU than the query itself.

:class:`Prepared` wraps ``build(*values, **options)``, a function returning a queryset. The
first time a process meets a *shape* (the options, and for each value whether it is an int or
a list of ints and how long), it builds the queryset twice with stand-in values and keeps the
SQL, where each value goes among its parameters, and how a row becomes objects (the model's
row, its ``select_related`` rows, its annotations, the database's converters: as
``ModelIterable`` does). Every later call runs that SQL with its own values. The SQL is the
ORM's own: only the parameters differ.

Options are the shape's key (a user's flags, whether a row is locked): they must name all the
built query's text depends on besides the values. A shape is refused the first time it is
built, never answered wrongly, when

- the two builds differ anywhere but where the values go (the text depends on the values, on
  the time, on a setting...); the two sets of stand-ins run in opposite directions, so a value
  the query does arithmetic with does not land on another's place in both;
- a value does not reach the SQL as a parameter (an ignored argument, a lookup the ORM
  compiled to "nothing" or "everything");
- it reads what is not kept here (prefetches, extra select columns, values()).

The first set of stand-ins is near 2**31, the second near 30,000: both fit a 32-bit column
(a user's id), so PostgreSQL's range check does not compile such a lookup away, while a lookup
on a small integer column compiles differently for the two and is refused.

Plans are kept per process (not per connection): the SQL depends on the database's vendor
only, every thread and every new connection of a process shares them, and no plan holds a
connection (converters are given the one running). A plan is checked against the vendor of
the connection that runs it and rebuilt if they differ.

A read with ``select_for_update`` is refused outside a transaction, as the ORM refuses it.

On PostgreSQL the text built here also runs as a server-side prepared statement
(:func:`statement_cursor`): Django binds parameters on the client, so every statement reaches
the server as new text to parse and plan; these statements' parameters are bound on the
server instead, and each is prepared once per connection (``DATABASE_PREPARE``; off behind a
transaction-pooling proxy such as PgBouncer's, which cannot keep a connection's statements).

:class:`PreparedUpdate` does the same for an UPDATE; :func:`save_row` and :func:`insert_rows`
write one row's UPDATE or a bulk INSERT with text built once per model. None of them send
model signals: the models registered by :func:`keep_signals` (sheets, whose save receivers
bump their versions) are saved by ``save()`` or refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from types import SimpleNamespace
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, connections, router
from django.db.backends.utils import CursorWrapper
from django.db.models import Model, Prefetch, QuerySet, sql
from django.db.models.base import ModelState
from django.db.models.constants import LOOKUP_SEP
from django.db.models.expressions import OrderBy
from django.db.models.query import ModelIterable, ValuesListIterable, get_related_populators
from django.db.models.signals import post_save, pre_save
from django.db.models.sql.compiler import PositionRef
from django.db.transaction import TransactionManagementError

M = TypeVar("M", bound=Model)
Value = int | Sequence[int]

# A list value longer than this is not prepared (a plan per length: their number bounded).
MAX_ITEMS = 64
# The n-th stand-in of each build: 32-bit, positive, running in opposite directions.
STAND_INS: tuple[Callable[[int], int], Callable[[int], int]] = (
    lambda n: 2_000_000_001 + n,
    lambda n: 30_000 - n,
)

# Models whose every write must send its model signals (see :func:`keep_signals`).
_KEEP_SIGNALS: set[type[Model]] = set()


def keep_signals(*models: type[Model]) -> None:
    """Writes of these models must send their signals (their receivers keep caches right):
    :func:`save_row` saves them by ``save()``, :func:`insert_rows` and :class:`PreparedUpdate`
    refuse them."""
    _KEEP_SIGNALS.update(models)


def _refuse_unsignalled(model: type[Model]) -> None:
    if model in _KEEP_SIGNALS:
        raise ValueError(f"{model._meta.label} is written with its signals (keep_signals)")


def statement_cursor(connection: Any) -> CursorWrapper:
    """A cursor of ``connection`` for a statement whose text is built once (this module's,
    the session's read, the key's claim): on PostgreSQL, with ``DATABASE_PREPARE`` on, its
    parameters are bound on the server and the statement is prepared there the first time a
    connection runs it, so PostgreSQL parses and plans it once per connection instead of on
    every run. Elsewhere, the connection's own cursor. Either way Django's wrapper (its
    execute wrappers, the query log of tests and DEBUG) sees every statement."""
    if connection.vendor != "postgresql" or not getattr(settings, "DATABASE_PREPARE", False):
        return connection.cursor()
    connection.ensure_connection()
    logged = connection.queries_logged
    raw = getattr(connection, "_statement_cursor", None)
    # One psycopg cursor a connection, taken again by the next statement once the last one
    # closed it: a new cursor's adapters look every parameter's type up afresh (a step's
    # write has forty), a kept one's remember them. One still open (a statement under way:
    # a wrapper that reads while another runs) is not shared: that one gets a new cursor.
    if (
        raw is None
        or raw.in_use
        or raw.logged != logged
        or raw.connection is not connection.connection
        or raw.connection.closed
    ):
        with connection.wrap_database_errors:
            new = _preparing_class(logged)(connection.connection)
        if raw is None or not raw.in_use or raw.connection is not connection.connection:
            connection._statement_cursor = new  # the connection's from now on
        raw = new
    wrapped = connection._prepare_cursor(raw)
    raw.in_use = True  # until the statement's ``with`` closes it
    return wrapped


@cache
def _preparing_class(logged: bool) -> type:
    """psycopg's server-binding cursor (Django's, with ``callproc``) that prepares every
    statement it executes (psycopg keeps a connection's prepared statements, at most
    ``prepared_max``, and deallocates the least used beyond that). ``logged``: it leaves the
    statement, its values written in as a client-bound one's, where Django's query log reads
    it (psycopg keeps no text for a prepared statement)."""
    from django.db.backends.postgresql.base import ServerBindingCursor
    from psycopg import ClientCursor
    from psycopg.errors import FeatureNotSupported
    from psycopg.pq import TransactionStatus

    class PreparingCursor(ServerBindingCursor):  # type: ignore[misc,valid-type]
        in_use = False  # handed out by statement_cursor and not closed since

        def close(self) -> None:
            """Put back for the connection's next statement (:func:`statement_cursor`); its
            results go with the next statement's, its connection's closing closes it."""
            self.in_use = False

        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            try:
                done = super().execute(query, params, prepare=True, **kwargs)
            except FeatureNotSupported:
                # "cached plan must not change result type" (its text is in the server's
                # language): a migration (another connection's ALTER) changed a column this
                # statement returns. Inside a transaction its rollback makes psycopg forget
                # every prepared statement; outside one nothing would, and the statement
                # would fail on this connection until it closes. DEALLOCATE ALL makes
                # psycopg forget them; any other such refusal is refused again.
                if self.connection.info.transaction_status != TransactionStatus.IDLE:
                    raise
                super().execute("DEALLOCATE ALL")
                done = super().execute(query, params, prepare=True, **kwargs)
            if logged:
                text = ClientCursor(self.connection).mogrify(query, params)
                self._query = SimpleNamespace(query=text.encode(), params=params)
            return done

    PreparingCursor.logged = logged  # whether its statements are left for the query log
    kept = _kept_query_class()
    if kept is not None:
        PreparingCursor._query_cls = kept
    return PreparingCursor


# How many statements' conversions :func:`_kept_query_class` keeps (this module's texts are
# built once per process and shape: a bounded set, a few dozen in a night's play).
KEPT_CONVERSIONS = 512


@cache
def _kept_query_class() -> type | None:
    """psycopg's query (its ``%s`` turned into ``$1``…) with every text's conversion kept:
    psycopg keeps only those of texts up to 4 kB with at most 50 parameters, and splits any
    other anew on every run (a step's write, with the challenge's every column, and the
    pushes' joined reads are such texts: a regular expression over 1.5 to 6 kB, each time).
    ``None`` (psycopg's own, unchanged) should psycopg's internals not be as expected."""
    try:
        from psycopg._queries import PostgresQuery, _query2pg_nocache
        from psycopg.sql import Composable
    except ImportError:  # pragma: no cover - another psycopg: its own conversion
        return None
    if not all(hasattr(PostgresQuery, name) for name in ("convert", "dump", "_ensure_bytes")):
        return None  # pragma: no cover
    converted = lru_cache(maxsize=KEPT_CONVERSIONS)(_query2pg_nocache)

    class KeptQuery(PostgresQuery):  # type: ignore[misc,valid-type]
        __slots__ = ()

        def convert(self, query: Any, vars: Any) -> None:
            if vars is None or not isinstance(query, (str, bytes, Composable)):
                super().convert(query, vars)  # no parameters, or a template: psycopg's
                return
            query = self._ensure_bytes(query)
            # a conversion is shared as psycopg shares its cached ones (never changed)
            self.query, self._want_formats, self._order, self._parts = converted(
                query, self._tx.encoding
            )
            self.dump(vars)

    KeptQuery.conversions = converted  # type: ignore[attr-defined]  # its cache, for tests
    return KeptQuery


@dataclass(frozen=True)
class _Plan:
    sql: str
    params: tuple[Any, ...]
    alias: str
    vendor: str
    model: type[Model]
    # (position in params, index of the flat value, its type there: int, psycopg's Int8...)
    slots: tuple[tuple[int, int, type], ...] = ()
    # A read's own: whether it locks its rows, how a row becomes objects (an update's: none)
    locks: bool = False
    init_list: list[str] = dataclasses.field(default_factory=list)  # from_db only reads it
    fields: tuple[int, int] = (0, 0)  # the model's own columns: start, end
    populators: tuple[Any, ...] = ()
    annotations: tuple[tuple[str, int], ...] = ()
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...] = ()
    width: int = 0  # the columns of its rows (a read's)
    # A values read's ORDER BY as (column's position, its direction's SQL) each, or None when
    # a term is not one of its columns (read_with numbers its rows by it).
    order: tuple[tuple[int, str], ...] | None = None


def _compiled(compiler: Any, alias: str, model: type[Model], what: str) -> _Plan:
    """The compiler's SQL and parameters as a plan (its slots found by the caller); refused
    when a stand-in compiles the query to nothing (one out of a column's range)."""
    try:
        text, params = compiler.as_sql()
    except EmptyResultSet as empty:
        raise ValueError(f"a prepared {what} must have SQL for any values") from empty
    return _Plan(
        sql=text,
        params=tuple(params),
        alias=alias,
        vendor=compiler.connection.vendor,
        model=model,
    )


# A value no 64-bit column holds (a 30-digit id typed into a URL) has no plan: the ORM answers
# it, compiling such a lookup to "no row" where the database would refuse the parameter.
BIGINT = (-(2**63), 2**63 - 1)


def _shape(values: tuple[Value, ...]) -> tuple[tuple[int | None, ...], list[int]] | None:
    """Each value's place in the shape (``None``: an int; a list: its length), and the values
    flat; ``None`` for an empty list, one longer than ``MAX_ITEMS`` or a value out of
    ``BIGINT`` (no plan)."""
    shape: list[int | None] = []
    flat: list[int] = []
    for value in values:
        if isinstance(value, int):
            shape.append(None)
            flat.append(value)
        else:
            if isinstance(value, (str, bytes)):  # an id from a form: int() it first
                raise TypeError(f"a prepared query's values are ints or lists of them: {value!r}")
            size = len(value)
            if not size or size > MAX_ITEMS:
                return None
            shape.append(size)
            flat.extend(value)
    if any(not BIGINT[0] <= value <= BIGINT[1] for value in flat):
        return None
    return tuple(shape), flat


def _has_empty(values: tuple[Value, ...]) -> bool:
    return any(not isinstance(value, int) and not value for value in values)


def _stand_ins(shape: tuple[int | None, ...], nth: Callable[[int], int]) -> list[Value]:
    out: list[Value] = []
    n = 0
    for size in shape:
        if size is None:
            out.append(nth(n))
            n += 1
        else:
            out.append([nth(n + i) for i in range(size)])
            n += size
    return out


class _Shapes:
    """Plans by key, built twice with stand-ins the first time a process meets a shape."""

    def __init__(self, build: Callable[..., Any]) -> None:
        self.build = build
        self._plans: dict[Hashable, _Plan] = {}

    def plan(
        self, values: tuple[Value, ...], options: dict[str, Any]
    ) -> tuple[_Plan, Any, list[int]] | None:
        """The plan of these values' shape, the connection to run it on and the values flat;
        ``None`` for an empty or a long list (the caller answers without a plan)."""
        found = _shape(values)
        if found is None:
            return None
        shape, flat = found
        key = (shape, *options.items()) if options else shape
        plan = self._plans.get(key)
        if plan is not None:
            connection = connections[plan.alias]
            if connection.vendor == plan.vendor:
                return plan, connection, flat
        plan = self._plans[key] = self._twice(shape, len(flat), options)
        return plan, connections[plan.alias], flat

    def _twice(self, shape: tuple[int | None, ...], count: int, options: dict[str, Any]) -> _Plan:
        """Build and compile the shape twice: the same SQL, the same other parameters, each
        value in the same places, every value somewhere; or it is refused."""
        first, second = (self._built(_stand_ins(shape, nth), options) for nth in STAND_INS)
        flats = [[nth(n) for n in range(count)] for nth in STAND_INS]
        slots = [
            _slots(plan.params, flat) for plan, flat in zip((first, second), flats, strict=True)
        ]
        others = [
            [v for i, v in enumerate(plan.params) if i not in {s[0] for s in found}]
            for plan, found in zip((first, second), slots, strict=True)
        ]
        if first.sql != second.sql or slots[0] != slots[1] or others[0] != others[1]:
            raise ValueError(f"a prepared query's SQL changes with its values ({options})")
        if {s[1] for s in slots[0]} != set(range(count)):
            raise ValueError(f"a value of a prepared query does not reach its SQL ({options})")
        return replace(first, slots=slots[0])

    def _built(self, stand_ins: list[Value], options: dict[str, Any]) -> _Plan:
        raise NotImplementedError


def _slots(params: Sequence[Any], flat: list[int]) -> tuple[tuple[int, int, type], ...]:
    """Where each stand-in is in ``params`` (a value may be in more than one place), and the
    type the ORM gave it there."""
    index = {value: n for n, value in enumerate(flat)}
    return tuple(
        (position, index[value], type(value))
        for position, value in enumerate(params)
        if isinstance(value, int) and not isinstance(value, bool) and value in index
    )


def _filled(plan: _Plan, flat: list[int]) -> list[Any]:
    params = list(plan.params)
    for position, index, kind in plan.slots:
        params[position] = kind(flat[index])
    return params


class Prepared(_Shapes, Generic[M]):
    """``build(*values, **options)``, a queryset of model rows, compiled once per process and
    shape: :meth:`run` gives the rows it would read for these values (ints or lists of ints;
    options: the shape's key, hashable). ``model``: the rows' model, checked. ``share``: a read
    built with ``select_for_update()`` takes the shared row lock (PostgreSQL's ``FOR SHARE``,
    which Django does not spell): many transactions hold the row at once, and one that
    updates it waits for them all, as they wait for it."""

    def __init__(
        self,
        build: Callable[..., QuerySet[M]],
        *,
        model: type[M] | None = None,
        share: bool = False,
    ):
        super().__init__(build)
        self.model = model
        self.share = share

    def run(self, *values: Value, **options: Any) -> list[M]:
        """The rows the built queryset would read for ``values``."""
        found = self.plan(values, options)
        if found is None:
            if _has_empty(values):
                return []  # ``IN ()`` reads nothing (the ORM would not ask)
            return list(self.build(*values, **options))  # a rare long list: no plan of its own
        plan, connection, flat = found
        locks = plan.locks and connection.features.has_select_for_update
        if locks and connection.get_autocommit():
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction."
            )
        with statement_cursor(connection) as cursor:
            cursor.execute(plan.sql, _filled(plan, flat))
            rows = cursor.fetchall()
        return [_instance(plan, row, connection) for row in rows]

    def first(self, *values: Value, **options: Any) -> M | None:
        found = self.run(*values, **options)
        return found[0] if found else None

    def _built(self, stand_ins: list[Value], options: dict[str, Any]) -> _Plan:
        queryset = self.build(*stand_ins, **options)
        if self.model is not None and queryset.model is not self.model:
            raise ValueError(f"a prepared query of {self.model.__name__} reads {queryset.model}")
        if (
            queryset._iterable_class is not ModelIterable
            or queryset._prefetch_related_lookups
            or queryset._known_related_objects
        ):
            raise ValueError("a prepared read returns model rows, with no prefetch")
        alias = queryset.db or DEFAULT_DB_ALIAS
        compiler = queryset.query.get_compiler(using=alias)
        plan = _compiled(compiler, alias, queryset.model, "query")
        if self.share and compiler.connection.features.has_select_for_update:
            if not plan.sql.endswith(" FOR UPDATE"):
                raise ValueError("a shared lock is the plain FOR UPDATE's (no OF, NOWAIT...)")
            plan = replace(plan, sql=plan.sql.removesuffix("UPDATE") + "SHARE")
        if compiler.has_extra_select:
            raise ValueError("a prepared read selects no extra columns")
        select, klass_info = compiler.select, compiler.klass_info
        start, last = klass_info["select_fields"][0], klass_info["select_fields"][-1]
        columns = [s[0] for s in select[: compiler.col_count]]
        converters = tuple(
            (position, tuple(found), expression)
            for position, (found, expression) in compiler.get_converters(columns).items()
        )
        return replace(
            plan,
            width=compiler.col_count,
            locks=bool(queryset.query.select_for_update),
            model=klass_info["model"],
            init_list=[f[0].target.attname for f in select[start : last + 1]],
            fields=(start, last + 1),
            populators=tuple(get_related_populators(klass_info, select, alias)),
            annotations=tuple((compiler.annotation_col_map or {}).items()),
            converters=converters,
        )


class PreparedValues(_Shapes):
    """``build(*values, **options)``, a ``values_list()`` queryset, compiled once per process
    and shape as :class:`Prepared` compiles a read: :meth:`run` gives its rows as tuples, no
    model instance made. A tuple holds the fields ``values_list`` names, in that order, then
    the annotations in the order they were made (:attr:`names` says). The database's
    converters are applied as the ORM applies them, but to no NULL (every converter Django
    has gives NULL back as ``None``): a column a row leaves NULL costs nothing.

    ``raw_from``: the columns from this position on come as the database gave them (a JSON
    field's text), converted only when :meth:`finish` is asked for a row: a caller that
    compares such a row with one it kept and finds them equal converts nothing. Every shape
    of ``build`` must then give the same columns."""

    def __init__(self, build: Callable[..., Any], *, raw_from: int | None = None) -> None:
        super().__init__(build)
        self.raw_from = raw_from
        self._tails: dict[str, tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...]] = {}

    def finish(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        """A row of :meth:`run` with its columns from ``raw_from`` on converted as well (on the
        default database's vendor, whose rows :meth:`run` gave)."""
        connection = connections[DEFAULT_DB_ALIAS]
        tail = self._tails.get(connection.vendor, ())
        return _converted_row(row, tail, connection) if tail else row

    def run(self, *values: Value, **options: Any) -> list[tuple[Any, ...]]:
        found = self.plan(values, options)
        if found is None:
            if _has_empty(values):
                return []
            if self.raw_from is not None:  # the ORM's rows come converted whole
                raise ValueError("a read with raw columns needs a plan (lists of MAX_ITEMS)")
            return [tuple(row) for row in self.build(*values, **options)]  # no plan of its own
        plan, connection, flat = found
        with statement_cursor(connection) as cursor:
            cursor.execute(plan.sql, _filled(plan, flat))
            rows = cursor.fetchall()
        if not plan.converters:
            return rows
        return self.converted(plan, rows, connection)

    def names(self, *values: Value, **options: Any) -> tuple[str, ...]:
        """The name of each column of :meth:`run`'s tuples."""
        query = self.build(*values, **options).query
        return (*query.extra_select, *query.values_select, *query.annotation_select)

    def _built(self, stand_ins: list[Value], options: dict[str, Any]) -> _Plan:
        queryset = self.build(*stand_ins, **options)
        if queryset._iterable_class is not ValuesListIterable or queryset._prefetch_related_lookups:
            raise ValueError("a prepared values read is a values_list() with no prefetch")
        alias = queryset.db or DEFAULT_DB_ALIAS
        compiler = queryset.query.get_compiler(using=alias)
        plan = _compiled(compiler, alias, queryset.model, "values read")
        columns = [s[0] for s in compiler.select[: compiler.col_count]]
        converters = tuple(
            (position, tuple(found), expression)
            for position, (found, expression) in compiler.get_converters(columns).items()
        )
        return replace(
            plan, converters=converters, width=compiler.col_count, order=_order(compiler)
        )

    def converted(self, plan: _Plan, rows: list[Any], connection: Any) -> list[tuple[Any, ...]]:
        """``rows`` of ``plan`` as :meth:`run` gives them: its converters applied (before
        ``raw_from``)."""
        head = plan.converters
        if self.raw_from is not None:
            head = tuple(c for c in plan.converters if c[0] < self.raw_from)
            if plan.vendor not in self._tails:
                tail = tuple(c for c in plan.converters if c[0] >= self.raw_from)
                self._tails[plan.vendor] = tail
        if not head:
            return [tuple(row) for row in rows]
        return [_converted_row(row, head, connection) for row in rows]


def _converted_row(
    row: Sequence[Any],
    converters: tuple[tuple[int, tuple[Callable[..., Any], ...], Any], ...],
    connection: Any,
) -> tuple[Any, ...]:
    """``row`` with each of ``converters``' columns converted, a NULL left as it is."""
    out = list(row)
    for position, found, expression in converters:
        value = out[position]
        if value is not None:
            for converter in found:
                value = converter(value, expression, connection)
            out[position] = value
    return tuple(out)


def _order(compiler: Any) -> tuple[tuple[int, str], ...] | None:
    """The compiled read's ORDER BY over its own columns (see :attr:`_Plan.order`): each term
    a column it selects (by position or as the same expression), with its direction."""
    selected = [s[0] for s in compiler.select[: compiler.col_count]]
    out = []
    for expr, _sql in compiler.get_order_by():
        if not isinstance(expr, OrderBy):
            return None
        inner = expr.expression
        if isinstance(inner, PositionRef):
            position = inner.ordinal - 1
        elif inner in selected:
            position = selected.index(inner)
        else:
            return None
        if not 0 <= position < len(selected):
            return None
        direction = "DESC" if expr.descending else "ASC"
        if expr.nulls_first:
            direction += " NULLS FIRST"
        elif expr.nulls_last:
            direction += " NULLS LAST"
        out.append((position, direction))
    return tuple(out)


def read_with(
    one: Prepared[M],
    values: tuple[Value, ...],
    many: PreparedValues,
    many_values: tuple[Value, ...],
) -> tuple[M | None, list[tuple[Any, ...]]]:
    """``one.first(*values)`` and ``many.run(*many_values)``: on PostgreSQL in one statement
    (one round trip, one snapshot), ``many``'s rows joined to ``one``'s row in their own
    order; elsewhere, or without a plan for either, one after the other. ``one`` reads one
    row at most and locks none."""
    first = one.plan(values, {})
    second = many.plan(many_values, {})
    if (
        first is None
        or second is None
        or first[1] is not second[1]
        or first[1].vendor != "postgresql"
        or first[0].locks
        or second[0].order is None
    ):
        return one.first(*values), many.run(*many_values)
    (plan, connection, flat), (other, _, other_flat) = first, second
    # ``one``'s row first, then ``many``'s rows, each beside NULLs where the other's columns
    # go (a NULL takes the other arm's type). The list's rows are numbered by its own ORDER
    # BY, spelt over its columns (named c1, c2...: a subquery's order is not one its query
    # keeps, by the standard), so the statement's ORDER BY gives them in the list's order.
    width, other_width = plan.width, other.width
    names = ", ".join(f"c{n}" for n in range(1, other_width + 1))
    order = ", ".join(f"m.c{position + 1} {direction}" for position, direction in other.order)
    number = f"row_number() OVER (ORDER BY {order})" if order else "row_number() OVER ()"
    text = (
        f"SELECT 0 AS _n, o.*{', NULL' * other_width} FROM ({plan.sql}) o UNION ALL"
        f" SELECT {number}{', NULL' * width}, m.* FROM ({other.sql}) m({names}) ORDER BY 1"
    )
    with statement_cursor(connection) as cursor:
        cursor.execute(text, [*_filled(plan, flat), *_filled(other, other_flat)])
        rows = cursor.fetchall()
    if rows and len(rows[0]) != 1 + width + other_width:
        raise RuntimeError("a joined read's columns are not its two reads'")
    if not rows or rows[0][0] != 0:
        return None, []
    many_rows = [row[1 + width :] for row in rows[1:]]
    return _instance(plan, rows[0][1 : 1 + width], connection), many.converted(
        other, many_rows, connection
    )


def _instance(plan: _Plan, row: Sequence[Any], connection: Any) -> Any:
    """The row as ``ModelIterable`` makes it: the model's, its related rows, annotations."""
    if plan.converters:
        row = list(row)
        for position, converters, expression in plan.converters:
            value = row[position]
            for converter in converters:
                value = converter(value, expression, connection)
            row[position] = value
    start, end = plan.fields
    obj = plan.model.from_db(plan.alias, plan.init_list, row[start:end])
    for populator in plan.populators:
        populator.populate(row, obj)
    for name, position in plan.annotations:
        setattr(obj, name, row[position])
    return obj


def copy_row(row: M, **related: Model) -> M:
    """A row of its own with ``row``'s fields and related rows (and ``related``, by name),
    made as :meth:`Model.from_db` makes a row, without converting its fields again
    (``copy.copy`` cost ten times as much). Its field values are shared: JSON values too,
    which nothing changes in place (a write sets new ones)."""
    out = type(row).__new__(type(row))
    out.__dict__.update(row.__dict__)
    out._state = ModelState()
    out._state.db, out._state.adding = row._state.db, False
    out._state.fields_cache = {**row._state.fields_cache, **related}
    return out


class PreparedUpdate(_Shapes):
    """An UPDATE compiled once per process and shape: ``build(*values, **options)`` returns
    the queryset and what to set (``{field: value}``); :meth:`run` runs it for ``values``
    and answers the rows updated. No signal is sent (as by ``QuerySet.update()``): a model of
    :func:`keep_signals` is refused."""

    def run(self, *values: Value, **options: Any) -> int:
        found = self.plan(values, options)
        if found is None:
            if _has_empty(values):
                return 0
            queryset, changes = self.build(*values, **options)  # a rare long list
            _refuse_unsignalled(queryset.model)
            return queryset.update(**changes)
        plan, connection, flat = found
        with statement_cursor(connection) as cursor:
            cursor.execute(plan.sql, _filled(plan, flat))
            return cursor.rowcount

    def _built(self, stand_ins: list[Value], options: dict[str, Any]) -> _Plan:
        queryset, changes = self.build(*stand_ins, **options)
        _refuse_unsignalled(queryset.model)
        alias = queryset.db or DEFAULT_DB_ALIAS
        query = queryset.query.chain(sql.UpdateQuery)
        query.add_update_values(changes)
        compiler = query.get_compiler(using=alias)
        self_select = compiler.connection.features.update_can_self_select
        if query.related_updates or not self_select:
            raise ValueError("a prepared update is one statement")  # else it reads first
        return _compiled(compiler, alias, queryset.model, "update")


class PreparedPrefetch:
    """``prefetch_related_objects(instances, *lookups)`` for reverse foreign keys one level
    deep (``character.traits``, a ``Prefetch`` with its own ordering), each relation read by a
    :class:`Prepared` query: the same query per relation, the same rows in the same caches,
    each row's foreign key pointing back to its instance. The instances must not have these
    relations prefetched already; ``lookups`` are fixed (a module's constant)."""

    def __init__(self, model: type[Model], lookups: Sequence[str | Prefetch]) -> None:
        self.model = model
        self.lookups = tuple(lookups)
        self._relations: list[tuple[str, Any, Prepared, Any]] | None = None

    def _prepared(self) -> list[tuple[str, Any, Prepared, Any]]:
        if self._relations is None:  # the models' relations are known once apps are ready
            relations = []
            for lookup in self.lookups:
                name = lookup.prefetch_to if isinstance(lookup, Prefetch) else lookup
                queryset = lookup.queryset if isinstance(lookup, Prefetch) else None
                rel = self.model._meta.get_field(name)
                if not (rel.one_to_many and rel.auto_created) or LOOKUP_SEP in name:
                    raise ValueError(f"{name} is not a reverse foreign key of {self.model}")
                base = queryset if queryset is not None else rel.related_model._default_manager
                field = rel.field

                def build(ids: list[int], base: Any = base, field: Any = field) -> QuerySet:
                    return base.filter(**{f"{field.name}__in": ids})

                prepared = Prepared(build, model=rel.related_model)
                relations.append((name, queryset, prepared, field))
            self._relations = relations
        return self._relations

    def run(self, instances: Sequence[Model]) -> None:
        by_pk = {obj.pk: obj for obj in instances}
        if not by_pk:
            return
        ids = list(by_pk)
        for obj in instances:
            if not hasattr(obj, "_prefetched_objects_cache"):
                obj._prefetched_objects_cache = {}  # type: ignore[attr-defined]
        for name, queryset, query, field in self._prepared():
            found: dict[Any, list[Any]] = {pk: [] for pk in by_pk}
            for row in query.run(ids):
                owner = by_pk[getattr(row, field.attname)]
                field.set_cached_value(row, owner)
                found[owner.pk].append(row)
            for obj in instances:
                manager = getattr(obj, name)
                qs = (
                    manager._apply_rel_filters(queryset)
                    if queryset is not None
                    else manager.get_queryset()
                )
                qs._result_cache = found[obj.pk]
                qs._prefetch_done = True
                obj._prefetched_objects_cache[field.remote_field.cache_name] = qs


_ROW_UPDATES: dict[tuple[type[Model], str, tuple[str, ...]], tuple[str, tuple[Any, ...]]] = {}


def _row_update(obj: Model, fields: Sequence[str] | None) -> tuple[Any, str, list[Any]] | None:
    """The connection, UPDATE text and parameters :func:`save_row` writes ``obj`` with;
    ``None`` when it is saved by ``save()`` (a new row, a model with receivers)."""
    model = type(obj)
    if (
        obj._state.adding
        or model in _KEEP_SIGNALS
        or pre_save.has_listeners(model)
        or post_save.has_listeners(model)
    ):
        return None
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
    return connection, text, [*values, meta.pk.get_db_prep_value(obj.pk, connection)]


def _missing(obj: Model) -> RuntimeError:
    return RuntimeError(f"{obj._meta.label} {obj.pk} is not there to update")


@dataclass(frozen=True)
class Linked:
    """New rows and their many-to-many links for :func:`insert_linked_rows`: ``objs``, and a
    ``through`` row naming each (its field ``own``) and each of ``ids`` (its field ``other``)."""

    objs: Sequence[Model]
    through: type[Model]
    own: str
    other: str
    ids: Sequence[int]

    def insert(self) -> None:
        insert_linked_rows(self.objs, self.through, self.own, self.other, self.ids)


def save_row(
    obj: Model,
    fields: Sequence[str] | None = None,
    *,
    rows: Sequence[Model] = (),
    along: tuple[PreparedUpdate, tuple[Value, ...]] | None = None,
    then: Linked | None = None,
) -> None:
    """``obj.save(update_fields=fields)`` (every column when none are named) for a row that is
    there (read, and locked, by this transaction), its UPDATE's text built once per model,
    vendor and fields: each field's value is prepared as the ORM's own update prepares it. A
    model with a ``pre_save``/``post_save`` receiver or of :func:`keep_signals`, or a row not
    saved yet, is saved by ``save()``.

    ``rows``: other rows saved (every column) before it, and ``along``: another update (a
    :class:`PreparedUpdate` and its values) made after it. On PostgreSQL all in the one
    statement, a data-modifying ``WITH`` (each of its updates runs once, to its end, whatever
    reads it; each row's count is returned and checked), elsewhere one after another. Every
    row named must be locked already by this transaction: the statement takes no row lock
    the step does not hold but ``along``'s, as the separate statements would.

    ``then``: new rows and their links inserted after (:func:`insert_linked_rows`; a scene's
    log lines), on PostgreSQL in the same statement too: one round trip for the step's
    writes, which a scene's lock is held across."""
    own = _row_update(obj, fields)
    others = [(row, _row_update(row, None)) for row in rows]
    found = along[0].plan(along[1], {}) if along is not None else None
    targets = {(type(row), row.pk) for row in (obj, *rows)}
    if (
        own is None
        or own[0].vendor != "postgresql"
        or any(o is None or o[0] is not own[0] for _, o in others)
        or (found is not None and found[1] is not own[0])
        # one statement updating a row twice keeps one of the updates: apart, then
        or len(targets) != 1 + len(rows)
        or (found is not None and any(model is found[0].model for model, _ in targets))
    ):
        for row, theirs in others:
            _write_row(row, None, theirs)
        _write_row(obj, fields, own)
        if along is not None:
            along[0].run(*along[1])
        if then is not None:
            then.insert()
        return
    connection, text, params = own
    parts, before = [], []
    for n, (_, (_, row_text, row_params)) in enumerate(others):  # type: ignore[misc]
        parts.append(f"row{n} AS ({row_text} RETURNING 1)")
        before.extend(row_params)
    if found is not None:
        plan, _, flat = found
        parts.append(f"along AS ({plan.sql})")
        before.extend(_filled(plan, flat))
    inserted = _linked_part(then, connection) if then is not None else None
    if inserted is not None:
        parts.append(inserted[0])
        before.extend(inserted[1])
    returned = [f"(SELECT count(*) FROM row{n})" for n in range(len(others))]
    if inserted is not None:  # the new ids, in the order of their VALUES (ids only go up)
        returned.append("(SELECT array_agg(ins.id ORDER BY ins.id) FROM ins)")
    if parts:
        text = f"WITH {', '.join(parts)} {text}"
    if returned:
        text += f" RETURNING {', '.join(returned)}"
    with statement_cursor(connection) as cursor:
        cursor.execute(text, [*before, *params])
        if cursor.rowcount != 1:
            raise _missing(obj)
        written = cursor.fetchone() if returned else ()
    for (row, _), count in zip(others, written[: len(others)], strict=True):
        if count != 1:
            raise _missing(row)
    if along is not None and found is None:
        along[0].run(*along[1])  # no plan (an empty or a long list): as it runs alone
    if then is not None:
        if inserted is None:
            then.insert()
        else:
            _inserted(then.objs, connection.alias, written[-1])


def _linked_part(then: Linked, connection: Any) -> tuple[str, list[Any]] | None:
    """``then``'s inserts as a data-modifying ``WITH``'s parts (``ins``, the new rows, whose
    ``id`` column it returns; ``ins_links``, their links) and their parameters, on
    PostgreSQL; ``None`` when they are made apart (:func:`insert_linked_rows`)."""
    objs = then.objs
    if not objs or connection.vendor != "postgresql" or not all(o.pk is None for o in objs):
        return None
    model = type(objs[0])
    _refuse_unsignalled(model)
    _refuse_unsignalled(then.through)
    if router.db_for_write(model) != connection.alias or model._meta.pk.column != "id":
        return None
    text, chosen, returns = _insert_text(objs, connection.alias, connection)
    if not returns:
        return None
    values = [f.get_db_prep_save(f.pre_save(o, True), connection) for o in objs for f in chosen]
    part = f"ins AS ({text})"
    if then.ids:
        q, fields = connection.ops.quote_name, then.through._meta
        own_col = fields.get_field(then.own).column
        other_col = fields.get_field(then.other).column
        part += (
            f", ins_links AS (INSERT INTO {q(fields.db_table)} ({q(own_col)}, {q(other_col)})"
            f" SELECT ins.id, v.id FROM ins CROSS JOIN"
            f" (VALUES {', '.join(['(%s)'] * len(then.ids))}) AS v(id))"
        )
    return part, [*values, *then.ids]


def _inserted(objs: Sequence[Model], alias: str, ids: Sequence[int]) -> None:
    """The new rows' ids (in their order) set, and the rows marked saved."""
    if len(ids) != len(objs):
        raise RuntimeError(f"{len(objs)} rows inserted, {len(ids)} ids returned")
    for obj, pk in zip(objs, ids, strict=True):
        obj.pk = pk
        obj._state.adding, obj._state.db = False, alias


def _write_row(
    obj: Model, fields: Sequence[str] | None, own: tuple[Any, str, list[Any]] | None
) -> None:
    if own is None:
        obj.save(update_fields=fields)  # a new row: the ORM inserts it
        return
    connection, text, params = own
    with statement_cursor(connection) as cursor:
        cursor.execute(text, params)
        if cursor.rowcount != 1:
            raise _missing(obj)


_INSERTS: dict[tuple[Any, ...], tuple[str, tuple[Any, ...], bool]] = {}


def insert_rows(objs: Sequence[Model]) -> None:
    """``bulk_create(objs)`` of one model (no signals, as it sends none), its INSERT's text
    built once per model, vendor and number of rows; each new row's id is set from
    ``RETURNING``. A database that cannot return them (an old SQLite) takes ``bulk_create``.
    A model of :func:`keep_signals` is refused."""
    if not objs:
        return
    model = type(objs[0])
    _refuse_unsignalled(model)
    alias = router.db_for_write(model)
    connection = connections[alias]
    if not connection.features.can_return_rows_from_bulk_insert:
        model._default_manager.using(alias).bulk_create(objs)
        return
    text, chosen, returns = _insert_text(objs, alias, connection)
    _run_insert(objs, alias, connection, text, chosen, returns, [])


def insert_noting(obj: Model, noted: Model, field: str) -> None:
    """:func:`insert_rows` of ``obj`` (a new row) and ``noted``'s ``field`` (a row there,
    locked by the step or under its lock) set to the new row's id, on PostgreSQL in one
    statement (a data-modifying ``WITH``: the INSERT, then the UPDATE of that one column from
    its id), elsewhere one after the other. ``noted`` gets the value too; no signal is sent,
    and a model of :func:`keep_signals` is refused."""
    model, other = type(obj), type(noted)
    _refuse_unsignalled(model)
    _refuse_unsignalled(other)
    alias = router.db_for_write(model)
    connection = connections[alias]
    column = other._meta.get_field(field).column
    q = connection.ops.quote_name
    update = (
        f"UPDATE {q(other._meta.db_table)} SET {q(column)} = %s"
        f" WHERE {q(other._meta.pk.column)} = %s"
    )
    if (
        connection.vendor != "postgresql"
        or obj.pk is not None
        or router.db_for_write(other) != alias
        or model._meta.pk.column != "id"
    ):
        insert_rows([obj])
        with statement_cursor(connection) as cursor:
            cursor.execute(update, [obj.pk, noted.pk])
            count = cursor.rowcount
    else:
        key = (model, alias, "noting", other, column)
        known = _INSERTS.get(key)
        if known is None:
            text, chosen, _ = _insert_text([obj], alias, connection)
            pk = q(other._meta.pk.column)
            text = (
                f"WITH e AS ({text}), n AS (UPDATE {q(other._meta.db_table)}"
                f" SET {q(column)} = e.id FROM e WHERE {q(other._meta.db_table)}.{pk} = %s"
                " RETURNING 1) SELECT e.id, (SELECT count(*) FROM n) FROM e"
            )
            known = _INSERTS[key] = (text, chosen, True)
        text, chosen, _ = known
        values = [f.get_db_prep_save(f.pre_save(obj, True), connection) for f in chosen]
        with statement_cursor(connection) as cursor:
            cursor.execute(text, [*values, noted.pk])
            found = cursor.fetchone()
        obj.pk, count = found[0], found[1]
        obj._state.adding, obj._state.db = False, alias
    if count != 1:
        raise _missing(noted)
    setattr(noted, field, obj.pk)


def insert_linked_rows(
    objs: Sequence[Model], through: type[Model], own: str, other: str, ids: Sequence[int]
) -> None:
    """:func:`insert_rows` of ``objs`` and, for each, a ``through`` row naming it (its field
    ``own``) and each of ``ids`` (its field ``other``): a many-to-many's links. On PostgreSQL
    one statement (the links inserted in a ``WITH`` from the new rows' ids), elsewhere two."""
    if not objs or not ids:
        insert_rows(objs)
        return
    model = type(objs[0])
    alias = router.db_for_write(model)
    connection = connections[alias]
    if not connection.features.can_return_rows_from_bulk_insert:  # an old SQLite: no ids
        for obj in objs:
            obj.save(force_insert=True, using=alias)
        insert_rows([through(**{own: o.pk, other: i}) for o in objs for i in ids])
        return
    if connection.vendor != "postgresql" or not all(o.pk is None for o in objs):
        insert_rows(objs)
        insert_rows([through(**{own: o.pk, other: i}) for o in objs for i in ids])
        return
    _refuse_unsignalled(model)
    _refuse_unsignalled(through)
    key = (model, alias, connection.vendor, len(objs), through, own, other, len(ids))
    known = _INSERTS.get(key)
    if known is None:
        text, chosen, _ = _insert_text(objs, alias, connection)
        q, fields = connection.ops.quote_name, through._meta
        own_col, other_col = fields.get_field(own).column, fields.get_field(other).column
        pk = q(model._meta.pk.column)
        text = (
            f"WITH e AS ({text}), l AS (INSERT INTO {q(fields.db_table)}"
            f" ({q(own_col)}, {q(other_col)}) SELECT e.{pk}, v.id FROM e CROSS JOIN"
            f" (VALUES {', '.join(['(%s)'] * len(ids))}) AS v(id)) SELECT e.{pk} FROM e"
        )
        known = _INSERTS[key] = (text, chosen, True)
    text, chosen, returns = known
    _run_insert(objs, alias, connection, text, chosen, returns, list(ids))


def _insert_text(
    objs: Sequence[Model], alias: str, connection: Any
) -> tuple[str, tuple[Any, ...], bool]:
    """The INSERT of ``objs`` (built once per model, vendor and number of rows), the fields
    it writes, and whether it returns the new ids."""
    model = type(objs[0])
    meta = model._meta
    auto = meta.pk.db_returning and all(o.pk is None for o in objs)
    key = (model, alias, connection.vendor, len(objs), auto)
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
    return known


def _run_insert(
    objs: Sequence[Model],
    alias: str,
    connection: Any,
    text: str,
    chosen: tuple[Any, ...],
    returns: bool,
    more: list[Any],
) -> None:
    values = [f.get_db_prep_save(f.pre_save(o, True), connection) for o in objs for f in chosen]
    with statement_cursor(connection) as cursor:
        cursor.execute(text, [*values, *more])
        ids = [r[0] for r in cursor.fetchall()] if returns else []
    for n, obj in enumerate(objs):
        if returns:
            obj.pk = ids[n]
        obj._state.adding, obj._state.db = False, alias
