"""A scene change sends a player's own part as its prompts and log, and the whole part when
the scene's participants changed (issue 21: render what changed, once).

A player's sheets change by the ledger (its push carries the whole part); which characters
they have here, and a removal, change with the scene's participants. Everything else a change
can change in their part is in their prompts and their log.
"""

from __future__ import annotations

import pytest

from combat import fragments, live, services
from combat.models import Participant, Scene
from tests.combat.challenges.conftest import make_table
from tests.factories import CharacterFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    monkeypatch.setattr(live, "_send", lambda group, html: out.append((group, html)))
    return out


def _own(sent, scene_id: int, user) -> list[str]:
    return [html for group, html in sent if group == live.player_group(scene_id, user.pk)]


def _is_pieces(html: str) -> bool:
    return html.lstrip().startswith('<div id="prompts"') and 'id="scene-private"' not in html


def test_a_challenge_step_sends_each_side_its_prompts_and_log(
    sent, django_capture_on_commit_callbacks
) -> None:
    t = make_table("met_classic")
    with django_capture_on_commit_callbacks(execute=True):
        t.start(category="physical", bid="Strong")
    scene = Scene.objects.get(pk=t.scene.pk)
    for user in (t.a_user, t.d_user):
        (html,) = _own(sent, scene.pk, user)
        assert _is_pieces(html)
        assert 'id="player-log"' in html and 'hx-swap-oob="true"' in html
        assert f'data-seq="{scene.players_seq}"' in html
        assert html == fragments.private_pieces(scene, user)
    # the pieces are the page's own: the whole part holds them as they are, less the oob mark
    whole = fragments.private_state(scene, t.d_user)
    assert 'id="challenge-prompts"' in whole and 'id="player-log"' in whole


def test_a_join_sends_the_player_their_whole_part_and_the_next_change_its_pieces(
    sent, django_capture_on_commit_callbacks, chronicle, storyteller, player, character
) -> None:
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    with django_capture_on_commit_callbacks(execute=True):
        services.scene_join(code=scene.join_code, user=player, character=character)
    (joined,) = _own(sent, scene.pk, player)
    assert 'id="scene-private"' in joined and f'id="sheet-{character.pk}"' in joined
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        services.scene_set_ruleset(scene=scene, by=storyteller, ruleset="wod_dice")
    (after,) = _own(sent, scene.pk, player)
    assert _is_pieces(after)


def test_a_removal_sends_the_player_their_whole_part_with_the_removal(
    sent, django_capture_on_commit_callbacks, chronicle, storyteller, player, character
) -> None:
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    services.scene_join(code=scene.join_code, user=player, character=character)
    other = CharacterFactory(chronicle=chronicle, name="Sophia", player=player)
    services.scene_join(code=scene.join_code, user=player, character=other)
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        services.scene_remove(
            scene=Scene.objects.get(pk=scene.pk),
            by=storyteller,
            participant=Participant.objects.get(scene=scene, character=other),
        )
    (html,) = _own(sent, scene.pk, player)
    assert 'id="scene-private"' in html
    assert f'id="sheet-{other.pk}"' not in html and f'id="sheet-{character.pk}"' in html
