"""A challenge tap's answer is what the pushes of its commit rendered for the same viewer
(combat.replies): the phone's prompts cut from its own part's push, the tablet's challenge
board as pushed; each with the request's own CSRF token, each equal to a fresh render."""

from __future__ import annotations

from copy import deepcopy as copy_of
from pathlib import Path

import pytest
from django.db.models import F
from django.middleware.csrf import _does_token_match
from django.shortcuts import render
from django.test import RequestFactory
from django.test.signals import template_rendered
from django.urls import reverse

from combat import fragments, live, render_cache, replies, selectors
from combat.challenges import views
from combat.models import Challenge, Presence, Scene
from tests.combat.challenges.conftest import token_for
from tests.combat.conftest import TOKEN, renders_of, without_tokens
from tests.conftest import client_for

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def rendered(monkeypatch) -> list[str]:
    return renders_of(monkeypatch, views)


@pytest.fixture
def sent(monkeypatch) -> list[str]:
    out: list[str] = []
    monkeypatch.setattr(live, "_send", lambda group, html: out.append(html))
    return out


def _act(t, client, ch, **data):
    ch = Challenge.objects.get(pk=ch.pk)
    data.setdefault("token", token_for(ch, data.get("action", "")))
    return client.post(reverse("challenge_act", args=[t.scene.pk, ch.pk]), data, **HX)


def _fresh(client, t) -> str:
    """The region as a fresh render shows it now (its GET: no push to take it from)."""
    return client.get(reverse("challenge_region", args=[t.scene.pk])).content.decode()


@pytest.mark.django_db(transaction=True)
def test_each_phone_answer_is_its_pushed_prompts_with_the_requests_token(classic, rendered, sent):
    t = classic
    a, d = client_for(t.a_user), client_for(t.d_user)
    start = reverse("challenge_start", args=[t.scene.pk])
    data = {"attacker": t.a.pk, "defender": t.d.pk, "mode": "contested", "key": "k-start-01"}
    data["seq"] = t.refresh().scene.seq
    r = a.post(start, {**data, "bid": "physical:Strong", "effect": "shove"}, **HX)
    ch = Challenge.objects.get()
    answers = [(a, r)]
    answers.append((d, _act(t, d, ch, action="answer", side="defender", answer="bid", bid="Tough")))
    answers.append((a, _act(t, a, ch, action="throw", side="attacker", throw="rock")))
    answers.append((d, _act(t, d, ch, action="throw", side="defender", throw="scissors")))
    answers.append((d, _act(t, d, ch, action="accept", side="defender")))
    assert "Marcus wins" in answers[-1][1].content.decode()
    assert rendered == [], "every answer taken from its push"
    for client, r in answers:
        html = r.content.decode()
        assert r.status_code == 200 and html.lstrip().startswith('<div id="challenge-prompts"')
        assert replies.MARK not in html
        tokens = set(TOKEN.findall(html))
        assert tokens, "the forms in the answer carry a token"
        secret = client.cookies["csrftoken"].value
        assert all(_does_token_match(token, secret) for token in tokens)
    # the last answer is the region now, as a fresh render shows it
    assert without_tokens(answers[-1][1].content.decode()) == without_tokens(_fresh(d, t))
    assert not [h for h in sent if "csrfmiddlewaretoken" in h or replies.MARK in h]


@pytest.mark.django_db(transaction=True)
def test_the_tablets_answer_is_the_pushed_challenge_board(classic, rendered):
    t = classic
    Presence.objects.create(scene=t.scene, user=t.st, channel_name="test.tablet")
    ch = t.start(category="physical", bid="Strong")
    st = client_for(t.st)
    url = reverse("challenge_st", args=[t.scene.pk, ch.pk])
    r = st.post(url, {"action": "void", "text": "wrong target", "key": "st-void-0001"}, **HX)
    assert r.status_code == 200, r.content.decode()
    assert rendered == [], "taken from the board's push"
    html = r.content.decode()
    assert html.lstrip().startswith('<div id="challenge-board"') and "wrong target" in html
    assert without_tokens(html) == without_tokens(_fresh(st, t))
    secret = st.cookies["csrftoken"].value
    assert all(_does_token_match(token, secret) for token in TOKEN.findall(html))


@pytest.mark.django_db
def test_an_answer_after_the_scene_moved_on_is_rendered_at_its_seq(classic, rendered):
    """A write after the push (another change) drops what the push rendered: the answer is
    the region as it is now, with the scene's seq of now (crossing.js compares it)."""
    t = classic
    t.start(category="physical", bid="Strong")
    request = RequestFactory().post("/", **HX)
    request.user = t.a_user
    users = [t.a_user.pk, t.d_user.pk]

    @render_cache.one_request
    def tap(move: bool) -> str:
        list(fragments.scene_change_parts(t.scene.pk, private_user_ids=users, own_parts=False))
        if move:
            Scene.objects.filter(pk=t.scene.pk).update(players_seq=F("players_seq") + 5)
        scene = Scene.objects.get(pk=t.scene.pk)
        return views._region(request, scene, False).content.decode()

    kept = tap(move=False)
    assert rendered == []
    moved = tap(move=True)
    assert rendered == [views.PROMPTS]
    seq = Scene.objects.get(pk=t.scene.pk).players_seq
    assert f'data-seq="{seq}"' in moved and f'data-seq="{seq}"' not in kept
    assert without_tokens(moved) == without_tokens(_fresh(client_for(t.a_user), t))


@pytest.mark.django_db
def test_a_refusal_is_rendered_with_its_sentence(classic, rendered):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    a = client_for(t.a_user)
    r = _act(t, a, ch, action="throw", side="attacker", throw="rock", token="stale")
    assert r.status_code == 409 and rendered == [views.PROMPTS]


def _pushed_then_answered(t, user, *, own_parts: bool) -> str:
    """One tap's renderings: the pushes of the scene change for both players (their own parts
    whole, or as their pieces), then the answer of ``user``'s phone from them."""
    request = RequestFactory().post("/", **HX)
    request.user = user

    @render_cache.one_request
    def tap() -> str:
        users = [t.a_user.pk, t.d_user.pk]
        parts = fragments.scene_change_parts(
            t.scene.pk, private_user_ids=users, own_parts=own_parts
        )
        list(parts)
        scene = Scene.objects.get(pk=t.scene.pk)
        return views._region(request, scene, False).content.decode()

    return tap()


# wrapper -> (before the partial, after it, what it renders before the partial's own text)
WRAPPERS = {
    "a tag": ('<div class="wrapped">', "</div>", '<div class="wrapped">'),
    "a block": ("{% with wrapped=True %}", "{% endwith %}", ""),
}


@pytest.fixture(params=list(WRAPPERS))
def wrapped_prompts(request, settings, tmp_path) -> str:
    """``combat/challenges/prompts.html`` wrapped in another tag (a template found first);
    what the wrapper renders before it."""
    before, after, shown = WRAPPERS[request.param]
    source = Path(settings.BASE_DIR) / "templates" / views.PROMPTS
    copy = tmp_path / views.PROMPTS
    copy.parent.mkdir(parents=True)
    copy.write_text(before + source.read_text() + after)
    templates = copy_of(settings.TEMPLATES)
    templates[0]["DIRS"] = [tmp_path, *templates[0]["DIRS"]]
    settings.TEMPLATES = templates
    return shown


@pytest.mark.parametrize("own_parts", [True, False], ids=["whole part", "pieces"])
@pytest.mark.django_db
def test_the_answer_is_the_pushed_prompts_whatever_wraps_them(
    classic, rendered, wrapped_prompts, own_parts
):
    """The prompts are kept whole as the push included them, not cut out of the own part by
    their root tag: a wrapper around the partial's root is in the answer, as on the page."""
    t = classic
    t.start(category="physical", bid="Strong")
    answer = _pushed_then_answered(t, t.a_user, own_parts=own_parts)
    assert rendered == [], "taken from the push"
    assert answer.startswith(wrapped_prompts) and 'id="challenge-prompts"' in answer
    assert without_tokens(answer) == without_tokens(_fresh(client_for(t.a_user), t))


@pytest.mark.django_db
def test_a_tap_renders_each_players_prompts_once(classic, rendered):
    """Each player's prompts are rendered once, by the push of their part (one audience
    each); the answer takes the piece that push kept, it renders them not again."""
    t = classic
    t.start(category="physical", bid="Strong")
    seen: list[str] = []

    def count(sender, template, **kwargs):
        seen.append(template.name)

    template_rendered.connect(count)
    try:
        answer = _pushed_then_answered(t, t.d_user, own_parts=False)
    finally:
        template_rendered.disconnect(count)
    assert seen.count(views.PROMPTS) == 2 and rendered == []
    assert without_tokens(answer) == without_tokens(_fresh(client_for(t.d_user), t))


@pytest.mark.django_db
def test_a_page_keeps_no_prompts(classic, rendered):
    """Only a push's rendering (the mark in the token's place) is kept: a page's own part,
    with its request's token, leaves nothing for an answer to take."""
    t = classic
    t.start(category="physical", bid="Strong")
    request = RequestFactory().get("/")
    request.user = t.a_user
    scene = Scene.objects.get(pk=t.scene.pk)
    with render_cache.RenderCache().active():
        context = {**selectors.private_state(scene, t.a_user), "oob": False}
        html = render(request, f"{fragments.PHONE}#private", context).content.decode()
        assert 'id="challenge-prompts"' in html
        assert replies.kept(("include", views.PROMPTS, t.a_user.pk)) is None
        assert replies.included(request, t.a_user.pk, views.PROMPTS) is None
