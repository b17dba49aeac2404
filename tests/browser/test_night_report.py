"""The night report in a real browser: reached from the chronicle page, and printed (print
media, A4) with no app chrome and nothing running off the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from characters import services
from characters.models import LedgerKind
from combat.models import SceneLogEntry
from tests.factories import (
    CharacterFactory,
    ChronicleFactory,
    GameNightFactory,
    SceneFactory,
    StorytellerFactory,
    TraitFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_storyteller_opens_and_prints_the_night_report(live_url: str, browser) -> None:
    from playwright.sync_api import expect

    storyteller = StorytellerFactory(username="st", password="st-password")
    chronicle = ChronicleFactory(name="Phoenix by Night")
    chronicle.storytellers.add(storyteller)
    GameNightFactory(chronicle=chronicle, number=1)
    janet = CharacterFactory(chronicle=chronicle, name="Janet", willpower=3)
    TraitFactory(character=janet, category="physical", name="Quick", count=2)
    scene = SceneFactory(chronicle=chronicle, storyteller=storyteller, name="The docks")
    for seq in range(1, 41):
        text = f"Line {seq}: Janet throws rock." if seq != 7 else "Ruling: " + "x" * 400
        SceneLogEntry.objects.create(
            scene=scene, seq=seq, game_time=seq * 3, kind="scene", text=text, public=True
        )
    services.ledger_spend(
        character=janet, kind=LedgerKind.WILLPOWER_SPENT, by=storyteller, reason="Retest"
    )

    tablet = browser.new_context(viewport={"width": 1024, "height": 800}).new_page()
    tablet.goto(f"{live_url}/accounts/login/")
    tablet.get_by_label("User name").fill("st")
    tablet.get_by_label("Password").fill("st-password")
    tablet.get_by_role("button", name="Log in").click()
    tablet.goto(f"{live_url}/chronicles/{chronicle.pk}/")
    tablet.get_by_role("link", name="Night 1", exact=True).click()
    expect(tablet.get_by_role("heading", name="Phoenix by Night · game night 1")).to_be_visible()
    expect(tablet.get_by_text("Line 40: Janet throws rock.")).to_be_visible()
    expect(tablet.get_by_role("link", name="JSON")).to_be_visible()

    tablet.emulate_media(media="print")
    tablet.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    expect(tablet.get_by_role("link", name="JSON")).to_be_hidden()
    overflow = tablet.evaluate("document.documentElement.scrollWidth - innerWidth")
    assert overflow <= 0, "nothing may run off the printed page"
    pdf = tablet.pdf(format="A4")
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page\n") + pdf.count(b"/Type/Page") >= 1
    tablet.screenshot(path=str(Path("var") / "night-report-print.png"), full_page=True)
