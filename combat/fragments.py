"""Rendering a scene's fragments once per audience, from the same partials as the pages.

The tablet page (``combat/scene_tablet.html``) and the phone page (``combat/scene_phone.html``)
are built of named partials; a push sends the same partials with ``hx-swap-oob`` so htmx's
websocket extension swaps them in by id. Every push carries the scene's ``seq``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.template.loader import render_to_string

from combat import selectors
from combat.models import Scene


@dataclass(frozen=True)
class SceneFragments:
    storytellers: str
    players: str
    private: dict[int, str] = field(default_factory=dict)


def _partial(template: str, name: str, context: dict) -> str:
    return render_to_string(f"{template}#{name}", {**context, "oob": True})


def storyteller_state(scene: Scene) -> str:
    """Everything the storyteller's board shows live."""
    return _partial("combat/scene_tablet.html", "board", selectors.board_state(scene))


def players_state(scene: Scene) -> str:
    """The public part every player of the scene sees."""
    return _partial("combat/scene_phone.html", "public", selectors.public_state(scene))


def private_state(scene: Scene, user) -> str:
    """One player's own part."""
    return _partial("combat/scene_phone.html", "private", selectors.private_state(scene, user))


def scene_change_fragments(
    scene_id: int, *, private_user_ids: Iterable[int] = ()
) -> SceneFragments | None:
    scene = Scene.objects.select_related("chronicle").filter(pk=scene_id).first()
    if scene is None:
        return None
    users = get_user_model().objects.filter(pk__in=list(private_user_ids))
    return SceneFragments(
        storytellers=storyteller_state(scene),
        players=players_state(scene),
        private={user.pk: private_state(scene, user) for user in users},
    )


def presence_fragment(scene_id: int) -> str:
    scene = Scene.objects.select_related("chronicle").filter(pk=scene_id).first()
    return storyteller_state(scene) if scene else ""
