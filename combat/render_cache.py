"""Reads shared by the renderings of one change: each sheet, each list read once.

A change is rendered once per audience (the players' public part, the board's regions, the
private part of each player concerned), and each rendering used to read the same rows again:
the scene's challenges for every audience, a player's sheet (with its ledger) for its private
part, then again for its start form and for its card's bids. Inside :meth:`RenderCache.active`
the selectors read each through :func:`cached` once; outside any (the services, which write
and must read what they wrote) they read every time.

The renderings themselves are kept the same way (``("html", …)`` keys, :mod:`combat.fragments`):
a commit that changes sheets and the scene pushes the sheets' part first (the board's regions
that show sheets, the players' own parts) and then the scene change, which takes what the
first push rendered at the same ``seq`` instead of rendering it again.

A cache lives for one change's renderings (``combat.fragments.scene_change_parts``) or one
answer's region, a few milliseconds after the commit it shows, and is then dropped: nothing
is ever read from a cache of an earlier change. What it holds must not be changed by its
readers (the template tags and selectors only read).

Inside a view wrapped in :func:`one_request` (a challenge step: one service call, one commit,
then the answer) the renderings of the scene at one ``seq`` share one cache: the pushes the
commit makes (a sheet change's, then the scene change's) and the answer's region. A region
rendered after the scene moved on (another ``seq``) reads afresh, and so does every rendering
after any write of the request (an INSERT, UPDATE or DELETE drops all it read before): a
sheet's write does not move the scene's ``seq``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Any, TypeVar

from django.db import connection

from characters import sheet_cache

T = TypeVar("T")

_values: ContextVar[dict[Hashable, Any] | None] = ContextVar("render_cache", default=None)
# Inside one_request: (scene id, seq) -> the cache of that scene's renderings at that seq.
_request: ContextVar[dict[tuple[int, int], RenderCache] | None] = ContextVar(
    "render_cache_request", default=None
)
# Inside one_request: scene id -> its row as a change's renderings read it after the last write.
_scenes: ContextVar[dict[int, Any] | None] = ContextVar("render_cache_scenes", default=None)


class RenderCache:
    """The reads of one change's renderings (activate it around each rendering)."""

    def __init__(self) -> None:
        self.values: dict[Hashable, Any] = {}

    @contextmanager
    def active(self) -> Iterator[None]:
        token = _values.set(self.values)
        try:
            yield
        finally:
            _values.reset(token)


def for_scene(scene: Any) -> RenderCache:
    """The cache for renderings of ``scene`` at its ``seq``: inside :func:`one_request` the
    one every rendering of that scene at that seq shares, else a new one."""
    shared = _request.get()
    if shared is None:
        return RenderCache()
    key = (scene.pk, scene.seq)
    if key not in shared:
        shared.clear()  # an older seq's reads are never used again
        shared[key] = RenderCache()
    return shared[key]


@contextmanager
def rendering(scene: Any) -> Iterator[None]:
    """Render ``scene`` with its cache (:func:`for_scene`), unless one is active already."""
    if _values.get() is not None:
        yield
        return
    with for_scene(scene).active():
        yield


def one_request(view: Callable[..., T]) -> Callable[..., T]:
    """A view of one step (one service call, one commit, then its answer): its pushes and its
    answer's region share their reads (:func:`for_scene`)."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> T:
        token, scenes = _request.set({}), _scenes.set({})
        try:
            with connection.execute_wrapper(_forget_on_write):
                return view(*args, **kwargs)
        finally:
            _request.reset(token)
            _scenes.reset(scenes)

    return wrapped


_WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")
# A statement that opens with a common table expression writes when any of its parts does
# (config.prepared's steps write so); a read with one is taken for a write (it costs a re-read).
_WRITES_IN_WITH = re.compile(r"\b(INSERT|UPDATE|DELETE)\b", re.IGNORECASE)


def _is_write(sql: str) -> bool:
    head = sql.lstrip()[:7].upper()
    if head.startswith(_WRITES):
        return True
    return head.startswith("WITH") and _WRITES_IN_WITH.search(sql) is not None


def _forget_on_write(execute: Callable[..., Any], sql: str, *args: Any) -> Any:
    """A write of the request: nothing its renderings read before is used after it."""
    if _is_write(sql):
        shared = _request.get()
        for cache in (shared or {}).values():
            cache.values.clear()  # a rendering under way holds its cache: empty it too
        if shared:
            shared.clear()
        (_scenes.get() or {}).clear()
    return execute(sql, *args)


def loaded(scene: Any) -> None:
    """Note ``scene``'s row, just read for a change's renderings (after the commit): inside
    :func:`one_request` the answer takes it (:func:`scene_now`) until the request writes."""
    held = _scenes.get()
    if held is not None:
        held[scene.pk] = scene


def shared() -> bool:
    """Whether this runs inside :func:`one_request`: a change's renderings and its answer
    share their reads (a read made ahead for them is used)."""
    return _request.get() is not None


def held_scene(scene_id: int) -> Any:
    """The scene's row a change's renderings read after the request's last write
    (:func:`loaded`), else None: a sheet change's push and the scene change's that follows it
    in the same commit read it once."""
    return (_scenes.get() or {}).get(scene_id)


def scene_now(scene: Any) -> Any:
    """``scene``'s row as it is after the request's last write: the one its pushes read
    (:func:`loaded`, no query; the answer then shows their ``seq``), else read again."""
    found = (_scenes.get() or {}).get(scene.pk)
    if found is None:
        scene.refresh_from_db()
        return scene
    return found


def cached(key: Hashable, read: Callable[[], T]) -> T:
    """``read()``, once per active cache (every time when none is active)."""
    values = _values.get()
    if values is None:
        return read()
    if key not in values:
        values[key] = read()
    return values[key]


def known(key: Hashable) -> Any:
    """What the active cache holds under ``key`` (None: nothing, or no cache active)."""
    values = _values.get()
    return None if values is None else values.get(key)


def offer_sheet_rows(make: Callable[[Collection[int]], Iterable[Any]]) -> None:
    """Characters' rows a rendering has just read as a sheet's key needs them (with their
    player and chronicle, ``open_night``: :func:`characters.sheet_cache.sheets`):
    ``make(ids)`` gives those of the characters ``ids`` it has, each a copy of its own, made
    only when a sheet of theirs is asked for (a shared scene's change reads a few players'
    sheets of many). :func:`sheets_now` takes them, in the active cache, instead of reading
    them again (nothing is kept when no cache is active)."""
    values = _values.get()
    if values is not None:
        values.setdefault("sheet_rows_offered", []).append(make)


def _offered_rows(values: dict[Hashable, Any], ids: list[int]) -> None:
    """The offered rows (:func:`offer_sheet_rows`) of ``ids`` not made yet, made once each."""
    wanted = [i for i in ids if ("sheet_row", i) not in values]
    for make in values.get("sheet_rows_offered", ()) if wanted else ():
        for row in make(wanted):
            values.setdefault(("sheet_row", row.pk), row)


def sheets_now(character_ids: Iterable[int]) -> dict[int, tuple[Any, dict[str, Any]]]:
    """Characters (with ``SHEET_PREFETCH``) and their current values, by id: the ones not read
    yet in the active cache in one go (:func:`characters.sheet_cache.sheets`: one query when
    the process has them all at their current versions)."""
    ids = list(dict.fromkeys(character_ids))
    values = _values.get()
    known = values or {}
    found = {i: known[("sheet", i)] for i in ids if ("sheet", i) in known}
    missing = [i for i in ids if i not in found]
    if missing:
        if values is not None:
            _offered_rows(values, missing)
        rows = {i: known[("sheet_row", i)] for i in missing if ("sheet_row", i) in known}
        for pk, read in sheet_cache.sheets(missing, rows=rows).items():
            found[pk] = read
            if values is not None:
                values[("sheet", pk)] = read
    return found


HEALTH = ("damage", "health")


def health_now(character_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """Characters' ``damage`` and ``health`` as :func:`sheets_now` gives them, by id, without
    a copy of the rest of their sheets (the board's people panel shows every fighter's
    health track and nothing else of a sheet): from the rows offered with the scene's
    participants (:func:`offer_sheet_rows`, no query), the others' keys read alone
    (:func:`sheet_cache.parts_of`: no row made). Only read what it gives."""
    ids = list(dict.fromkeys(character_ids))
    values = _values.get()
    known = values or {}
    found: dict[int, dict[str, Any]] = {}
    missing = []
    for i in ids:
        if ("sheet", i) in known:
            now = known[("sheet", i)][1]
            found[i] = {k: now[k] for k in HEALTH}
        elif ("health", i) in known:
            found[i] = known[("health", i)]
        else:
            missing.append(i)
    if not missing:
        return found
    if values is not None:  # the rows the scene's participants came with (offer_sheet_rows)
        _offered_rows(values, missing)
    rows = {i: known[("sheet_row", i)] for i in missing if ("sheet_row", i) in known}
    unread = [i for i in missing if i not in rows]
    read = sheet_cache.parts_of(unread, HEALTH) if unread else {}
    if rows:  # their keys are in their rows: no query, nothing copied
        read.update(sheet_cache.parts_of_rows(rows, HEALTH))
    for pk, parts in read.items():
        found[pk] = parts
        if values is not None:
            values[("health", pk)] = parts
    return found
