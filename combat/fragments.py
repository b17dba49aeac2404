"""Rendering a scene's fragments once per audience, from the same partials as the pages.

The tablet page (``combat/scene_tablet.html``) and the phone page (``combat/scene_phone.html``)
are built of named partials; a push sends the same partials with ``hx-swap-oob`` so htmx's
websocket extension swaps them in by id. Every fragment root carries an id and the scene's
``seq`` (``data-seq``), so a phone that sees a gap knows to resync.

The board (about 50 KB with a long log and a full stage) is pushed by region, so a clock
change sends the clock panel and the log line, not the whole board. The regions (``REGIONS``)
are the board's partials ``clock-panel``, ``people-panel`` and ``log-panel`` and the feature
includes ``combat/challenges/board.html`` (``#challenge-board``), ``combat/rounds/board.html``
(``#combat``) and ``chases/board.html`` (``#chase``). The phone's public part (about 2 KB) goes
whole on every change: it is what tells a phone that the scene moved on (its ``seq``). A
player's own part goes as its prompts and log (``PRIVATE_PIECES``) unless the change wrote the
scene's participants; a sheet push sends it whole. No board is rendered while no storyteller's
socket of the scene is open (``selectors.board_watched``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Exists, OuterRef, QuerySet
from django.template.loader import render_to_string

from combat import board, render_cache, replies, selectors
from combat.models import Participant, Scene
from combat.regions import flags as region_flags
from combat.regions import read as read_regions
from combat.regions import sheetless as regions_showing_no_sheet
from config.prepared import Prepared, PreparedValues

TABLET = "combat/scene_tablet.html"
PHONE = "combat/scene_phone.html"

# Board region -> what renders it: a partial of the tablet page, or a feature's include.
REGION_TEMPLATES = {
    "clock": f"{TABLET}#clock-panel",
    "people": f"{TABLET}#people-panel",
    "challenges": "combat/challenges/board.html",
    "combat": "combat/rounds/board.html",
    "chase": "chases/board.html",
    "log": f"{TABLET}#log-panel",
}
REGIONS = tuple(REGION_TEMPLATES)
# What a sheet change (a cost, a refresh) may change on a board: the people and the features'
# boards, which show pools and health (sheet_regions: those of a scene now).
SHEET_REGIONS = ("people", "challenges", "combat", "chase")
# What each region's template needs beyond the scene row and the clock (the features' boards
# read theirs, combat.regions): a clock tap renders the clock and the log, nothing else.
_NEEDS_PEOPLE = {"people"}
# A region whose change changes another: the people panel says whom the challenges wait on
# (combat.roster), so a challenge's step re-renders it too; a round's steps push every region.
_ALSO = {"challenges": "people"}
_NEEDS_LOG = {"log"}


@dataclass(frozen=True)
class SceneFragments:
    storytellers: str
    players: str
    private: dict[int, str] = field(default_factory=dict)


def _partial(template: str, name: str, context: dict[str, Any], *, oob: bool = True) -> str:
    return render_to_string(f"{template}#{name}", {**context, "oob": oob})


def load(scene_id: int) -> Scene | None:
    """The scene's row for its renderings, with its features' flags in the same query
    (:func:`combat.regions.flags`: no fight, no chase to read) and whether a storyteller's
    socket of the scene may be open (``watched``: :func:`selectors.board_watched`).

    Inside a step's request (:func:`render_cache.one_request`) it is read once after the
    request's last write: a sheet change's push and the scene change's push of one commit
    (and the answer, :func:`render_cache.scene_now`) share it."""
    held = render_cache.held_scene(scene_id)
    if held is not None:
        return held
    if not render_cache.shared():
        found = _scene_row.run(scene_id)
        return found[0] if found else None
    # the renderings read the participants next: read with the row (one statement)
    scene, participants = selectors.scene_with_participants(_scene_row, scene_id)
    if scene is None:
        return None
    render_cache.loaded(scene)  # the other pushes' and the answer's row too
    with render_cache.for_scene(scene).active():
        selectors.keep_participants(scene, participants)
    return scene


def _scene_query(scene_id: int) -> QuerySet[Scene]:
    watchers = selectors.board_watchers(OuterRef("pk"), OuterRef(OuterRef("pk")))
    return (
        Scene.objects.select_related("chronicle", "storyteller", "game_night")
        .annotate(**region_flags(), watched=Exists(watchers))
        .filter(pk=scene_id)
        .order_by()
    )


# Its SQL is built once per process (config.prepared): building it was most of its cost.
_scene_row = Prepared(_scene_query, model=Scene)


_load = load


def storyteller_state(scene: Scene) -> str:
    """Everything the storyteller's board shows live (the whole board: sent on connect)."""
    with render_cache.rendering(scene):
        return _partial(TABLET, "board", board.board_state(scene))


def sheet_regions(scene: Scene) -> tuple[str, ...]:
    """The board regions of ``scene`` a sheet's change may change now (``SHEET_REGIONS``, but a
    feature's region with nothing running, whose flags the scene's row carries: :func:`load`,
    :func:`combat.regions.sheetless`)."""
    quiet = regions_showing_no_sheet(scene)
    return tuple(r for r in SHEET_REGIONS if r not in quiet)


def board_regions(scene: Scene, regions: Collection[str] | None = None) -> str:
    """Some regions of the board, each a root with its id and ``data-seq`` (``None``: all)."""
    asked = set(regions) if regions is not None else set(REGIONS)
    asked |= {_ALSO[r] for r in asked if r in _ALSO}
    wanted = [r for r in REGIONS if r in asked]
    unknown = set(regions or ()) - set(REGIONS)
    if unknown:
        raise ValueError(f"unknown board regions: {sorted(unknown)}")
    if not wanted:
        return ""
    # A region rendered already at this seq (in the pushes of this commit) is not rendered
    # again. The chase's start form lists the people panel's rows when they are read with it:
    # its rendering is kept apart for either case.
    people = bool(_NEEDS_PEOPLE & set(wanted))
    with render_cache.rendering(scene):
        html = {r: render_cache.known(("html", "board", r, people)) for r in wanted}
        todo = [r for r in wanted if html[r] is None]
        if todo:
            context = selectors.clock_state(scene)
            if people:
                context.update(board.people_state(scene))
            if _NEEDS_LOG & set(todo):
                context.update(selectors.log_state(scene))
            context.update(read_regions(scene, "board", context, todo))
            # rendered with the CSRF mark, kept so for the answer (combat.replies)
            context = {**context, "oob": True, **replies.MARKED}  # regions.read: no refusal
            for r in todo:
                html[r] = render_cache.cached(
                    ("html", "board", r, people),
                    lambda r=r: replies.keep(
                        ("board", r, people), render_to_string(REGION_TEMPLATES[r], context)
                    ),
                )
        return "".join(html[r] for r in wanted)


def players_state(scene: Scene) -> str:
    """The public part every player of the scene sees."""
    with render_cache.rendering(scene):
        return render_cache.cached(
            ("html", "public"), lambda: _partial(PHONE, "public", selectors.public_state(scene))
        )


def private_state(scene: Scene, user) -> str:
    """One player's own part."""
    with render_cache.rendering(scene):
        return render_cache.cached(
            ("html", "private", user.pk),
            lambda: replies.keep(
                ("private", user.pk),
                _partial(
                    PHONE, "private", {**selectors.private_state(scene, user), **replies.MARKED}
                ),
            ),
        )


# The pieces of a player's own part a scene change may change (selectors.prompts_state):
# partials of the private part, each a root with its id and data-seq.
PRIVATE_PIECES = ("prompts", "player-log")


def private_pieces(scene: Scene, user) -> str:
    """One player's prompts and log, the pieces of their part a scene change of a feature's
    regions changes (``PRIVATE_PIECES``), from the same partials as the page."""
    with render_cache.rendering(scene):

        def render() -> str:
            context = {**selectors.prompts_state(scene, user), "oob": False, "oob_piece": True}
            # its challenge prompts kept so ({% kept_include %}, combat.replies)
            context.update(replies.MARKED)
            # each piece kept for the answer too, the part's frame around them (combat.replies)
            return "".join(
                replies.keep(("piece", n, user.pk), render_to_string(f"{PHONE}#{n}", context))
                for n in PRIVATE_PIECES
            )

        return render_cache.cached(("html", "pieces", user.pk), render)


def scene_change_fragments(
    scene_id: int,
    *,
    private_user_ids: Iterable[int] = (),
    regions: Collection[str] | None = None,
) -> SceneFragments | None:
    """One change, rendered once per audience: the board's changed regions, the public part,
    and the private part of each named player."""
    parts = list(scene_change_parts(scene_id, private_user_ids=private_user_ids, regions=regions))
    if not parts:
        return None
    by = {(kind, user_id): html for kind, user_id, html in parts}
    return SceneFragments(
        storytellers=by[("storytellers", None)],
        players=by[("players", None)],
        private={u: html for (kind, u), html in by.items() if kind == "private"},
    )


def scene_change_parts(
    scene_id: int,
    *,
    private_user_ids: Iterable[int] = (),
    regions: Collection[str] | None = None,
    players: bool = True,
    board: bool | None = True,
    own_parts: bool = True,
    board_turn: Callable[[], bool] | None = None,
    actor: int | None = None,
) -> Iterator[tuple[str, int | None, str]]:
    """The same renderings one at a time, ``(audience, user id, html)``, so each can be sent as soon
    as it is rendered: the private parts first (the other side of a challenge waits for its
    own; the ``actor``'s, who made the change and whose answer carries it, after the others'),
    then the players' public part, which must come after them (it carries the players'
    ``seq``: a publish cut short before it leaves every phone behind, and caught up, see
    :mod:`combat.hub`), then the board's regions. ``players`` false: the storytellers' part
    alone (a change no player sees). ``board`` None: the board's part only when a storyteller's
    socket of the scene may be open (:func:`selectors.board_watched`, asked when its turn
    comes, after the commit: a tablet that connects later reads a state that has the change);
    no board is rendered for nobody. ``board_turn``: asked then too, when the board is to be
    rendered; false: it is not (a rendering of the scene's board under way in this process
    takes the change, :mod:`combat.board_turns`). ``own_parts`` false: the players' own parts
    go as their prompts and log (``PRIVATE_PIECES``), all a change can change in them when the
    scene's participants stay as they were (``combat.live`` knows: which characters a player
    has here, a removal); their sheets change by the ledger, whose push
    (:func:`combat.live.sheets_changed`) carries the whole part.

    They share one :class:`RenderCache`: the scene's challenges, each sheet, are read once for
    all of them (active only while a part renders, never while the caller sends it)."""
    scene = load(scene_id)  # the answer's row too (render_cache.scene_now)
    if scene is None:
        return
    cache = render_cache.for_scene(scene)
    ids = list(private_user_ids)
    whole = own_parts
    if len(ids) > 1:
        with cache.active():  # whose own parts follow: a feature may read theirs at once
            render_cache.cached(("private_users", scene.pk), lambda: tuple(sorted(set(ids))))
    if ids and board is not False and (board or scene.watched) and _logs(regions):
        with cache.active():  # the board's log is read with the players' own (selectors.own_logs)
            render_cache.cached(("board_log", scene.pk), lambda: True)
    for user in sorted(_players(cache, scene, ids), key=lambda u: u.pk == actor):
        with cache.active():
            if not whole and render_cache.known(("html", "private", user.pk)) is not None:
                continue  # this commit's sheet push sent the whole part, as it is now
            html = private_state(scene, user) if whole else private_pieces(scene, user)
        yield "private", user.pk, html
    if players:
        with cache.active():
            html = players_state(scene)
        yield "players", None, html
    if board is None:  # the scene's row, read after the commit, says (load)
        board = scene.watched
    if board and board_turn is not None:  # asked when the board's turn comes (combat.board_turns)
        board = board_turn()
    if board:
        with cache.active():
            html = board_regions(scene, regions)
        yield "storytellers", None, html


def _logs(regions: Collection[str] | None) -> bool:
    """Whether a change of these board regions renders the board's log."""
    return regions is None or "log" in regions


def _players(cache: render_cache.RenderCache, scene: Scene, ids: list[int]) -> list[Any]:
    """The users whose own parts a change renders, by id: the players of the scene's
    participants, which its renderings read anyway (the public part's people); a player no
    longer among them (just removed) is read on their own."""
    if not ids:
        return []
    wanted = set(ids)
    with cache.active():
        found = {
            p.character.player_id: p.character.player
            for p in selectors.active_participants(scene)
            if p.character_id and p.character.player_id in wanted
        }
    missing = wanted - set(found)
    if missing:
        found.update(get_user_model().objects.in_bulk(missing))
    return [found[pk] for pk in sorted(found)]


def players_of(cache: render_cache.RenderCache, scene: Scene, ids: Iterable[int]) -> list[Any]:
    """The users of ``ids`` whose own parts a sheet push renders, read as a change reads
    them (:func:`_players`: the scene's participants' players, in ``cache``)."""
    return _players(cache, scene, sorted(set(ids)))


def presence_fragment(scene_id: int) -> str:
    """Who is connected changed: the board's people region ("" when no storyteller's socket
    of the scene is open: a tablet that connects reads who is connected then)."""
    scene = load(scene_id)  # its row says whether the board is watched (``watched``)
    return board_regions(scene, ("people",)) if scene is not None and scene.watched else ""


def open_scenes_of(
    *, character_ids: Iterable[int] = (), chronicle_ids: Iterable[int] = ()
) -> dict[int, set[int]]:
    """Open scenes the characters (or any character of the chronicles) are in now: scene id ->
    the players whose private part shows them."""
    character_ids, chronicle_ids = list(character_ids), list(chronicle_ids)
    if chronicle_ids:
        found = _open_scenes.run(chronicle_ids, by="chronicle")
    else:
        found = _open_scenes.run(character_ids, by="character")
    scenes: dict[int, set[int]] = {}
    for scene_id, player_id in found:
        players = scenes.setdefault(scene_id, set())
        if player_id:
            players.add(player_id)
    return scenes


def _open_scenes_query(ids: list[int], *, by: str) -> QuerySet[Participant]:
    found = Participant.objects.filter(removed_at__isnull=True, scene__closed_at__isnull=True)
    if by == "chronicle":
        found = found.filter(scene__chronicle_id__in=ids)
    else:
        found = found.filter(character_id__in=ids)
    return found.values_list("scene_id", "character__player_id")


# Read on every sheet push: its SQL built once per process (config.prepared).
_open_scenes = PreparedValues(_open_scenes_query)
