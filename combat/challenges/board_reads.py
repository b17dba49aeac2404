"""What the storyteller's board reads of a scene's challenges, bounded however long the night.

The board's pushed challenge region (and the tablet's page) holds the challenges still open
(and those waiting on a loser's choice, W8; a mob's forming one is open), the ``SHOWN``
newest finished ones, folded, and one fold "Earlier challenges (N)" for the rest of the
night, whose content the tablet asks for when the storyteller opens it (:func:`earlier`, a
page of ``PAGE`` at a time), never part of a push or of the page load.

A change's read for the board (:func:`board_rows`) is one query whatever the night holds:
the list of the open ones and the ``SHOWN`` newest finished ones (pk, step, status), both
walked by index. How many are finished is the scene row's (``Scene.challenges_done``, kept
by the step that saves a challenge: combat.challenges.recording), not counted from the
night's rows. The open rows come whole from the phones' list, which the board's renderings
read anyway (:func:`_open_ones`; else by pk, one more query). The finished rows are taken
from this process's memo of them (:data:`finished.rows`: a row at a step never changes, but
for who left it, which the board does not show) and only those not held are read whole.

``version`` moves with anything the fold's content shows of its rows: the count of finished
ones (one finishes), the ``seq`` of the last change to a finished one (a void:
``Scene.challenges_done_seq``), and the names the sides are shown by (the present
participants' pk, name and hidden: a rename, a reveal). The tablet keeps a fold it loaded
through pushes that leave it as it was, and asks again when it moved (static/js/tablet.js).
A side taken out of the scene and renamed after it left is not in it: no screen of the scene
shows that participant any more, but a loaded fold keeps its old name until the next move.
"""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import sha256

from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    F,
    Q,
    QuerySet,
    Subquery,
    Window,
)
from django.db.models.functions import Coalesce

from combat.challenges import finished, reads
from combat.models import Challenge, ChallengeStatus, Scene
from combat.regions import says_none
from combat.render_cache import cached, known
from config.prepared import Prepared, PreparedValues, copy_row

#: The newest finished challenges the board itself keeps showing (folded), as many as a
#: player's phone keeps of their own (``reads.KEPT``): a dispute about a result comes while its
#: card is still on the players' phones, and the storyteller voids it from the board without
#: opening the fold. Ten folds are about 15 KB a push; the rest is fetched on demand.
SHOWN = 10

#: The earlier challenges a page of the fold holds: a storyteller looking for one goes back a
#: screenful or two at a time, not through a night's thousand folds.
PAGE = 20

#: The most a fold asked again for the pages it had loaded holds (:func:`earlier`).
THROUGH = 10 * PAGE

_OPEN = (ChallengeStatus.ANSWER, ChallengeStatus.LIVE)


def still_open_q() -> Q:
    """The rows :func:`reads.still_open` keeps with the open ones: open, or waiting on a
    loser's choice (W8)."""
    return Q(status__in=_OPEN) | Q(options__has_key="choose")


@dataclass(frozen=True)
class BoardRows:
    """``waiting``: the open ones (and those waiting on a choice), oldest first; ``recent``:
    the ``SHOWN`` newest finished ones, newest first; ``earlier``: how many finished ones are
    older (the fold's count); ``version``: see the module; ``newest``: the scene's newest
    challenge's pk (0: none), which the list holds (open, or among the newest finished)."""

    waiting: list[Challenge]
    recent: list[Challenge]
    earlier: int
    version: str
    newest: int = 0


def board_rows(scene: Scene) -> BoardRows:
    """The board's rows, read once for every rendering of a change (see the module)."""

    def read() -> BoardRows:
        if says_none(scene, reads.CHALLENGE_FLAG):  # the scene's row: it never had one
            return BoardRows([], [], 0, "0-0")
        still: list[tuple[int, int]] = []  # open, or over and waiting on a choice (W8)
        opened: list[int] = []
        newest: list[tuple[int, int]] = []
        for pk, step, status, done in _board_list.run(scene.pk):
            if done:
                newest.append((pk, step))
            else:
                still.append((pk, step))
                if status in _OPEN:
                    opened.append(pk)
        found = _open_ones(scene, [item for item in still if item[0] in opened])
        held = [item for item in still if item[0] not in found]
        found |= {row.pk: row for row in _finished_rows(scene.pk, held)}
        waiting = [found[pk] for pk, _ in still if pk in found]  # none deleted since
        newest.sort(reverse=True)
        recent = _finished_rows(scene.pk, newest)
        _attach(scene, waiting + recent)
        total = scene.challenges_done
        listed = [pk for pk, _ in still] + [pk for pk, _ in newest]
        newest_pk = max(listed, default=0)
        return BoardRows(waiting, recent, max(total - len(recent), 0), _version(scene), newest_pk)

    return cached(("board_rows", scene.pk), read)


def _version(scene: Scene) -> str:
    """The fold's version (see the module): the scene row's count and ``seq`` of its
    finished challenges, and a digest of how the present participants are named (read for
    the change's renderings already, :func:`reads.sides_of`)."""
    from combat.selectors import active_participants  # it reads the features' regions

    if not scene.challenges_done:
        return "0-0"
    named = sorted((p.pk, p.name, p.hidden) for p in active_participants(scene))
    digest = sha256(repr(named).encode()).hexdigest()[:8]
    return f"{scene.challenges_done}-{scene.challenges_done_seq}-{digest}"


def recount(scene_id: int) -> None:
    """Count the scene's finished challenges afresh from its rows into the scene's row: for
    rows written outside the steps, which keep the count themselves (a bulk import, a test's
    or the bench's history). A scan of the night's rows: never on a tap."""
    done = Challenge.objects.filter(scene=scene_id).exclude(still_open_q()).count()
    Scene.objects.filter(pk=scene_id).update(challenges_done=done, challenges_done_seq=F("seq"))


def _open_ones(scene: Scene, listed: list[tuple[int, int]]) -> dict[int, Challenge]:
    """The open rows of ``listed`` (pk, step) by pk: those the phones' list of this rendering
    read already (:func:`reads.phone_rows` holds every open one, whole, at the same commit)
    taken from it, the others read whole by pk in one query."""
    if not listed:
        return {}
    read = known(("challenge_rows", scene.pk)) or {}
    found = {pk: read[pk] for pk, step in listed if pk in read and read[pk].step == step}
    wanted = [pk for pk, _ in listed if pk not in found]
    if wanted:
        found |= {row.pk: row for row in _open_rows.run(scene.pk, wanted)}
    return found


def _listed(scene_id: int) -> QuerySet[Challenge]:
    """The board's list (its SQL built once per process: config.prepared): the pk, step and
    status of the still open ones (and those waiting on a choice, W8) and of the ``SHOWN``
    newest finished ones (those from the ``SHOWN``-th newest on, walked back by the index on
    ``(scene, id)``), and whether each is finished."""
    done = ExpressionWrapper(~still_open_q(), output_field=BooleanField())
    finished_ones = Challenge.objects.filter(scene=scene_id).exclude(still_open_q())
    cut = finished_ones.order_by("-pk").values("pk")[SHOWN - 1 : SHOWN]
    rows = (
        Challenge.objects.filter(scene=scene_id)
        .filter(still_open_q() | Q(pk__gte=Coalesce(Subquery(cut), 0)))
        .annotate(done=done)
        .order_by("pk")
    )
    return rows.values_list("id", "step", "status", "done")


def _whole(scene_id: int, ids: list[int]) -> QuerySet[Challenge]:
    return Challenge.objects.filter(scene=scene_id, pk__in=ids)


_board_list, _open_rows = PreparedValues(_listed), Prepared(_whole, model=Challenge)


@dataclass(frozen=True)
class EarlierPage:
    """A page of the fold: ``rows`` newest first, ``more`` how many older ones are left
    after them and ``before`` the pk the next page starts below (None: no more)."""

    rows: list[Challenge]
    more: int
    before: int | None


def earlier(scene: Scene, before: int | None = None, through: int | None = None) -> EarlierPage:
    """The finished challenges older than the board's ``SHOWN`` newest, newest first: a
    ``PAGE`` of them below the pk ``before`` (None: the first page), or with ``through``
    every one down to that pk (the pages a tablet had loaded, asked again after a change:
    at most ``THROUGH`` of them). Bounded reads: a page's pks and steps with how many are
    left (a window), then the rows not held (as the board's)."""
    base = Challenge.objects.filter(scene=scene.pk).exclude(still_open_q())
    if before is None:
        cut = list(base.order_by("-pk").values_list("pk", flat=True)[SHOWN : SHOWN + 1])
        if not cut:
            return EarlierPage([], 0, None)
        below = base.filter(pk__lte=cut[0])
    else:
        below = base.filter(pk__lt=before)
    most = PAGE
    if through is not None and before is None:
        most = max(PAGE, min(THROUGH, below.filter(pk__gte=through).count()))
    listed = list(
        below.annotate(total=Window(Count("pk")))
        .order_by("-pk")
        .values_list("pk", "step", "total")[:most]
    )
    if not listed:
        return EarlierPage([], 0, None)
    rows = _finished_rows(scene.pk, [(pk, step) for pk, step, _ in listed])
    _attach(scene, rows)
    more = listed[0][2] - len(listed)
    return EarlierPage(rows, more, listed[-1][0] if more > 0 else None)


def _finished_rows(scene_id: int, listed: list[tuple[int, int]]) -> list[Challenge]:
    """The rows of ``listed`` (pk, step), in that order: each from :data:`finished.rows` when
    it holds that step, the others read whole in one query (and kept)."""
    found: dict[int, Challenge] = {}
    for pk, step in listed:
        kept = finished.rows.find((pk, step))
        if kept is not None:
            found[pk] = copy_row(kept)
    wanted = [pk for pk, _ in listed if pk not in found]
    if wanted:
        for row in Challenge.objects.filter(scene=scene_id, pk__in=wanted):
            if not row.is_open:
                kept = copy_row(row)
                kept.token = reads.step_token(kept)  # type: ignore[attr-defined]
                finished.rows.keep((row.pk, row.step), kept)
            found[row.pk] = row
    return [found[pk] for pk, _ in listed if pk in found]


def _attach(scene: Scene, rows: list[Challenge]) -> None:
    """The scene and the sides of ``rows`` set on them (as :func:`reads.scene_rows` does: the
    scene's present participants as a change's renderings read them, the others taken out of
    the scene since in one query, :func:`reads.sides_of`); and the token a form of a card
    posts."""
    sides = reads.sides_of(scene, rows)
    for row in rows:
        related = row._state.fields_cache
        related["scene"] = scene
        related["attacker"] = sides[row.attacker_id]
        related["defender"] = sides.get(row.defender_id) if row.defender_id is not None else None
        if "token" not in row.__dict__:
            row.token = reads.step_token(row)  # type: ignore[attr-defined]
