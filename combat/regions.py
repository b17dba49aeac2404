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
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from combat.models import Scene

Audience = Literal["board", "public", "private"]
Reader = Callable[[Scene, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class Read:
    name: str  # the context key the feature's template tag hands to its include
    audience: Audience
    read: Reader  # (scene, the context read so far) -> the region's data
    region: str = ""  # the board region it belongs to (board reads only)


_READS: dict[str, Read] = {}


def provide(name: str, audience: Audience, read: Reader, *, region: str = "") -> None:
    """Register what ``name`` reads for ``audience`` (once per name)."""
    if audience == "board" and not region:
        raise ValueError(f"{name}: a board read names its region")
    _READS[name] = Read(name=name, audience=audience, read=read, region=region)


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
        found[entry.name] = entry.read(scene, {**context, **found})
    return found


def read_one(name: str, scene: Scene, context: Mapping[str, Any]) -> Any:
    """One read, for a feature's include rendered on its own (a feature's view answering
    with its region alone); a scene's screens have it read already."""
    return _READS[name].read(scene, context)
