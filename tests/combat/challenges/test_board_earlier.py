"""The storyteller's board does not grow with the night (combat/challenges/board_reads.py):
its pushed challenge region holds the open challenges and the ``SHOWN`` newest finished ones,
folded, and one fold "Earlier challenges (N)" whose content the tablet asks for when the
storyteller opens it (``challenge_earlier``: the storyteller's alone, a page at a time, each
one with its void form). A void from there goes through the step; the board converges."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from combat import fragments, live, render_cache
from combat.challenges import board_reads, reads
from combat.models import Challenge, Participant
from combat.templatetags import finished_cards
from tests.combat.challenges.conftest import make_table
from tests.conftest import client_for
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

SHOWN, PAGE = board_reads.SHOWN, board_reads.PAGE


def _history(t, count: int) -> list[int]:
    """``count`` finished challenges of two NPCs, copies of the scene's newest finished one
    (as bench/tap_cost.py's ``--history``), oldest first; their pks."""
    model = Challenge.objects.filter(scene=t.scene, status="over").order_by("-pk").first()
    npcs = [
        Participant.objects.get_or_create(scene=t.scene, name=f"Old {n}", npc=True)[0]
        for n in (1, 2)
    ]
    rows = []
    for _ in range(count):
        row = Challenge.objects.get(pk=model.pk)
        row.pk = None
        row.attacker, row.defender = npcs
        rows.append(row)
    Challenge.objects.bulk_create(rows)
    board_reads.recount(t.scene.pk)  # written outside the steps, which count
    live._people_changed(t.scene.pk)  # the NPCs' joining (as the bench's)
    made = Challenge.objects.filter(scene=t.scene, attacker=npcs[0]).order_by("-pk")
    return list(made.values_list("pk", flat=True)[:count])[::-1]


def _challenge_board(html: str) -> str:
    """The ``#challenge-board`` element of ``html``, whole (its divs counted)."""
    start = html.index('<div id="challenge-board"')
    depth = 0
    for tag in re.finditer(r"<(/?)div\b", html[start:]):
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return html[start : start + html.index(">", start + tag.start()) - start + 1]
    raise AssertionError("no end to #challenge-board")


def _region(t) -> str:
    """The board's challenge region as a change pushes it."""
    return _challenge_board(fragments.board_regions(t.refresh().scene, ("challenges",)))


def _fresh_page_region(t) -> str:
    """The board's challenge region as the tablet's page loads it, nothing kept."""
    finished_cards.clear()
    reads.forget_engines()
    return _challenge_board(fragments.storyteller_state(t.refresh().scene))


def _done(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'id="cc-done-(\d+)"', html)]


def _earlier(t, user, **query) -> tuple[int, str]:
    url = reverse("challenge_earlier", args=[t.scene.pk])
    reply = client_for(user).get(url, query)
    return reply.status_code, reply.content.decode()


def test_the_region_holds_the_newest_finished_and_folds_the_rest_with_their_count(classic):
    t = classic
    t.finished()
    old = _history(t, SHOWN)  # SHOWN + 1 finished: the first one played is the earlier one
    live = t.start(category="physical", bid="Strong")
    region = _region(t)
    shown = _done(region)
    assert shown == old[::-1]  # the newest first, SHOWN of them
    assert f'id="cc-done-{old[0] - 1}"' not in region
    assert "Earlier challenges (1)" in region
    assert f"cc-{live.pk}" in region or f"challenge-{live.pk}" in region  # the open one
    assert region.index("Earlier challenges") > region.index(f'id="cc-done-{old[0]}"')


def test_the_region_and_its_reads_stay_the_same_however_long_the_night(classic):
    t = classic
    t.finished()
    _history(t, SHOWN + 1)
    t.render()
    with CaptureQueriesContext(connection) as few:
        small = _region(t)
    _history(t, 150)
    t.render()
    with CaptureQueriesContext(connection) as many:
        large = _region(t)
    assert len(many.captured_queries) == len(few.captured_queries)
    assert "Earlier challenges (2)" in small and "Earlier challenges (152)" in large
    # the same markup but for the numbers (the count, the version, the newest ones' pks)
    assert re.sub(r"\d+", "N", large) == re.sub(r"\d+", "N", small)
    assert len(_done(large)) == SHOWN


def test_the_pushed_region_equals_a_fresh_render_of_the_page(classic):
    t = classic
    t.finished()
    _history(t, SHOWN + 4)
    t.start(category="physical", bid="Strong")
    pushed = _region(t)
    assert pushed == _fresh_page_region(t)
    assert "Earlier challenges (5)" in pushed


def test_the_fold_gives_the_storyteller_the_earlier_ones_with_their_void_form(classic):
    t = classic
    first = t.finished()
    old = _history(t, SHOWN + PAGE + 3)  # 1 + PAGE + 3 earlier ones, SHOWN on the board
    earlier = [first.pk, *old[: PAGE + 3]][::-1]  # newest first
    status, html = _earlier(t, t.st)
    assert status == 200
    assert _done(html) == earlier[:PAGE]
    assert html.count('class="row cc-void-form"') == PAGE
    assert "Older challenges (4)" in html
    before = re.search(r"\?before=(\d+)", html).group(1)
    assert int(before) == earlier[PAGE - 1]
    status, second = _earlier(t, t.st, before=before)
    assert status == 200 and _done(second) == earlier[PAGE:]
    assert "Older challenges" not in second
    assert "Marcus vs Sophia" in second  # the first challenge of the night, still reachable
    # the pages a tablet had open, asked again at once
    status, again = _earlier(t, t.st, through=earlier[-1])
    assert status == 200 and _done(again) == earlier


def test_a_player_or_a_stranger_gets_nothing_of_the_fold(classic):
    t = classic
    t.finished()
    _history(t, SHOWN + 7)
    for user in (t.a_user, t.d_user, UserFactory()):
        status, html = _earlier(t, user)
        assert status == 404
        assert "Earlier" not in html and "cc-done" not in html and "(8)" not in html
    phone = t.phone(t.a_user)
    assert "Earlier challenges" not in phone and "challenges/earlier" not in phone


@pytest.mark.parametrize("query", [{"before": "\u00b2"}, {"through": "\u00b3"}, {"before": "x1"}])
def test_a_forged_page_of_the_fold_is_a_404_not_a_500(classic, query):
    """``before`` and ``through`` are a challenge's pk: anything else (a superscript digit,
    which ``str.isdigit`` accepts and ``int`` refuses) is no page."""
    t = classic
    t.finished()
    _history(t, SHOWN + 3)
    url = reverse("challenge_earlier", args=[t.scene.pk])
    tablet = client_for(t.st)
    tablet.raise_request_exception = False
    assert tablet.get(url, query).status_code == 404


def test_another_chronicles_storyteller_gets_nothing_of_the_fold(classic):
    t = classic
    t.finished()
    _history(t, SHOWN + 3)
    other = make_table("met_werewolf")
    status, html = _earlier(t, other.st)
    assert status == 404 and "cc-done" not in html and "(4)" not in html


def test_a_void_from_the_fold_goes_through_the_step_and_the_board_converges(classic):
    t = classic
    first = t.finished()
    _history(t, SHOWN)
    status, html = _earlier(t, t.st)
    (form,) = re.findall(
        rf'id="cc-done-{first.pk}".*?(<form[^>]*cc-void-form.*?</form>)', html, re.S
    )
    action = re.search(r'action="([^"]+)"', form).group(1)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    assert fields["action"] == "void"
    reply = client_for(t.st).post(
        action, {**fields, "text": "wrong target"}, HTTP_HX_REQUEST="true"
    )
    assert reply.status_code == 200
    assert Challenge.objects.get(pk=first.pk).status == "void"
    answer = reply.content.decode()
    assert "Earlier challenges (1)" in answer  # the board's bounded region, its fold as it was
    assert f'id="cc-done-{first.pk}"' not in answer
    status, html = _earlier(t, t.st)
    assert status == 200 and re.search(rf'id="cc-done-{first.pk}".*?voided', html, re.S)
    fold = re.search(rf'id="cc-done-{first.pk}".*?</details>', html, re.S).group(0)
    assert "cc-void-form" not in fold  # voided: nothing left to void
    assert _region(t) == _fresh_page_region(t)


def test_no_fold_while_every_finished_one_is_shown(classic):
    t = classic
    t.finished()
    _history(t, SHOWN - 1)
    region = _region(t)
    assert len(_done(region)) == SHOWN and "Earlier challenges" not in region
    status, html = _earlier(t, t.st)
    assert status == 200 and _done(html) == []


def test_one_waiting_on_a_choice_stays_on_the_board_however_old(classic):
    """W8: a loser's choice waits with the open ones, never behind the fold."""
    t = classic
    first = t.finished()
    _history(t, SHOWN + 2)
    row = Challenge.objects.get(pk=first.pk)
    Challenge.objects.filter(pk=first.pk).update(
        options={**row.options, "choose": ["defender"]}, step=row.step + 1
    )
    board_reads.recount(t.scene.pk)  # written outside the steps, which count
    region = _region(t)
    assert f'id="challenge-{first.pk}"' in region and f'id="cc-done-{first.pk}"' not in region
    assert len(_done(region)) == SHOWN and "Earlier challenges (2)" in region
    status, html = _earlier(t, t.st)
    assert status == 200 and f"challenge-{first.pk}" not in html and len(_done(html)) == 2


def _by_pk(captured: CaptureQueriesContext) -> int:
    """Reads of challenges' whole rows by their ids: not the phones' list, which picks its ids
    by a subquery (``IN (SELECT ...)`` on SQLite, ``= ANY(ARRAY(...))`` on PostgreSQL)."""
    return sum(
        'FROM "combat_challenge"' in q["sql"]
        and '"combat_challenge"."id" IN (' in q["sql"]
        and 'AS "always"' not in q["sql"]
        for q in captured.captured_queries
    )


def test_the_board_takes_its_open_rows_from_the_phones_list(classic):
    """The board's open rows come from the phones' list when this rendering read it (as every
    board rendering does: board_reads._open_ones), not read again by pk; read alone, the
    board's rows read them by pk, the same rows."""
    t = classic
    ch = t.start(category="physical", bid="Strong")
    users = [t.a_user.pk, t.d_user.pk]
    together = fragments.scene_change_fragments(t.refresh().scene.pk, private_user_ids=users)
    with CaptureQueriesContext(connection) as captured:
        alone = fragments.board_regions(t.refresh().scene, ("challenges",))
    assert _by_pk(captured) == 0
    assert alone in together.storytellers and f"cc-done-{ch.pk}" not in alone
    with render_cache.RenderCache().active(), CaptureQueriesContext(connection) as captured:
        rows = board_reads.board_rows(t.refresh().scene)
    assert _by_pk(captured) == 1  # the open one, whole
    ch.refresh_from_db()
    assert [(r.pk, r.step, r.status) for r in rows.waiting] == [(ch.pk, ch.step, ch.status)]


def _fold_pages(t, **query) -> list[int]:
    """Every challenge the fold gives, following its "Older challenges" button page by page."""
    out: list[int] = []
    while True:
        status, html = _earlier(t, t.st, **query)
        assert status == 200
        out += _done(html)
        more = re.search(r"\?before=(\d+)", html)
        if more is None:
            return out
        query = {"before": more.group(1)}


@pytest.mark.parametrize("count", [SHOWN, SHOWN + 1, 30, SHOWN + PAGE, SHOWN + PAGE + 1])
def test_the_board_and_its_fold_hold_every_finished_one_once_at_the_boundaries(classic, count):
    t = classic
    first = t.finished()
    every = [first.pk, *_history(t, count - 1)][::-1]  # newest first
    region = _region(t)
    shown = _done(region)
    assert shown == every[:SHOWN]
    folded = len(every) - SHOWN
    assert (f"Earlier challenges ({folded})" in region) == (folded > 0)
    assert "Earlier challenges" in region or folded == 0
    assert _fold_pages(t) == every[SHOWN:]
    if folded:
        assert _fold_pages(t, through=every[-1]) == every[SHOWN:]


def test_a_fold_asked_again_through_more_than_it_keeps_pages_the_rest(classic):
    """``through`` an older one than ``THROUGH`` earlier ones back: the first ``THROUGH``, then
    the rest a page at a time, none twice, none left out."""
    t = classic
    first = t.finished()
    every = [first.pk, *_history(t, SHOWN + board_reads.THROUGH + PAGE + 4)][::-1]
    status, html = _earlier(t, t.st, through=every[-1])
    assert status == 200 and len(_done(html)) == board_reads.THROUGH
    assert _fold_pages(t, through=every[-1]) == every[SHOWN:]


def test_a_finished_card_in_the_fold_is_the_markup_the_board_showed_for_it(classic):
    t = classic
    first = t.finished()
    _history(t, SHOWN - 1)
    card = re.compile(rf'<details class="fold cc-done" id="cc-done-{first.pk}">.*?</details>', re.S)
    on_board = card.search(_region(t)).group(0)
    _history(t, 3)
    assert first.pk not in _done(_region(t))
    status, html = _earlier(t, t.st)
    assert status == 200 and card.search(html).group(0) == on_board
