"""A round tap's answer is what the pushes of its commit rendered (combat.replies): the
storyteller's whole board is the board's frame around the regions its push rendered, a
player's own part the part pushed whole; each with the request's own CSRF token, each
equal to a fresh render of the same seq."""

from __future__ import annotations

import pytest
from django.middleware.csrf import _does_token_match
from django.shortcuts import render
from django.test import RequestFactory

from combat import board, fragments, live, render_cache, replies, selectors
from combat.models import Presence, Scene
from combat.rounds import views
from tests.combat.conftest import TOKEN, renders_of, without_tokens
from tests.conftest import client_for

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def rendered(monkeypatch) -> list[str]:
    return renders_of(monkeypatch, views)


def _fresh_board(user, scene_pk: int) -> str:
    request = RequestFactory().get("/")
    request.user = user
    scene = Scene.objects.get(pk=scene_pk)
    with render_cache.RenderCache().active():
        context = {**board.board_state(scene), "oob": False}
        return render(request, f"{fragments.TABLET}#board", context).content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_storytellers_answers_are_the_board_pushed_around_them(cast, rendered, monkeypatch):
    sent: list[str] = []
    monkeypatch.setattr(live, "_send", lambda group, html: sent.append(html))
    Presence.objects.create(scene=cast.scene, user=cast.storyteller, channel_name="test.tablet")
    st = client_for(cast.storyteller)
    scene = cast.scene.pk
    jane, frank = cast.p["Jane"].pk, cast.p["Frank"].pk
    taps = [("start", {"who": [jane, frank]})]
    taps += [
        ("initiative", {"participant": pk, "roll": roll}) for pk, roll in ((jane, 7), (frank, 3))
    ]
    taps.append(("begin", {}))
    for slug, data in taps:
        r = st.post(f"/scenes/{scene}/combat/{slug}/", data, **HX)
        assert r.status_code == 200, r.content.decode()
        html = r.content.decode()
        assert html.lstrip().startswith('<div id="scene-board"') and "hx-swap-oob" not in html
        assert without_tokens(html) == without_tokens(_fresh_board(cast.storyteller, scene)), slug
        assert replies.MARK not in html
        tokens = set(TOKEN.findall(html))
        assert tokens and all(_does_token_match(t, st.cookies["csrftoken"].value) for t in tokens)
    assert rendered == [], "every answer taken from the board's push"
    seq = Scene.objects.get(pk=scene).seq
    assert f'id="scene-board" class="board" data-seq="{seq}"' in html
    assert not [h for h in sent if "csrfmiddlewaretoken" in h or replies.MARK in h]


@pytest.mark.django_db
def test_without_a_pushed_board_the_answer_is_rendered(cast, rendered):
    """No storyteller's socket open: no board pushed, the answer renders it."""
    r = client_for(cast.storyteller).post(
        f"/scenes/{cast.scene.pk}/combat/start/",
        {"who": [cast.p["Jane"].pk, cast.p["Frank"].pk]},
        **HX,
    )
    assert r.status_code == 200 and rendered == [f"{fragments.TABLET}#board"]


@pytest.mark.django_db
def test_a_players_answer_is_their_part_pushed_whole(cast, rendered):
    user = cast.users["Jane"]
    request = RequestFactory().post("/", **HX)
    request.user = user

    @render_cache.one_request
    def tap() -> tuple[str, str]:
        scene = Scene.objects.get(pk=cast.scene.pk)
        pushed = fragments.private_state(scene, user)
        return pushed, views._reply(request, scene, False).content.decode()

    pushed, answer = tap()
    assert rendered == []
    assert 'hx-swap-oob="true"' in pushed.split(">")[0]
    assert "hx-swap-oob" not in answer.split(">")[0] and "csrfmiddlewaretoken" not in pushed
    scene = Scene.objects.get(pk=cast.scene.pk)
    with render_cache.RenderCache().active():
        context = {**selectors.private_state(scene, user), "oob": False}
        fresh = render(request, f"{fragments.PHONE}#private", context).content.decode()
    assert without_tokens(answer) == without_tokens(fresh) and replies.MARK not in answer


@pytest.mark.django_db(transaction=True)
def test_a_board_answer_renders_only_the_regions_its_change_did_not_push(cast, monkeypatch):
    """Removing someone pushes the regions that show the scene's people (not the clock): the
    answer renders the rest, not the whole board, and is the board a fresh render shows."""
    from combat import posts

    whole: list[str] = []
    real = posts.render
    monkeypatch.setattr(
        posts, "render", lambda r, t, *a, **k: whole.append(t) or real(r, t, *a, **k)
    )
    monkeypatch.setattr(live, "_send", lambda group, html: None)
    Presence.objects.create(scene=cast.scene, user=cast.storyteller, channel_name="test.tablet")
    st = client_for(cast.storyteller)
    url = f"/scenes/{cast.scene.pk}/participants/{cast.p['Teddy'].pk}/remove/"
    r = st.post(url, {}, **HX)
    assert r.status_code == 200, r.content.decode()
    assert whole == [], "the board's frame around the regions, pushed or rendered now"
    html = r.content.decode()
    assert 'id="clock-panel"' in html and 'id="log-panel"' in html
    assert without_tokens(html) == without_tokens(_fresh_board(cast.storyteller, cast.scene.pk))


def _fresh_part(user, scene_pk: int) -> str:
    request = RequestFactory().get("/")
    request.user = user
    scene = Scene.objects.get(pk=scene_pk)
    with render_cache.RenderCache().active():
        context = {**selectors.private_state(scene, user), "oob": False}
        return render(request, f"{fragments.PHONE}#private", context).content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_players_taps_are_answered_with_their_pushed_prompts_and_log(cast, rendered):
    """A round step pushes a player's prompts and log, not their whole part: a phone's tap is
    answered with the part's frame (the sheets, rendered) around those pieces, as a fresh
    render of the same seq shows it, with the request's own token."""
    from combat.models import Combat
    from combat.rounds.initiative import combat_begin_round, combat_initiative
    from combat.rounds.starting import combat_start
    from combat.rounds.tokens import state_token

    jane, frank = cast.p["Jane"], cast.p["Frank"]
    combat = combat_start(scene=cast.scene, by=cast.storyteller, participants=[jane, frank])
    combat_initiative(combat=combat, by=cast.storyteller, participant=jane, roll=7)
    phone = client_for(cast.users["Frank"])
    url = f"/scenes/{cast.scene.pk}/combat/"
    data = {"participant": frank.pk, "roll": 3, "from": "phone", "key": "ini-frank"}
    answers = [phone.post(f"{url}initiative/", data, **HX)]
    combat_begin_round(combat=combat, by=cast.storyteller)
    data = {"participant": frank.pk, "action": "dodge", "from": "phone", "key": "dc-frank"}
    data["token"] = state_token(Combat.objects.get(pk=combat.pk))
    answers.append(phone.post(f"{url}declare/", data, **HX))
    for r in answers:
        assert r.status_code == 200, r.content.decode()
    assert rendered == [], "every answer taken from the pieces pushed"
    html = answers[-1].content.decode()
    assert html.lstrip().startswith('<section id="scene-private"') and "hx-swap-oob" not in html
    assert "declared: <b" in html and 'id="sheet-' in html
    assert without_tokens(html) == without_tokens(_fresh_part(cast.users["Frank"], cast.scene.pk))
    assert replies.MARK not in html
    tokens = set(TOKEN.findall(html))
    assert all(_does_token_match(t, phone.cookies["csrftoken"].value) for t in tokens)


@pytest.mark.django_db
def test_a_refused_phone_tap_renders_its_answer(cast, rendered):
    """A refusal pushes nothing: the part is rendered, the sentence in it."""
    combat_start_data = {"participant": cast.p["Frank"].pk, "roll": 3, "from": "phone"}
    r = client_for(cast.users["Frank"]).post(
        f"/scenes/{cast.scene.pk}/combat/initiative/", combat_start_data, **HX
    )
    assert rendered == [f"{fragments.PHONE}#private"] and r.status_code != 200
