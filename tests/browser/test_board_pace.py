"""A busy scene's board in a real browser (issue 21): changes that come quickly one after
another reach the storyteller's tablet over its websocket, the later ones rendered together by
the board thread (channels-redis only), and the tablet ends on the scene's state."""

from __future__ import annotations

import re

import pytest

from combat import live, services
from combat.models import Scene
from tests.browser.test_scene_live import TABLET, _cast, _log_in

pytestmark = pytest.mark.django_db(transaction=True)

WHOLE = re.compile(r'id="(scene-board|scene-public)"')  # a whole state (static/js/scene.js)


def test_a_busy_scenes_board_reaches_the_tablet(live_url: str, browser, settings) -> None:
    from django.contrib.auth import get_user_model
    from playwright.sync_api import expect

    if not hasattr(live.get_channel_layer(), "group_send_blocking"):
        # the board thread is channels-redis's; and this test's own thread, which makes the
        # changes, cannot publish to the in-memory layer, whose queues are the server loop's
        pytest.skip("the board thread runs on channels-redis (REDIS_URL)")
    settings.LIVE_BOARD_PACE = 0.3  # the changes below come well within it
    claims: list[bool] = []
    claim = live.BOARDS.claim

    def spied(*args):
        claims.append(claim(*args))
        return claims[-1]

    _cast()
    context = browser.new_context(viewport=TABLET)
    try:
        tablet = context.new_page()
        frames: list[str] = []
        tablet.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(f)))
        _log_in(tablet, live_url, "st")
        tablet.goto(f"{live_url}/scenes/")
        tablet.get_by_label("Name").fill("Elysium")
        tablet.get_by_role("button", name="Open the scene").click()
        expect(tablet.get_by_role("heading", name="Elysium")).to_be_visible()
        expect(tablet.locator("#scene-freshness")).to_have_class(re.compile(r"\bconnected\b"))
        scene = Scene.objects.get(name="Elysium")
        storyteller = get_user_model().objects.get(username="st")

        live.BOARDS.claim = spied
        try:
            for _ in range(6):
                services.scene_advance_clock(scene=scene, by=storyteller, seconds=60)
                scene.refresh_from_db()
        finally:
            del live.BOARDS.claim
        assert live.BOARDS.wait_idle(10)

        expect(tablet.locator("#scene-clock")).to_have_text("6m 00s")
        expect(tablet.locator("#clock-panel")).to_have_attribute("data-seq", str(scene.seq))
        # a push brought it, not a whole state (the hubs' catch-up of a board left behind)
        pushed = [f for f in frames if isinstance(f, str) and not WHOLE.search(f[:400])]
        assert any(re.search(r'id="scene-clock"[^>]*>\s*6m 00s', f) for f in pushed)
        assert False in claims  # the later changes went to the board thread together
        tablet.reload()  # what a fresh load shows is what the pushes left
        expect(tablet.locator("#scene-clock")).to_have_text("6m 00s")
    finally:
        context.close()
