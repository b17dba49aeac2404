"""What each feature's region of a scene's screens reads, gathered before the render.

A screen is the scene's partials and the features' includes (challenges, rounds, chases). The
scene's selectors (:mod:`combat.selectors`) read what every region shows before anything is
rendered, so a render runs no query of its own and its query count stays bounded; the
features' template tags only hand the read data to their include. A feature says what its
regions read with :func:`provide` (``combat.apps`` registers them once the apps are loaded:
the scene's selectors never import a feature's modules).

Audiences: ``board`` (the storytellers' board, by region: a clock tap reads no fight),
``public`` (what every player of the scene sees) and ``private`` (one player's own part: the
context holds ``player``).

Each read is made once per change's renderings (:func:`combat.render_cache.cached`): a
private read once per player, a board read once per what it takes from the context (``key``),
so the answer of the tap that made the change (the same ``seq``) reads none of them again.
What a read returns is shared by every rendering of the change: nothing changes it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from combat.models import Scene
from combat.render_cache import cached

Audience = Literal["board", "public", "private"]
Reader = Callable[[Scene, Mapping[str, Any]], Any]
Key = Callable[[Mapping[str, Any]], Hashable]


@dataclass(frozen=True)
class Read:
    name: str  # the context key the feature's template tag hands to its include
    audience: Audience
    read: Reader  # (scene, the context read so far) -> the region's data
    region: str = ""  # the board region it belongs to (board reads only)
    key: Key | None = None  # what of the context the read depends on (None: only the player)

    def depends(self, context: Mapping[str, Any]) -> Hashable:
        """What of the context the read depends on besides the scene."""
        if self.key is not None:
            return self.key(context)
        if self.audience == "private":  # the player's own
            return getattr(context.get("player"), "pk", None)
        return None

    def once(self, scene: Scene, context: Mapping[str, Any]) -> Any:
        """The read, once per change's renderings (:mod:`combat.render_cache`)."""
        key = ("region", self.name, scene.pk, self.depends(context))
        return cached(key, lambda: self.read(scene, context))


_READS: dict[str, Read] = {}


def provide(
    name: str, audience: Audience, read: Reader, *, region: str = "", key: Key | None = None
) -> None:
    """Register what ``name`` reads for ``audience`` (once per name). ``key``: what the read
    takes from the context besides the scene (and, for a private read, the player), so that
    a read is shared only by renderings that would read the same."""
    if audience == "board" and not region:
        raise ValueError(f"{name}: a board read names its region")
    _READS[name] = Read(name=name, audience=audience, read=read, region=region, key=key)


def read(
    scene: Scene,
    audience: Audience,
    context: Mapping[str, Any],
    regions: Collection[str] | None = None,
) -> dict[str, Any]:
    """Every registered read of ``audience`` (of the board's ``regions`` only, ``None``: all)."""
    found: dict[str, Any] = {}
    for entry in _READS.values():
        if entry.audience != audience:
            continue
        if regions is not None and entry.region not in regions:
            continue
        found[entry.name] = entry.once(scene, {**context, **found})
    return {**NO_REFUSAL, **found}


# The sentence each panel shows when a tap's answer carries a refusal (combat.posts): a tap's
# answer sets its own; every other rendering (a push, a page) shows none, and says so, since
# a name a template cannot find costs four exceptions (issue 21).
NO_REFUSAL = {"error": "", "challenge_error": "", "round_error": "", "chase_error": ""}


# Flags read with the scene's row (combat.fragments.load): name -> the rows whose existence it
# says, a queryset filtered by ``OuterRef("pk")`` (the scene).
_FLAGS: dict[str, Callable[[], Any]] = {}
# flag name -> the board region that shows sheets only while the flag's rows exist
_SHEETS_SHOWN: dict[str, str] = {}


def flag(name: str, rows: Callable[[], Any], *, sheets_shown_in: str = "") -> None:
    """Have the scene's row, where :func:`combat.fragments.load` reads it, say whether ``rows``
    exist (an ``Exists`` in the same query), as ``scene.<name>``: a feature whose region has
    nothing to show (no fight, no chase) then skips its read (:func:`says_none`).
    ``sheets_shown_in``: the board region that shows anything of a sheet (a pool, health)
    only while the rows exist; without them it shows names at most (a start form), so a
    sheet's change does not render it (:func:`sheetless`)."""
    _FLAGS[name] = rows
    if sheets_shown_in:
        _SHEETS_SHOWN[name] = sheets_shown_in


def flags() -> dict[str, Any]:
    """The annotations of the scene's row: each registered flag's ``Exists``."""
    from django.db.models import Exists

    return {name: Exists(rows()) for name, rows in _FLAGS.items()}


def says_none(scene: Scene, name: str) -> bool:
    """Whether the scene's row, read with its flags, says the flag's rows do not exist (a
    scene read without them says nothing: the feature reads)."""
    return getattr(scene, name, None) is False


def sheetless(scene: Scene) -> set[str]:
    """The board regions that show nothing of a sheet in ``scene`` now: those whose flag, on
    the scene's row, says its rows do not exist (no fight running, no chase ever)."""
    return {region for name, region in _SHEETS_SHOWN.items() if says_none(scene, name)}


def read_one(name: str, scene: Scene, context: Mapping[str, Any]) -> Any:
    """One read, for a feature's include rendered on its own (a feature's view answering
    with its region alone); a scene's screens have it read already."""
    return _READS[name].once(scene, context)
