"""A phone's consecutive finished cards are rendered as one item, once for the cards they
are (combat/templatetags/finished_cards.py, ``{% finished_run %}``): what is kept is always
what the cards rendered one by one show, never another viewer's, never stale, and a
request's CSRF token is never kept."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from combat import render_cache
from combat.challenges import selectors
from combat.models import Participant
from combat.replies import MARK
from combat.templatetags import finished_cards
from combat.templatetags.finished_cards import FinishedRun, finished_runs

pytestmark = pytest.mark.django_db


def _prompts(t, user, **extra) -> str:
    scene = t.refresh().scene
    with render_cache.RenderCache().active():
        mine = selectors.player_cards(scene, user)
        context = {"scene": scene, "player": user, "challenge_prompts": mine, **extra}
        return render_to_string("combat/challenges/prompts.html", context)


def _one_by_one(t, user, **extra) -> str:
    """The prompts with no run kept or made: each card's item rendered on its own."""
    finished_cards.clear()
    grouped = finished_cards._finished_alone
    finished_cards._finished_alone = lambda c: False  # no card is grouped in a run
    try:
        before = dict(finished_cards.run_stats)
        html = _prompts(t, user, **extra)
        assert finished_cards.run_stats == before  # no run rendered
        return html
    finally:
        finished_cards._finished_alone = grouped


def test_finished_cards_are_grouped_in_runs_between_the_others(classic):
    t = classic
    done = [t.finished(loser) for loser in ("defender", "attacker", "defender")]
    open_one = t.start(category="physical", bid="Strong")
    scene = t.refresh().scene
    with render_cache.RenderCache().active():
        cards = selectors.player_cards(scene, t.a_user)["cards"]
    grouped = finished_runs(cards)
    assert [type(c) for c in grouped] == [dict, FinishedRun]
    assert grouped[0]["ch"].pk == open_one.pk
    assert [c["ch"].pk for c in grouped[1]] == [ch.pk for ch in reversed(done)]
    assert finished_runs(cards[:2]) == cards[:2]  # one finished card alone is no run


def test_a_run_is_rendered_once_and_equals_its_cards_one_by_one(classic):
    t = classic
    for loser in ("defender", "attacker", "defender"):
        t.finished(loser)
    finished_cards.clear()
    before = dict(finished_cards.run_stats)
    first = _prompts(t, t.a_user)
    again = _prompts(t, t.a_user)
    assert finished_cards.run_stats["misses"] == before["misses"] + 1
    assert finished_cards.run_stats["hits"] == before["hits"] + 1
    assert first == again == _one_by_one(t, t.a_user)
    assert first.count("you are the attacker") == 3
    # the other side's run: its own
    theirs = _prompts(t, t.d_user)
    assert theirs == _one_by_one(t, t.d_user) != first
    assert "you are the attacker" not in theirs


def test_a_new_card_or_a_rename_is_never_served_stale(classic):
    t = classic
    for loser in ("defender", "attacker"):
        t.finished(loser)
    kept = _prompts(t, t.a_user)
    Participant.objects.filter(pk=t.d.pk).update(name="Sophia the Wise")
    renamed = _prompts(t, t.a_user)
    assert "Sophia the Wise" in renamed and renamed == _one_by_one(t, t.a_user) != kept
    t.finished("attacker")
    more = _prompts(t, t.a_user)
    assert more.count("you are the attacker") == 3 and more == _one_by_one(t, t.a_user)


def test_a_requests_token_is_never_kept(classic):
    t = classic
    for loser in ("defender", "attacker"):
        t.finished(loser)
    finished_cards.clear()
    mine = _prompts(t, t.a_user, csrf_token="token-of-one-request")
    other = _prompts(t, t.a_user, csrf_token="token-of-another")
    assert mine.count("token-of-one-request") >= 2 and "token-of-another" not in mine
    assert other.count("token-of-another") >= 2 and "token-of-one-request" not in other
    assert other == _one_by_one(t, t.a_user, csrf_token="token-of-another")
    pushed = _prompts(t, t.a_user, csrf_token=MARK)  # a push: the mark, taken out after
    assert pushed == _one_by_one(t, t.a_user, csrf_token=MARK)
    for key in finished_cards._runs.held():
        html = finished_cards._runs.find(key)
        assert "token-of" not in html


def test_a_runs_key_holds_each_of_its_cards_item_keys(classic):
    """The run's key (``run_key``, spelt once for the run) changes with whatever changes a
    card's own item key (``card_key``): its row, viewer and names, and what the context gives
    every card alike (side, url, target, the scene, a token, the phone's mark)."""
    from django.template import Context

    from combat.templatetags.finished_cards import card_key, run_key

    t = classic
    for loser in ("defender", "attacker"):
        t.finished(loser)
    scene = t.refresh().scene
    with render_cache.RenderCache().active():
        cards = selectors.player_cards(scene, t.a_user)["cards"]
    (run,) = [c for c in finished_runs(cards) if isinstance(c, FinishedRun)]

    def keys(run: FinishedRun, **extra) -> tuple[object, list[object]]:
        context = Context({"scene": scene, "from_phone": True, **extra})
        items = []
        for c in run:
            with context.push(c=c):
                items.append(card_key(context, "prompt"))
        return run_key(context, run), items

    base, items = keys(run)
    assert base is not None and None not in items
    first = run[0]
    variants = [
        (FinishedRun([{**first, "viewer": "public"}, *run[1:]]), {}),
        (FinishedRun([{**first, "names": {**first["names"], "defender": "X"}}, *run[1:]]), {}),
        (FinishedRun([*run[1:], first]), {}),  # another order
        (run, {"side": "attacker"}),
        (run, {"url": "/elsewhere/"}),
        (run, {"target": "#elsewhere"}),
        (run, {"csrf_token": MARK}),
        (run, {"from_phone": False}),
    ]
    seen = {base}
    for other, extra in variants:
        key, other_items = keys(other, **extra)
        assert other_items != items and key not in seen
        seen.add(key)
    assert keys(FinishedRun(list(run)))[0] == base  # the same cards: the same key


def test_a_run_made_again_for_one_more_card_takes_the_kept_items_html(classic, monkeypatch):
    """One more finished card makes each phone's run anew: the cards already kept are taken
    as their items were kept, only the new card's item is rendered (not the run's body once
    a card), and the run is what the cards rendered one by one show."""
    t = classic
    kept = [t.finished(loser).pk for loser in ("defender", "attacker")]
    rendered: list[int] = []
    real = finished_cards.FinishedCardNode.render

    def counted(self, context):
        if self.label == "prompt":
            rendered.append(context["c"]["ch"].pk)
        return real(self, context)

    monkeypatch.setattr(finished_cards.FinishedCardNode, "render", counted)
    before = dict(finished_cards.run_stats)
    t.finished("defender")  # every step pushed to both phones (Table.do)
    assert finished_cards.run_stats["misses"] >= before["misses"] + 2  # both phones' runs
    assert not set(kept) & set(rendered)  # the kept cards' items taken as kept
    monkeypatch.setattr(finished_cards.FinishedCardNode, "render", real)
    pushed = _prompts(t, t.a_user, csrf_token=MARK)
    assert pushed.count("you are the attacker") == 3
    assert pushed == _one_by_one(t, t.a_user, csrf_token=MARK)
    assert _prompts(t, t.a_user) == _one_by_one(t, t.a_user)  # a page without a token
