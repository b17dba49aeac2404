"""Queries whose SQL is built once per process: the ORM compiles a queryset anew every time it
runs, and for a row read on every tap with subqueries of its own (a scene's row with its
features' flags, ``combat.fragments.load``) that costs more than the query itself.

:class:`Prepared` builds its queryset once per database connection and *shape* from stand-in
arguments, keeps the SQL, the compiler's layout of a row and its converters, and then runs it
with the real arguments, building the instances the way ``QuerySet.__iter__`` does
(``ModelIterable``: the model's row, its ``select_related`` rows, its annotations). The rows
are the ones the queryset would read: the SQL is the ORM's own, only the parameters differ.

The queryset must depend on its arguments alone (no ``now()``, no setting read at call time):
it is built twice with different stand-ins and the two must differ only where the stand-ins
are, or building fails. An argument is an ``int`` or a list of them (``pk__in``); a list's
length is part of the shape (``IN (%s, %s)``), so each length is built once (a list longer
than ``MAX_ITEMS`` runs as a plain queryset).

Plans are kept per connection (a thread's own) in a weak mapping, so a connection that goes
takes its plans with it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.core.exceptions import EmptyResultSet
from django.db import connections, router
from django.db.models import Model, Prefetch, QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.db.models.query import get_related_populators

M = TypeVar("M", bound=Model)
Arg = int | Sequence[int]

# A list argument longer than this is not prepared (a plan per length: their number bounded).
MAX_ITEMS = 64
# Stand-ins no real key takes (negative, far from any id or version).
_BASES = (-7_301_000_000_000, -7_302_000_000_000)


@dataclass(frozen=True)
class _Plan:
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, int, int | None], ...]  # (param index, argument, item or None)
    compiler: Any
    converters: Any
    init_list: list[str]
    fields_span: tuple[int, int]
    populators: list[Any]
    annotations: dict[str, int]


class Prepared(Generic[M]):
    """``build(*args)``, a queryset of ``model`` instances, compiled once per connection and
    shape; :meth:`run` gives its rows for the real arguments."""

    def __init__(self, model: type[M], build: Callable[..., QuerySet[M]]) -> None:
        self.model = model
        self.build = build
        self._plans: weakref.WeakKeyDictionary[Any, dict[tuple, _Plan]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()

    def run(self, *args: Arg) -> list[M]:
        shape = tuple(None if isinstance(a, int) else len(a) for a in args)
        if 0 in shape:
            return []  # ``IN ()`` reads nothing (the ORM would not ask)
        if any(n is not None and n > MAX_ITEMS for n in shape):
            return list(self.build(*args))  # a rare long list: not worth a plan of its own
        alias = router.db_for_read(self.model)
        connection = connections[alias]
        with self._lock:
            plan = self._plans.setdefault(connection, {}).get(shape)
        if plan is None:
            plan = self._plan(shape, alias)
            with self._lock:
                self._plans[connection][shape] = plan
        params = list(plan.params)
        for index, arg, item in plan.slots:
            params[index] = args[arg] if item is None else args[arg][item]  # type: ignore[index]
        with connection.cursor() as cursor:
            cursor.execute(plan.sql, params)
            rows = cursor.fetchall()
        return _instances(plan, rows, alias)

    def _plan(self, shape: tuple[int | None, ...], alias: str) -> _Plan:
        first, second = (_stand_ins(shape, base) for base in _BASES)
        query = self.build(*first).using(alias)
        if query.model is not self.model:
            raise ValueError(f"a prepared query of {self.model.__name__} reads {query.model}")
        compiler = query.query.get_compiler(using=alias)
        try:
            sql, params = compiler.as_sql()
            other_sql, other_params = self.build(*second).using(alias).query.sql_with_params()
        except EmptyResultSet as empty:  # e.g. a stand-in out of a small field's range
            raise ValueError("a prepared query must have SQL for any arguments") from empty
        if other_sql != sql or len(other_params) != len(params) or compiler.has_extra_select:
            raise ValueError("a prepared query's SQL must not change with its arguments")
        select, klass_info = compiler.select, compiler.klass_info
        start, end = klass_info["select_fields"][0], klass_info["select_fields"][-1] + 1
        return _Plan(
            sql=sql,
            params=tuple(params),
            slots=_slots(params, other_params, first, second),
            compiler=compiler,
            converters=compiler.get_converters([s[0] for s in select[: compiler.col_count]]),
            init_list=[f[0].target.attname for f in select[start:end]],
            fields_span=(start, end),
            populators=get_related_populators(klass_info, select, alias),
            annotations=dict(compiler.annotation_col_map or {}),
        )


def _instances(plan: _Plan, rows: list[Any], alias: str) -> list[Any]:
    """The rows as ``ModelIterable`` makes them: the model's, its related rows, annotations."""
    if plan.converters:
        rows = list(plan.compiler.apply_converters(rows, plan.converters))
    model = plan.compiler.klass_info["model"]
    start, end = plan.fields_span
    found = []
    for row in rows:
        obj = model.from_db(alias, plan.init_list, row[start:end])
        for populator in plan.populators:
            populator.populate(row, obj)
        for name, position in plan.annotations.items():
            setattr(obj, name, row[position])
        found.append(obj)
    return found


def _stand_ins(shape: tuple[int | None, ...], base: int) -> list[Arg]:
    out: list[Arg] = []
    for n, size in enumerate(shape):
        start = base - n * 1000
        out.append(start if size is None else [start - i for i in range(1, size + 1)])
    return out


def _flat(args: list[Arg]) -> list[tuple[int, int, int | None]]:
    """(value, argument, item or None) of each stand-in."""
    out = []
    for n, arg in enumerate(args):
        if isinstance(arg, int):
            out.append((arg, n, None))
        else:
            out.extend((value, n, i) for i, value in enumerate(arg))
    return out


def _slots(
    params: Sequence[Any], other_params: Sequence[Any], first: list[Arg], second: list[Arg]
) -> tuple[tuple[int, int, int | None], ...]:
    """Where each stand-in sits among the parameters (once each); every other parameter the
    same in both builds."""
    stand_ins = {
        value: (n, item, other)
        for (value, n, item), (other, _, _) in zip(_flat(first), _flat(second), strict=True)
    }
    slots = []
    for index, (p, q) in enumerate(zip(params, other_params, strict=True)):
        if isinstance(p, int) and p in stand_ins and stand_ins[p][2] == q:
            slots.append((index, *stand_ins[p][:2]))
        elif p != q:
            raise ValueError("a prepared query's parameters must not change but by its arguments")
    if sorted(s[1:] for s in slots) != sorted((n, item) for n, item, _ in stand_ins.values()):
        raise ValueError("each argument of a prepared query must be one parameter, once")
    return tuple(slots)


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

                relations.append((name, queryset, Prepared(rel.related_model, build), field))
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
