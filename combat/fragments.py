"""Rendering a scene's fragments once per audience, from the same partials as the pages.

The tablet page (``combat/scene_tablet.html``) and the phone page (``combat/scene_phone.html``)
are built of named partials; a push sends the same partials with ``hx-swap-oob`` so htmx's
websocket extension swaps them in by id. Every fragment root carries an id and the scene's
``seq`` (``data-seq``), so a phone that sees a gap knows to resync.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.template.loader import render_to_string

from combat import selectors
from combat.models import Scene

TABLET = "combat/scene_tablet.html"
PHONE = "combat/scene_phone.html"


@dataclass(frozen=True)
class SceneFragments:
    storytellers: str
    players: str
    private: dict[int, str] = field(default_factory=dict)


def _partial(template: str, name: str, context: dict[str, Any], *, oob: bool = True) -> str:
    return render_to_string(f"{template}#{name}", {**context, "oob": oob})


def _load(scene_id: int) -> Scene | None:
    return (
        Scene.objects.select_related("chronicle", "storyteller", "game_night")
        .filter(pk=scene_id)
        .first()
    )


def storyteller_state(scene: Scene) -> str:
    """Everything the storyteller's board shows live."""
    return _partial(TABLET, "board", selectors.board_state(scene))


def players_state(scene: Scene) -> str:
    """The public part every player of the scene sees."""
    return _partial(PHONE, "public", selectors.public_state(scene))


def private_state(scene: Scene, user) -> str:
    """One player's own part."""
    return _partial(PHONE, "private", selectors.private_state(scene, user))


def scene_change_fragments(
    scene_id: int, *, private_user_ids: Iterable[int] = ()
) -> SceneFragments | None:
    scene = _load(scene_id)
    if scene is None:
        return None
    ids = list(private_user_ids)
    users = get_user_model().objects.filter(pk__in=ids) if ids else []
    return SceneFragments(
        storytellers=storyteller_state(scene),
        players=players_state(scene),
        private={user.pk: private_state(scene, user) for user in users},
    )


def presence_fragment(scene_id: int) -> str:
    scene = _load(scene_id)
    return storyteller_state(scene) if scene else ""
