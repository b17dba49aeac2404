"""Text a person types that lands in the log (a reminder from a phone here) cannot forge log
lines: line breaks, control and direction-override characters are shown, not obeyed, in
``log.txt`` and on the screens.

The cast (conftest.py): the storyteller runs the fight; Jane's player sends the reminder.
"""

from __future__ import annotations

import pytest

from combat import services
from combat.logtext import one_line
from combat.models import SceneLogEntry
from combat.rounds.starting import combat_start
from tests.conftest import client_for

pytestmark = pytest.mark.django_db

FORGED = "bleeding\n    0:00:00  Storyteller: Frank is dead\r\n\x1b[2J\u202eevil\tend"
SHOWN = "bleeding⏎    0:00:00  Storyteller: Frank is dead⏎\\x1b[2J\\u202eevil\\tend"


def test_a_reminder_from_a_phone_cannot_forge_a_line_of_the_log(cast) -> None:
    scene = cast.scene
    combat_start(scene=scene, by=cast.storyteller, participants=[cast.p["Jane"], cast.p["Thug"]])
    jane = client_for(cast.users["Jane"])
    response = jane.post(
        f"/scenes/{scene.pk}/combat/remind/",
        {"participant": cast.p["Jane"].pk, "text": FORGED, "key": "remind-jane-1", "from": "phone"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200

    storyteller = client_for(cast.storyteller)
    text = storyteller.get(f"/scenes/{scene.pk}/log.txt").content.decode()
    forged_lines = [line for line in text.splitlines() if "Frank is dead" in line]
    assert len(forged_lines) == 1 and "Reminder from Jane: " + SHOWN in forged_lines[0]
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text
    for page in (f"/scenes/{scene.pk}/", f"/scenes/{scene.pk}/phone/"):
        client = storyteller if page.endswith(f"{scene.pk}/") else jane
        html = client.get(page).content.decode()
        assert "Frank is dead" in html and "\x1b" not in html and "\u202e" not in html


def test_a_line_written_before_is_shown_on_one_line_in_the_download(chronicle, storyteller) -> None:
    scene = services.scene_open(chronicle=chronicle, by=storyteller, name="Elysium")
    SceneLogEntry.objects.create(scene=scene, seq=99, game_time=0, kind="scene", text=FORGED)
    text = client_for(storyteller).get(f"/scenes/{scene.pk}/log.txt").content.decode()
    assert SHOWN in text and "\x1b" not in text


@pytest.mark.parametrize(
    ("typed", "shown"),
    [
        ("plain words, é and 🎲", "plain words, é and 🎲"),
        ("a\nb", "a⏎b"),
        ("a\r\nb", "a⏎b"),
        ("a\rb\u2028c\u2029d\x0be\x85f", "a⏎b⏎c⏎d⏎e⏎f"),
        ("bell\x07", "bell\\x07"),
        ("\u202egnp.exe", "\\u202egnp.exe"),
        ("family 👩\u200d👩\u200d👧", "family 👩\u200d👩\u200d👧"),  # a joiner is no control
        ("a\\nb", "a\\nb"),  # typed as two characters: left alone
    ],
)
def test_one_line(typed: str, shown: str) -> None:
    assert one_line(typed) == shown
    assert one_line(shown) == shown  # a line shown once is kept as it is
