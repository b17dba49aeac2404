"""The board's fold of earlier challenges in a real browser (Chromium, tablet size): the
storyteller opens "Earlier challenges (N)", its content comes on demand (never pushed), an old
challenge is voided from there through the step, and the board updates by itself: the fold
stays open and shows it voided, and a later change elsewhere moves the count while the fold
keeps what it shows (combat/challenges/board_reads.py, static/js/tablet.js)."""

from __future__ import annotations

import pytest

from combat.challenges.board_reads import SHOWN
from tests.browser.test_challenges import TABLET
from tests.browser.test_challenges import _open as open_page
from tests.browser.threads import off_loop
from tests.combat.challenges.conftest import make_table
from tests.combat.challenges.test_board_earlier import _history

pytestmark = pytest.mark.django_db(transaction=True)
PUSH = 8_000  # ms: how long the tablet waits for a push or a reply before the test fails


def test_the_storyteller_opens_the_fold_and_voids_an_old_challenge(browser, live_url):
    from playwright.sync_api import expect

    t = off_loop(make_table, "met_classic")
    first = off_loop(t.finished)
    off_loop(_history, t, SHOWN)  # the first one is now the only earlier one
    tablet = open_page(browser, live_url, t.st.username, f"{live_url}/scenes/{t.scene.pk}/", TABLET)
    try:
        expect(tablet.locator("[data-state=live]")).to_have_count(1, timeout=PUSH)
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
