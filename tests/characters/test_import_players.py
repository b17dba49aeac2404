"""Players named in an imported file: matched only within the importing storyteller's
chronicles, else a new account of the chronicle; nothing of another chronicle is linked or
revealed, through the admin upload or the commands."""

from __future__ import annotations

import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from characters.models import Character, Chronicle
from tests.conftest import client_for
from tests.factories import CharacterFactory, ChronicleFactory, StorytellerFactory, UserFactory

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data" / "grapevine"
ISRAELI = DATA / "israeli_datetime_xml.gex"  # Rand McDom, player="Nobody"


def _upload(storyteller, chronicle, content: bytes | None = None) -> list[str]:
    """Upload the day-first file (or ``content``); the messages the storyteller reads."""
    url = f"/admin/characters/chronicle/{chronicle.pk}/grapevine/"
    file = SimpleUploadedFile("rand.gex", content or ISRAELI.read_bytes())
    response = client_for(storyteller).post(url, {"file": file})
    assert response.status_code == 302, response.content.decode()[:2000]
    return [str(m) for m in get_messages(response.wsgi_request)]


def _rand() -> Character:
    return Character.objects.get(name="Rand McDom")


@pytest.fixture
def elsewhere():
    """Another storyteller's chronicle, where a user named 'nobody' plays."""
    other = ChronicleFactory(name="Elsewhere")
    other.storytellers.add(StorytellerFactory(username="other_st"))
    nobody = UserFactory(username="nobody", first_name="Nobody")
    CharacterFactory(chronicle=other, name="Their PC", player=nobody)
    return nobody


def test_it_never_links_a_player_of_another_chronicle(chronicle, storyteller, elsewhere) -> None:
    lines = _upload(storyteller, chronicle)
    assert _rand().player != elsewhere
    assert _rand().player.username == "nobody@chronicle-of-tests"
    assert not _rand().player.has_usable_password()
    assert any("new account nobody@chronicle-of-tests" in line for line in lines)


def test_it_says_the_same_whether_or_not_another_chronicle_has_the_name(
    chronicle, storyteller
) -> None:
    alone = _upload(storyteller, chronicle)
    Character.objects.all().delete()
    get_user_model().objects.filter(username__startswith="nobody").delete()
    other = ChronicleFactory(name="Elsewhere")
    CharacterFactory(chronicle=other, player=UserFactory(username="nobody", first_name="Nobody"))
    beside = _upload(storyteller, chronicle)
    assert beside == alone, "the summary must tell nothing of another chronicle's players"


def test_it_does_not_claim_an_account_no_chronicle_has_yet(chronicle, storyteller) -> None:
    newcomer = UserFactory(username="nobody")
    _upload(storyteller, chronicle)
    assert _rand().player != newcomer


def test_it_links_a_player_of_the_same_chronicle_by_username(chronicle, storyteller) -> None:
    nobody = UserFactory(username="nobody")
    CharacterFactory(chronicle=chronicle, player=nobody)
    lines = _upload(storyteller, chronicle)
    assert _rand().player == nobody
    assert "Player 'Nobody' is nobody (plays in your chronicles)." in lines


def test_it_links_a_player_of_another_chronicle_the_storyteller_runs_by_full_name(
    chronicle, storyteller
) -> None:
    mine_too = ChronicleFactory(name="Mine too")
    mine_too.storytellers.add(storyteller)
    andrew = UserFactory(username="andrew", first_name="Nobody")  # matched by full name
    CharacterFactory(chronicle=mine_too, player=andrew)
    _upload(storyteller, chronicle)
    assert _rand().player == andrew


def test_it_leaves_unlinked_a_name_two_of_my_players_answer_to(chronicle, storyteller) -> None:
    CharacterFactory(chronicle=chronicle, player=UserFactory(username="nobody"))
    CharacterFactory(chronicle=chronicle, player=UserFactory(username="n2", first_name="NOBODY"))
    lines = _upload(storyteller, chronicle)
    assert _rand().player is None
    assert any("left unlinked: two or more players of your chronicles" in x for x in lines)


def test_it_finds_the_account_a_first_import_made(chronicle, storyteller) -> None:
    _upload(storyteller, chronicle)
    first = _rand().player
    _upload(storyteller, chronicle)
    assert _rand().player == first
    assert get_user_model().objects.filter(username__startswith="nobody").count() == 1


def test_it_keeps_the_player_of_a_sheet_naming_none(chronicle, storyteller) -> None:
    data = ISRAELI.read_bytes().replace(b' player="Nobody"', b"")
    _upload(storyteller, chronicle, data)
    janet = UserFactory(username="janet")
    Character.objects.filter(name="Rand McDom").update(player=janet)
    _upload(storyteller, chronicle, data)
    assert _rand().player == janet


def test_it_makes_no_account_for_a_refused_file(chronicle, storyteller) -> None:
    data = ISRAELI.read_bytes().replace(b'willpower="2"', b'willpower="-2"')
    url = f"/admin/characters/chronicle/{chronicle.pk}/grapevine/"
    response = client_for(storyteller).post(url, {"file": SimpleUploadedFile("rand.gex", data)})
    assert "Nothing was imported" in response.content.decode()
    assert not get_user_model().objects.filter(username__startswith="nobody").exists()


# The commands


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_matches_within_the_chronicle_alone_from_the_command(elsewhere) -> None:
    out = _run("import_grapevine", str(ISRAELI), "--chronicle", "Israel")
    assert _rand().player != elsewhere
    assert "new account nobody@israel" in out
    assert "Elsewhere" not in out and "other_st" not in out


def test_it_matches_within_the_storytellers_chronicles_from_the_command(elsewhere) -> None:
    other_st = get_user_model().objects.get(username="other_st")
    _run("import_grapevine", str(ISRAELI), "--chronicle", "Israel", "--storyteller", "other_st")
    assert _rand().player == elsewhere
    assert list(Chronicle.objects.get(name="Israel").storytellers.all()) == [other_st]


def test_it_never_reaches_another_chronicle_from_the_command(elsewhere, storyteller) -> None:
    _run("import_grapevine", str(ISRAELI), "--chronicle", "Israel", "--storyteller", "st")
    assert _rand().player != elsewhere


def test_it_refuses_a_storyteller_who_does_not_run_the_chronicle(chronicle, elsewhere) -> None:
    with pytest.raises(CommandError, match="'other_st' does not run the chronicle"):
        _run(
            "import_grapevine",
            str(ISRAELI),
            "--chronicle",
            chronicle.name,
            "--storyteller",
            "other_st",
        )
    with pytest.raises(CommandError, match="'nobody' is not a storyteller"):
        _run("import_grapevine", str(ISRAELI), "--chronicle", "New", "--storyteller", "nobody")
    assert not Character.objects.filter(name="Rand McDom").exists()


def test_it_scopes_the_json_commands_players_the_same_way(tmp_path: Path, elsewhere) -> None:
    sheet = tmp_path / "one.json"
    sheet.write_text('{"characters": [{"name": "Rand McDom", "player": "nobody"}]}')
    out = _run("import_characters", str(sheet), "--chronicle", "Israel")
    assert _rand().player != elsewhere
    assert re.search(r"new account nobody@israel", out)
