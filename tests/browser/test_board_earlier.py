"""The board's fold of earlier challenges in a real browser (Chromium, tablet size): the
storyteller opens "Earlier challenges (N)", its content comes on demand (never pushed), an old
challenge is voided from there through the step, and the board updates by itself: the fold
stays open and shows it voided, and a later change elsewhere moves the count while the fold
keeps what it shows (combat/challenges/board_reads.py, static/js/tablet.js)."""

from __future__ import annotations

import math
import time

import pytest

from combat.challenges.board_reads import SHOWN
from combat.models import Challenge
from tests.browser.test_challenges import TABLET
from tests.browser.test_challenges import _open as open_page
from tests.browser.threads import off_loop
from tests.combat.challenges.conftest import WRITES, make_table
from tests.combat.challenges.test_board_earlier import _history

pytestmark = pytest.mark.django_db(transaction=True)
PUSH = 8_000  # ms: how long the tablet waits for a push or a reply before the test fails


def _one_earlier(browser, live_url):
    """A table whose first challenge is the fold's only earlier one, and the storyteller's
    tablet open on it, live."""
    from playwright.sync_api import expect

    t = off_loop(make_table, "met_classic")
    first = off_loop(t.finished)
    off_loop(_history, t, SHOWN)  # the first one is now the only earlier one
    tablet = open_page(browser, live_url, t.st.username, f"{live_url}/scenes/{t.scene.pk}/", TABLET)
    try:
        expect(tablet.locator("[data-state=live]")).to_have_count(1, timeout=PUSH)
    except BaseException:
        tablet.context.close()
        raise
    return t, first, tablet


def test_the_storyteller_opens_the_fold_and_voids_an_old_challenge(browser, live_url):
    from playwright.sync_api import expect

    t, first, tablet = _one_earlier(browser, live_url)
    try:
        board = tablet.locator("#challenge-board")
        expect(board.locator("details.cc-done")).to_have_count(SHOWN)
        fold = tablet.locator("#cc-earlier")
        expect(fold.locator("> summary")).to_have_text("Earlier challenges (1)")
        expect(fold.locator(f"#cc-done-{first.pk}")).to_have_count(0)  # not in the page
        fold.locator("> summary").click()
        old = fold.locator(f"#cc-done-{first.pk}")
        expect(old).to_have_count(1, timeout=PUSH)  # asked for on opening
        old.locator("> summary").click()
        void = old.locator("form.cc-void-form")
        void.get_by_label("Why void").fill("wrong target")
        void.get_by_role("button", name="Void").click()  # asks once (issue 19)
        void.get_by_role("button", name="Tap again: void and reverse its sheet entries").click()
        # the board's answer draws the region afresh: the fold stays open and asks again
        expect(fold.locator(f"#cc-done-{first.pk} > summary")).to_contain_text(
            "voided", timeout=PUSH
        )
        assert off_loop(lambda: type(first).objects.get(pk=first.pk).status) == "void"
        # a change elsewhere (the players finish another): pushed, the count moves by itself
        off_loop(t.finished)
        expect(fold.locator("> summary")).to_have_text("Earlier challenges (2)", timeout=PUSH)
        expect(fold).to_have_attribute("open", "")
        expect(fold.locator("details.cc-done")).to_have_count(2, timeout=PUSH)
        expect(fold.locator(f"#cc-done-{first.pk} > summary")).to_contain_text("voided")
        expect(board.locator("details.cc-done")).to_have_count(SHOWN + 2)
    finally:
        tablet.context.close()


def test_a_fold_left_open_asks_once_for_a_burst_of_changes(browser, live_url):
    """Voids (or finishes) one after another in a busy scene move the fold's version with
    each push: the open fold puts back what it held at once and asks again at most once every
    few seconds (static/js/tablet.js), not once per change, and ends as the database is."""
    from playwright.sync_api import expect

    t = off_loop(make_table, "met_classic")
    off_loop(t.finished)
    burst = 8  # voids, each a push that moves the fold's version
    old = off_loop(_history, t, SHOWN + burst - 1)[: burst - 1]  # the fold: these and the first
    tablet = open_page(browser, live_url, t.st.username, f"{live_url}/scenes/{t.scene.pk}/", TABLET)
    asked: list[str] = []
    tablet.on("request", lambda r: asked.append(r.url) if "/challenges/earlier/" in r.url else None)
    try:
        expect(tablet.locator("[data-state=live]")).to_have_count(1, timeout=PUSH)
        fold = tablet.locator("#cc-earlier")
        expect(fold.locator("> summary")).to_have_text(f"Earlier challenges ({burst})")
        fold.locator("> summary").click()
        expect(fold.locator("details.cc-done")).to_have_count(burst, timeout=PUSH)
        assert len(asked) == 1
        first = off_loop(lambda: Challenge.objects.filter(scene=t.scene).order_by("pk")[0].pk)

        def burst_of_voids() -> None:  # one after another, as fast as the steps go
            for pk in [first, *old]:
                ch = Challenge.objects.select_related("scene").get(pk=pk)
                void = WRITES["challenge_st"]
                void(scene=ch.scene, challenge=ch, by=t.st, action="void", text="x")

        began = time.monotonic()
        off_loop(burst_of_voids)
        expect(fold.locator("details.cc-done > summary", has_text="voided")).to_have_count(
            burst, timeout=PUSH
        )
        expect(fold).to_have_attribute("open", "")
        lasted = time.monotonic() - began  # the voids written and their pushes shown
        # one ask when it opened; then, for the burst's pushes, one at once and one every
        # REFRESH (3 s, tablet.js) while they come, and the last one's: not one for each (the
        # fold's tablet.js of before), however slow this machine made the burst or its pushes
        assert len(asked) - 1 <= 2 + math.ceil(lasted / 3), (lasted, asked)
    finally:
        tablet.context.close()


def test_a_fold_closed_before_its_refresh_asks_when_opened_again(browser, live_url):
    """A push that moved the fold's version while it was open puts back what it held and
    asks again a moment later (static/js/tablet.js); closed before then, that ask is skipped:
    opened again, the fold asks then, and does not show what it held (a voided one as not)."""
    from playwright.sync_api import expect

    t, first, tablet = _one_earlier(browser, live_url)
    try:
        fold = tablet.locator("#cc-earlier")
        summary = fold.locator("> summary")
        summary.click()
        expect(fold.locator(f"#cc-done-{first.pk}")).to_have_count(1, timeout=PUSH)
        version = fold.get_attribute("data-version")
        ch = off_loop(lambda: Challenge.objects.select_related("scene").get(pk=first.pk))
        off_loop(
            WRITES["challenge_st"], scene=ch.scene, challenge=ch, by=t.st, action="void", text="x"
        )
        expect(fold).not_to_have_attribute("data-version", version, timeout=PUSH)  # pushed
        summary.click()  # closed before its refresh (3 s after the first ask)
        expect(fold).not_to_have_attribute("open", "")
        tablet.wait_for_timeout(3_500)  # the refresh's time came while it was closed
        summary.click()
        expect(fold.locator(f"#cc-done-{first.pk} > summary")).to_contain_text(
            "voided", timeout=PUSH
        )
    finally:
        tablet.context.close()
