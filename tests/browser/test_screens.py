"""Issue 19, screens for the dark: measured from the real layout in chromium.

The phone (390 px and a small 360 px one) and the tablet (1280 x 800): what must be read is in
view, nothing of one feature's CSS lands on another's markup. Screenshots of the main moments go
to ``var/screenshots/`` (git-ignored) to be looked at.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from characters import services as sheet_services
from combat import services as scene_services
from tests.browser.threads import off_loop
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)
SMALL_PHONE = {"width": 360, "height": 740}
PUSH = 8_000  # ms: how long a page waits for a push before the test fails
SHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)


def _log_in(page, live_url: str, username: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(f"{username}-pw")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")


def _hurt_in_a_scene() -> int:
    """Jane, on the full D2 track, with bashing, lethal and aggravated damage, in a scene."""
    st = StorytellerFactory(username="st", password="st-pw")
    chronicle = ChronicleFactory(name="Dice", ruleset="wod_dice")
    chronicle.storytellers.add(st)
    GameNightFactory(chronicle=chronicle, number=1)
    scene = scene_services.scene_open(chronicle=chronicle, by=st, name="Warehouse")
    jane = UserFactory(username="jane", password="jane-pw")
    character = CharacterFactory(chronicle=chronicle, player=jane, name="Jane")
    for kind, amount in (("aggravated", 1), ("lethal", 2), ("bashing", 2)):
        sheet_services.ledger_damage(
            character=character, by=st, damage_type=kind, amount=amount, empty_boxes=7
        )
    scene_services.scene_join(code=scene.join_code, user=jane, character=character)
    return scene.pk


def _live(page) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#scene-freshness")).to_contain_text("live", timeout=PUSH)


# Each level of the health track: its name, its boxes, and whether all of it is on screen.
HEALTH_JS = """() => [...document.querySelectorAll('.health .track > li')].map(li => {
  const box = li.getBoundingClientRect();
  const boxes = [...li.querySelectorAll('.box')].map(b => {
    const r = b.getBoundingClientRect(), s = getComputedStyle(b);
    return {mark: b.textContent.trim(), kind: b.className, width: r.width,
            border: s.borderTopWidth, right: r.right};
  });
  return {name: li.querySelector('.level-name').textContent.trim(), left: box.left,
          right: box.right, boxes,
          scrolls: li.parentElement.scrollWidth > li.parentElement.clientWidth};
})"""


def test_it_shows_every_health_level_and_its_boxes_at_360px(live_url: str, browser) -> None:
    """The phone loads the sheet's CSS, and the chase's Lead track rule stays on the chase:
    every level of the D2 track is in the width of a 360 px phone, each box drawn as the sheet
    draws it (a bordered box with its mark), none cut off by a sideways scroller."""
    scene_pk = off_loop(_hurt_in_a_scene)
    context = browser.new_context(viewport=SMALL_PHONE)
    phone = context.new_page()
    try:
        _log_in(phone, live_url, "jane")
        phone.goto(f"{live_url}/scenes/{scene_pk}/phone/")
        _live(phone)
        phone.locator(".health").scroll_into_view_if_needed()
        levels = phone.evaluate(HEALTH_JS)
        _shot(phone, "phone-health-360")
        names = [level["name"].split()[0] for level in levels]
        assert names == [
            "Bruised", "Hurt", "Injured", "Wounded", "Mauled", "Crippled", "Incapacitated"
        ]  # fmt: skip
        width = SMALL_PHONE["width"]
        for level in levels:
            assert not level["scrolls"], level
            assert level["left"] >= 0 and level["right"] <= width, level
            assert len(level["boxes"]) == 1, level
            for box in level["boxes"]:
                assert box["right"] <= width, level
                assert box["border"] == "2px", f"the sheet's box is not drawn: {level}"
        marks = [level["boxes"][0]["mark"] for level in levels]
        assert marks == ["*", "X", "X", "/", "/", "", ""]
    finally:
        context.close()


# A rolled 1 in each feature that shows dice: its text and its fill must differ.
DIE_JS = """() => ['round-result', 'chase-rolls'].map(feature => {
  const holder = document.createElement('div');
  holder.className = feature;
  holder.innerHTML = '<div class="roll"><span class="dice">'
    + '<span class="die one">1</span></span></div>';
  document.querySelector('main').append(holder);
  const s = getComputedStyle(holder.querySelector('.die'));
  const die = {feature, color: s.color, background: s.backgroundColor};
  holder.remove();
  return die;
})"""


def test_it_draws_a_rolled_one_legibly_in_every_feature(live_url: str, browser) -> None:
    """A 1 is a red die with dark text in the rounds' results and in the chase's rolls alike
    (chases.css painted it red on red)."""
    scene_pk = off_loop(_hurt_in_a_scene)
    context = browser.new_context(viewport=SMALL_PHONE)
    phone = context.new_page()
    try:
        _log_in(phone, live_url, "jane")
        phone.goto(f"{live_url}/scenes/{scene_pk}/phone/")
        for die in phone.evaluate(DIE_JS):
            assert die["color"] != die["background"], die
            assert die["color"] == "rgb(0, 0, 0)", die
    finally:
        context.close()
