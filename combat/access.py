"""Who is posting from which screen, and who may name which participant of a scene.

:func:`screen_for` is the one way of telling the tablet from a phone: a user who runs the
scene posts from the tablet unless the form says ``from=phone`` (a storyteller who also plays
a character there); anyone else must play in it. :func:`participant_named_by` is the one
resolver for every id a phone posts.

For anyone but the scene's storytellers a hidden participant does not exist: the queryset
below leaves it out in the same query that finds the others, so a forged id of a hidden NPC
answers exactly as an id that names nobody (same status, same sentence), and no refusal,
card or log line can be reached with it.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404, HttpRequest

from characters.access import chronicles_run_by
from combat import steps
from combat.models import Participant, Scene
from combat.steps import Refused
from config.prepared import Prepared

NO_SCENE = "No such scene for you."


def _flags(user: AbstractBaseUser) -> tuple[bool, bool, bool]:
    """What the storyteller rule (``characters.access``) reads of a user besides its id: a
    query asking it has one shape for each of these."""
    return (bool(user.is_active), bool(user.is_superuser), bool(user.is_staff))


def _stand_in(flags: tuple[bool, bool, bool], pk: int) -> AbstractBaseUser:
    """A user with ``flags`` and the id ``pk`` (never saved): builds a prepared query."""
    active, superuser, staff = flags
    return get_user_model()(pk=pk, is_active=active, is_superuser=superuser, is_staff=staff)


def screen_asked(
    user_pk: int,
    *,
    flags: tuple[bool, bool, bool],
    from_phone: bool,
    scene_id: str = "pk",
    chronicle_id: str = "chronicle_id",
) -> dict[str, Any]:
    """What :func:`screen_for` asks of a scene for the user ``user_pk`` whose flags are
    ``flags`` (what the storyteller rule reads of a user besides its id), as annotations of a
    read of the scene, or of a row of the scene's (``scene_id``, ``chronicle_id``: where the
    read's row names them)."""
    runs = chronicles_run_by(_stand_in(flags, user_pk))
    may_run = not runs.query.is_empty()
    mine = Participant.objects.filter(scene=OuterRef(scene_id), character__player_id=user_pk)
    asked: dict[str, Any] = {}
    if may_run:
        asked["runs"] = Exists(runs.filter(pk=OuterRef(chronicle_id)))
    # a superuser's ``runs`` names no user: asking whether they play puts the id in the SQL
    # (a prepared read's every value must be there); a superuser's tablet reads it unused
    if from_phone or not may_run or flags[1]:
        asked["plays"] = Exists(mine)
        asked["present"] = Exists(mine.filter(removed_at__isnull=True))
    return asked


def _scene_read(
    pk: int, user_pk: int, *, flags: tuple[bool, bool, bool], from_phone: bool, lock: bool
) -> QuerySet[Scene]:
    """The scene ``pk`` with what :func:`screen_for` asks of it for the user ``user_pk``
    whose flags are ``flags`` (what the storyteller rule reads of a user besides its id)."""
    asked = screen_asked(user_pk, flags=flags, from_phone=from_phone)
    found = Scene.objects.filter(pk=pk).annotate(**asked).select_related("chronicle")
    if lock:
        found = found.select_for_update(of=("self",))
    return found.order_by()[:1]  # by its key: nothing to order


_SCENE_READS: Prepared[Scene] = Prepared(_scene_read, model=Scene)


def screen_for(request: HttpRequest, pk: int, *, lock: bool = False) -> tuple[Scene, bool]:
    """The scene ``pk`` and whether the post comes from its tablet (``True``) or a phone; a
    scene the user neither runs nor plays in is a 404 (another chronicle's is not there).

    Read with the scene, in one query: whether the user runs it (when they may run any) and,
    for a phone, whether they play in it (or did: a removed player sees they were removed)
    and still do (``scene.present``, a phone's post asks). ``lock``: inside a tap's
    transaction (:func:`combat.steps.request_transaction`) the read locks the scene and is
    its step's lock (:func:`combat.steps.hold`). The query's SQL is compiled once for each
    shape (:mod:`config.prepared`)."""
    user = request.user
    if not user.is_authenticated:
        raise Http404(NO_SCENE)
    from_phone = request.POST.get("from") == "phone"
    scene = _SCENE_READS.first(
        int(pk), user.pk, flags=_flags(user), from_phone=from_phone, lock=lock
    )
    if scene is None:
        raise Http404(NO_SCENE)
    return screen_of(request, scene, from_phone=from_phone, lock=lock)


def screen_read(request: HttpRequest) -> tuple[int, dict[str, Any]] | None:
    """What a read that asks what :func:`screen_for` asks (:func:`screen_asked`) takes for
    ``request``'s user: its id (a value: one plan serves every user) and the shape's options;
    None: nobody logged in."""
    user = request.user
    if not user.is_authenticated:
        return None
    from_phone = request.POST.get("from") == "phone"
    return user.pk, {"flags": _flags(user), "from_phone": from_phone}


def screen_of(
    request: HttpRequest, scene: Scene, *, from_phone: bool, lock: bool
) -> tuple[Scene, bool]:
    """:func:`screen_for`'s answer for ``scene``, read with :func:`screen_asked`'s
    annotations (``lock``: read with ``select_for_update``, and held for the step)."""
    user = request.user
    scene.runs = bool(getattr(scene, "runs", False))
    scene.run_by = (user.pk, scene.runs)  # the storyteller rule's answer, asked with the scene
    if scene.runs and not from_phone:
        return (steps.hold(scene) if lock else scene), True
    if not hasattr(scene, "plays"):  # a storyteller of another chronicle: do they play here?
        removed = list(
            Participant.objects.filter(scene=scene, character__player=user).values_list(
                "removed_at", flat=True
            )
        )
        scene.plays, scene.present = bool(removed), None in removed
    if not scene.plays:
        raise Http404(NO_SCENE)
    return (steps.hold(scene) if lock else scene), False


#: The one sentence for an id that names no participant this user may name.
NOT_HERE = "That character is not in this scene."


def participants_named_by(
    scene: Scene | int, user: AbstractBaseUser | AnonymousUser
) -> QuerySet[Participant]:
    """The scene's present participants ``user`` may name (one query when evaluated): every
    one for its storytellers, the visible ones for anyone else."""
    scene_id = scene if isinstance(scene, int) else scene.pk
    runs = Q(scene__chronicle__in=chronicles_run_by(user).values("pk"))
    return (
        Participant.objects.filter(scene_id=scene_id, removed_at__isnull=True)
        .filter(Q(hidden=False) | runs)
        .select_related("character")
    )


def participant_named_by(
    scene: Scene | int, user: AbstractBaseUser | AnonymousUser, pk: int | str | None
) -> Participant | None:
    """The participant ``pk`` names for ``user``, ``None`` for no id; an id of nobody (or of a
    hidden NPC, for a player) raises :class:`NotHere`."""
    if pk in (None, ""):
        return None
    if isinstance(pk, str) and not pk.isdigit():
        raise NotHere(NOT_HERE)
    known = getattr(scene, "run_by", None)  # asked with the scene (screen_for)
    if known is not None and known[0] == user.pk:
        found = _NAMED.first(scene.pk, int(pk), runs=known[1])  # type: ignore[union-attr]
    else:
        found = participants_named_by(scene, user).filter(pk=int(pk)).first()
    if found is None:
        raise NotHere(NOT_HERE)
    return found


def _named(scene_id: int, pk: int, *, runs: bool) -> QuerySet[Participant]:
    """:func:`participants_named_by`'s participant ``pk``, for a user who runs the scene's
    chronicle (``runs``: every present one) or not (the visible ones)."""
    found = Participant.objects.filter(scene_id=scene_id, removed_at__isnull=True, pk=pk)
    if not runs:
        found = found.filter(hidden=False)
    found = found.select_related("character")
    return (found if found.ordered else found.order_by("pk"))[:1]  # as ``first()`` reads


# its SQL compiled once for each
_NAMED: Prepared[Participant] = Prepared(_named, model=Participant)


def _named_many(scene_id: int, pks: list[int], *, runs: bool) -> QuerySet[Participant]:
    """:func:`_named` for several ids at once."""
    found = Participant.objects.filter(scene_id=scene_id, removed_at__isnull=True, pk__in=pks)
    if not runs:
        found = found.filter(hidden=False)
    return found.select_related("character").order_by("pk")


_NAMED_MANY: Prepared[Participant] = Prepared(_named_many, model=Participant)


def participants_named_among(
    scene: Scene, user: AbstractBaseUser | AnonymousUser, pks: set[int]
) -> dict[int, Participant]:
    """Of the ids ``pks``, the participants ``user`` may name (:func:`participants_named_by`),
    by id, in one query; its SQL compiled once per number of ids when :func:`screen_for`
    asked the storyteller rule with the scene."""
    known = getattr(scene, "run_by", None)
    if known is not None and known[0] == user.pk:
        found = _NAMED_MANY.run(scene.pk, sorted(pks), runs=known[1])
    else:
        found = list(participants_named_by(scene, user).filter(pk__in=pks))
    return {p.pk: p for p in found}


class NotHere(Refused):
    """An id that names no participant this user may name (hidden ones included)."""
