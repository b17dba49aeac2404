"""Issue 19: what the phone shows looks like what it is, measured in chromium.

Content shown while the scene's socket is down (the freshness badge says so) looks stale, and
looks live again when the socket is; the health track on a 360 px phone is drawn box for box as
the character's sheet draws it (the phone once never loaded sheet.css).
"""

from __future__ import annotations

import pytest

from characters import services as sheet_services
from combat import services as scene_services
from tests.browser.shots import shot
from tests.browser.threads import off_loop
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)
PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 360, "height": 740}
PUSH = 8_000  # ms: how long a page waits for the badge to change before the test fails

# How each part of the phone is drawn: opaque and in colour, or dimmed.
LOOKS = """() => ['#scene-public', '#prompts', '.sheet', '.card:has(#player-log)'].map(sel => {
  const s = getComputedStyle(document.querySelector(sel));
  return {part: sel, opacity: parseFloat(s.opacity), filter: s.filter};
})"""


def _hurt_in_a_scene() -> tuple[int, int]:
    """Jane, with bashing, lethal and aggravated damage on her track, in a wod_dice scene."""
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
    return scene.pk, character.pk


def _log_in(page, live_url: str, username: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(f"{username}-pw")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")


def test_what_the_phone_shows_looks_stale_while_its_socket_is_down(live_url: str, browser) -> None:
    from playwright.sync_api import expect

    scene_pk, _character = off_loop(_hurt_in_a_scene)
    context = browser.new_context(viewport=PHONE)
    phone = context.new_page()
    badge = phone.locator("#scene-freshness")
    try:
        _log_in(phone, live_url, "jane")
        phone.goto(f"{live_url}/scenes/{scene_pk}/phone/")
        expect(badge).to_have_attribute("data-state", "live", timeout=PUSH)
        for part in phone.evaluate(LOOKS):
            assert part["opacity"] == 1 and part["filter"] == "none", part

        context.set_offline(True)
        expect(badge).to_contain_text("offline since", timeout=PUSH)
        stale = phone.evaluate(LOOKS)
        shot(phone, "phone-stale")
        for part in stale:
            assert part["opacity"] <= 0.6 and "grayscale" in part["filter"], part
        assert badge.evaluate("(el) => getComputedStyle(el).opacity") == "1"  # the badge says why

        context.set_offline(False)
        expect(badge).to_have_attribute("data-state", "live", timeout=PUSH)
        phone.wait_for_function(
            f"() => ({LOOKS})().every(p => p.opacity === 1 && p.filter === 'none')",
            timeout=PUSH,
        )
    finally:
        context.close()


# Each box of the health track: its level, its mark and how it is drawn.
BOXES = """() => [...document.querySelectorAll('.sheet .health .track > li')].flatMap(li =>
  [...li.querySelectorAll('.box')].map(b => { const s = getComputedStyle(b);
    return {level: li.querySelector('.level-name').textContent.trim().split(/\\s/)[0],
            mark: b.textContent.trim(), kind: b.className, color: s.color,
            background: s.backgroundColor,
            border: `${s.borderTopWidth} ${s.borderTopStyle} ${s.borderTopColor}`,
            width: Math.round(b.getBoundingClientRect().width)}; }))"""


def test_the_phone_draws_each_damage_type_as_the_sheet_does_at_360px(
    live_url: str, browser
) -> None:
    """Bashing, lethal and aggravated damage each in their own look, the same box for box on a
    360 px phone as on the character's sheet."""
    from playwright.sync_api import expect

    scene_pk, character_pk = off_loop(_hurt_in_a_scene)
    context = browser.new_context(viewport=SMALL_PHONE)
    page = context.new_page()
    try:
        _log_in(page, live_url, "jane")
        page.goto(f"{live_url}/characters/{character_pk}/")
        on_sheet = page.evaluate(BOXES)
        page.goto(f"{live_url}/scenes/{scene_pk}/phone/")
        # live: the whole state the socket sends on connect has replaced the page's
        expect(page.locator("#scene-freshness")).to_have_attribute("data-state", "live")
        page.locator(".sheet .health").scroll_into_view_if_needed()
        on_phone = page.evaluate(BOXES)
        shot(page, "phone-health-360-kinds")
        assert on_phone == on_sheet
        looks = {box["kind"]: (box["color"], box["background"], box["border"]) for box in on_phone}
        assert set(looks) == {"box aggravated", "box lethal", "box bashing", "box empty"}
        assert len(set(looks.values())) == 4, looks  # each type drawn its own way
        assert all(box["border"].startswith("2px solid") for box in on_phone), on_phone
    finally:
        context.close()
