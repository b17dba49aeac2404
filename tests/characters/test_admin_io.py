"""The Grapevine upload and the JSON export in the admin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from characters.models import Character
from tests.conftest import client_for
from tests.factories import ChronicleFactory

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data" / "grapevine"


def _upload(name: str, content: bytes | None = None) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content or (DATA / name).read_bytes())


def test_it_imports_an_uploaded_chronicle(chronicle, storyteller) -> None:
    url = f"/admin/characters/chronicle/{chronicle.pk}/grapevine/"
    client = client_for(storyteller)
    assert client.get(url).status_code == 200
    response = client.post(url, {"file": _upload("chronicle_camarilla_five_xml.gex")}, follow=True)
    html = response.content.decode()
    assert "imported 5 characters (5 new, 0 updated)" in html
    assert "Kept in each sheet&#x27;s &#x27;Grapevine&#x27; list" in html
    assert Character.objects.filter(chronicle=chronicle).count() == 5


def test_it_refuses_a_broken_upload_and_says_where(chronicle, storyteller) -> None:
    url = f"/admin/characters/chronicle/{chronicle.pk}/grapevine/"
    response = client_for(storyteller).post(url, {"file": _upload("adamstcharles_broken_xml.gex")})
    assert response.status_code == 200
    assert "line 68, column 5" in response.content.decode()
    assert not Character.objects.exists()


def test_it_caps_the_upload_size(chronicle, storyteller, settings) -> None:
    settings.GRAPEVINE_MAX_BYTES = 1000
    url = f"/admin/characters/chronicle/{chronicle.pk}/grapevine/"
    response = client_for(storyteller).post(url, {"file": _upload("israeli_datetime_xml.gex")})
    assert "the limit is 1000 bytes" in response.content.decode()
    assert not Character.objects.exists()


def test_it_keeps_uploads_to_the_storytellers_own_chronicles(storyteller) -> None:
    other = ChronicleFactory()
    url = f"/admin/characters/chronicle/{other.pk}/grapevine/"
    response = client_for(storyteller).post(url, {"file": _upload("israeli_datetime_xml.gex")})
    assert response.status_code == 404
    assert not Character.objects.exists()


def test_it_exports_selected_characters_as_json(character, storyteller) -> None:
    response = client_for(storyteller).post(
        "/admin/characters/character/",
        {"action": "export_characters_action", "_selected_action": [character.pk]},
    )
    assert response["Content-Disposition"] == 'attachment; filename="characters.json"'
    (sheet,) = json.loads(response.content)["characters"]
    assert sheet["name"] == "Janet"
    assert sheet["traits"]["social"] == {"Charismatic": 3}
    assert sheet["negative_traits"]["social"] == {"Tactless": 1}


@pytest.mark.parametrize(
    ("old", "new", "shown"),
    [
        (b'willpower="5"', b'willpower="abc"', "willpower must be a whole number, not"),
        (b'<trait name="Tough" val="2"/>', b'<trait name="Tough" val="1e9"/>', "&#x27;Tough&#x27;"),
        (b'name="Adam St. Charles"', b'name="' + b"A" * 50_000 + b'"', "the limit is 120"),
        (b'<?xml version="1.0"?>', b'<?xml version="1.0" encoding="klingon"?>', "klingon"),
        (b'willpower="5"', b'willpower="-5"', "willpower must be from 0 to 32767, not -5"),
        (
            b'change="1" type="3" reason="oeaeu"',
            b'change="NaN" type="3"',
            "change must be a number",
        ),
        (b'<?xml version="1.0"?>', b'<?xml version="1.0"?><!DOCTYPE g [<!ENTITY a "b">]>', "DTD"),
    ],
)
def test_it_shows_why_an_upload_was_refused_and_writes_nothing(
    character, chronicle, storyteller, old: bytes, new: bytes, shown: str
) -> None:
    data = (DATA / "chronicle_camarilla_five_xml.gex").read_bytes()
    assert old in data
    url = f"/admin/characters/chronicle/{chronicle.pk}/grapevine/"
    response = client_for(storyteller).post(
        url, {"file": _upload("five.gex", data.replace(old, new, 1))}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "five.gex" in html
    assert shown in html
    assert "Nothing was imported" in html
    assert list(Character.objects.values_list("name", flat=True)) == ["Janet"]
