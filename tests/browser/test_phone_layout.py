"""On a 390 px phone every tap target is at least 44 px each way, and the live badge never
covers anything. Measured from the real layout (bounding boxes) in chromium."""

from __future__ import annotations

import pytest

from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    StorytellerFactory,
    TraitFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)
MIN_TAP = 44

# Every stand-alone tap target of the page (not links inside running text).
TARGETS_JS = """
() => [...document.querySelectorAll(
    'header a, header button, main button, main a.button, main .big-list a, '
    + 'main input:not([type=hidden]), main select, main textarea, main summary'
  )]
  .filter((el) => el.offsetParent !== null)
  .map((el) => {
    const box = el.getBoundingClientRect();
    return {what: el.outerHTML.slice(0, 80), width: box.width, height: box.height};
  })
"""

# Everything the badge could cover: leaf elements with a box, outside the badge.
OVERLAPS_JS = """
() => {
  const badge = document.getElementById("live-status").getBoundingClientRect();
  const hits = [];
  for (const el of document.querySelectorAll("header *, main *")) {
    if (el.closest("#live") || el.contains(document.getElementById("live"))) continue;
    if (el.children.length || el.offsetParent === null) continue;
    const box = el.getBoundingClientRect();
    if (!box.width || !box.height) continue;
    const apart = box.right <= badge.left || box.left >= badge.right
      || box.bottom <= badge.top || box.top >= badge.bottom;
    if (!apart) hits.push(el.outerHTML.slice(0, 80));
  }
  return hits;
}
"""


def _log_in(page, live_url: str, username: str, password: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_url}/")


def _too_small(page) -> list[dict]:
    return [
        target
        for target in page.evaluate(TARGETS_JS)
        if target["width"] < MIN_TAP or target["height"] < MIN_TAP
    ]


def _badge_overlaps(page) -> list[str]:
    from playwright.sync_api import expect

    expect(page.locator("#live-status")).to_contain_text("live", timeout=10_000)
    overlaps = []
    for scroll in ("0", "document.body.scrollHeight"):  # top and bottom of a long page
        page.evaluate(f"window.scrollTo(0, {scroll})")
        overlaps += page.evaluate(OVERLAPS_JS)
    return overlaps


def test_it_gives_every_tap_target_44px_on_a_phone(live_url: str, page) -> None:
    player = UserFactory(username="al", password="al-password")
    chronicle = ChronicleFactory(name="Phoenix by Night")
    GameNightFactory(chronicle=chronicle, number=1)
    for name in ("Al", *(f"Retainer {n}" for n in range(30))):  # short names, a long page
        character = CharacterFactory(chronicle=chronicle, name=name, player=player)
    TraitFactory(character=character, category="physical", name="Quick", count=2)

    page.goto(f"{live_url}/accounts/login/")
    assert _too_small(page) == []
    _log_in(page, live_url, "al", "al-password")
    assert _too_small(page) == [], "home: log out, character links"
    assert _badge_overlaps(page) == []
    page.get_by_role("link", name="Retainer 29").click()
    page.wait_for_url("**/characters/*/")  # waits for "load": the stylesheet is applied
    assert _too_small(page) == [], "the sheet"
    assert _badge_overlaps(page) == []


def test_it_gives_the_storytellers_desk_44px_targets_on_a_phone(live_url: str, page) -> None:
    storyteller = StorytellerFactory(username="stella", password="stella-password")
    chronicle = ChronicleFactory(name="Phoenix by Night")
    chronicle.storytellers.add(storyteller)
    GameNightFactory(chronicle=chronicle, number=1)
    CharacterFactory(chronicle=chronicle, name="Al")

    _log_in(page, live_url, "stella", "stella-password")
    assert _too_small(page) == [], "home: chronicle links, the admin button"
    page.get_by_role("link", name="Phoenix by Night").click()
    page.wait_for_url("**/chronicles/*/")  # waits for "load": the stylesheet is applied
    assert _too_small(page) == [], "the desk"
    assert _badge_overlaps(page) == []
