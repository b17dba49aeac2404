"""Every round endpoint, walked by someone outside the scene: nothing changes (issue 11)."""

from __future__ import annotations

import pytest
from django.test import Client

from combat.models import Combat, Scene
from combat.rounds.urls import _ACTIONS
from tests.combat.rounds.test_views import _post
from tests.conftest import client_for
from tests.factories import UserFactory

SLUGS = [slug for slug, _view in _ACTIONS]


def _state(scene: Scene) -> tuple:
    scene.refresh_from_db()
    return scene.seq, list(Combat.objects.values())


@pytest.mark.parametrize("slug", SLUGS)
def test_an_outsider_or_a_visitor_changes_nothing_in_a_fight(cast, slug):
    st = client_for(cast.storyteller)
    who = [cast.p[n].pk for n in ("Jane", "Frank", "Teddy")]
    assert _post(st, cast.scene, "start", who=who).status_code == 200
    before = _state(cast.scene)
    data = {"participant": cast.p["Jane"].pk, "who": who, "action": "none", "key": "k" * 32}

    visitor = _post(Client(), cast.scene, slug, **data)
    assert visitor.status_code == 302 and "/accounts/login/" in visitor["Location"]

    outsider = _post(client_for(UserFactory(username="outsider")), cast.scene, slug, **data)
    assert outsider.status_code in (403, 404), (slug, outsider.status_code)
    assert _state(cast.scene) == before
