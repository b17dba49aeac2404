"""Real Grapevine files import whole; hostile variants of them are refused whole.

Each hostile variant is built here from a real file's text, and must be refused naming the
file, the character and the field, with nothing written: no chronicle, character or account.
"""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from defusedxml.ElementTree import fromstring
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from characters.models import Character, Chronicle, ExperienceEntry
from characters.sheet_export import chronicle_export

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data" / "grapevine"
SHARED = Path("/work/shared/data/grapevine")
FIVE = DATA / "chronicle_camarilla_five_xml.gex"
ISRAELI = DATA / "israeli_datetime_xml.gex"
REAL = sorted(p for p in DATA.glob("*.gex") if "broken" not in p.name)


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def _import(path: Path, chronicle: str = "Real") -> str:
    return _run("import_grapevine", str(path), "--chronicle", chronicle)


@pytest.mark.skipif(not SHARED.is_dir(), reason="no shared data folder on this machine")
def test_it_keeps_the_projects_copies_the_same_as_the_shared_files() -> None:
    shared = {p.name: p.read_bytes() for p in SHARED.iterdir() if p.is_file()}
    ours = {p.name: p.read_bytes() for p in DATA.iterdir() if p.is_file()}
    assert ours == shared


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_it_imports_every_real_file_whole(path: Path) -> None:
    """Every character, every trait of every list, every experience entry and every
    attribute of the file lands somewhere."""
    _import(path)
    root = fromstring(path.read_bytes())
    for element in root:
        character = Character.objects.get(name=element.get("name"))
        listed = Counter()
        for traitlist in element.iter("traitlist"):
            names = {t.get("name") for t in traitlist.iter("trait")}
            listed[traitlist.get("name")] = len(names)
        kept = (
            character.traits.count()
            + character.abilities.count()
            + character.powers.count()
            + character.health.count()
            + character.equipment.count()
            + character.entries.exclude(list_name="Grapevine").count()
        )
        assert kept == sum(listed.values()), character
        entries = [e for x in element.iter("experience") for e in x.iter("entry")]
        assert character.experience.count() == len(entries)
        columns = {"name", "player", "npc", "generation", "willpower", "blood", "nature"}
        columns |= {"demeanor", "narrator", "clan"}
        grapevine = set(
            character.entries.filter(list_name="Grapevine").values_list("name", flat=True)
        )
        assert set(element.attrib) - columns <= grapevine


def test_it_keeps_the_dates_of_the_day_first_file() -> None:
    _import(ISRAELI)
    dates = {x.date.date().isoformat() for x in ExperienceEntry.objects.all()}
    assert {"2008-10-31", "2009-01-06", "2009-05-04"} <= dates


def _variant(path: Path | str, old: str, new: str) -> str:
    text = path.read_text() if isinstance(path, Path) else path
    assert old in text, old
    return text.replace(old, new, 1)


def test_it_imports_half_points_long_reasons_and_notes_and_exports_them_back(
    tmp_path: Path,
) -> None:
    reason = "Purchased " + ", ".join(f"Lore: Kindred {i}" for i in range(90))
    assert len(reason) >= 1400
    text = _variant(
        ISRAELI,
        '<entry date="08/08/2008" change="5" type="0" reason="" earned="5" unspent="5"/>',
        '<entry date="08/08/2008" change="0.5" type="0" reason="Workshop" earned="4.5" '
        f'unspent="4,5"/><entry date="09/08/2008" change="1" reason="{reason}"/>',
    )
    text = _variant(
        text,
        '<traitlist name="Merits" abc="yes" atomic="yes" display="4">',
        '<traitlist name="Merits" abc="yes" atomic="yes" display="4">'
        f'<trait name="Dual Natured" val="2 or 4" note="{"n" * 3000}"/>',
    )
    text = _variant(
        text, "</vampire>", f"<notes><![CDATA[{'Long night. ' * 5000}]]></notes></vampire>"
    )
    real = tmp_path / "rand.gex"
    real.write_text(text)
    assert "imported 1 characters" in _import(real)
    rand = Character.objects.get(name="Rand McDom")
    half = rand.experience.get(reason="Workshop")
    assert (half.change, half.earned, half.unspent) == (
        Decimal("0.5"),
        Decimal("4.5"),
        Decimal("4.5"),
    )
    assert rand.experience.filter(reason=reason).exists()
    assert len(rand.entries.get(name="Dual Natured").note) == 3000
    assert len(rand.notes) > 50_000
    out = tmp_path / "rand.json"
    _run("export_characters", "--chronicle", "Real", "--output", str(out))
    exported = json.loads(out.read_text())["characters"][0]
    assert {"change": 0.5, "earned": 4.5, "unspent": 4.5}.items() <= next(
        x for x in exported["experience"] if x["reason"] == "Workshop"
    ).items()
    _run("import_characters", str(out), "--chronicle", "Copy")
    copy = chronicle_export(characters=Chronicle.objects.get(name="Copy").characters.all())
    assert copy["characters"][0]["experience"] == exported["experience"]


def test_it_imports_long_trait_and_list_names(tmp_path: Path) -> None:
    languages = (
        "Linguistics: Latin, Greek, Hebrew, Aramaic, Arabic, Spanish, French, German, Italian"
    )
    assert 80 < len(languages) <= 120
    text = _variant(FIVE, '<trait name="Dodge" val="2"/>', f'<trait name="{languages}" val="8"/>')
    text = _variant(text, '<trait name="Energetic"/>', f'<trait name="Energetic{"!" * 100}"/>')
    text = _variant(text, 'name="Locations"', 'name="Locations, havens and haunts of the city"')
    real = tmp_path / "five.gex"
    real.write_text(text)
    _import(real)
    adam = Character.objects.get(name="Adam St. Charles")
    assert adam.abilities.get(name=languages).rating == 8
    assert adam.traits.filter(name__startswith="Energetic!").exists()


def test_it_keeps_unknown_attributes_and_elements_and_says_so(tmp_path: Path) -> None:
    text = _variant(FIVE, 'name="Adam St. Charles"', 'name="Adam St. Charles" aura="+2"')
    text = _variant(text, "</vampire>", "<history>Came from Prague in 1742.</history></vampire>")
    text = _variant(text, "</grapevine>", '<item name="Heavy Pistol" bonus="2"/></grapevine>')
    real = tmp_path / "five.gex"
    real.write_text(text)
    out = _import(real)
    adam = Character.objects.get(name="Adam St. Charles")
    assert adam.entries.get(list_name="Grapevine", name="aura").value == "+2"
    assert "history: Came from Prague in 1742." in adam.notes
    assert "aura" in out and "<history>" in out and "<item> (not a character) (1)" in out


# Hostile variants: (file, old, new, the character and field named, why).
HOSTILE = [
    (FIVE, 'willpower="5"', 'willpower="-5"', "'Adam St. Charles' (number 1), willpower", "from 0"),
    (FIVE, 'willpower="5"', 'willpower="1e9"', "'Adam St. Charles' (number 1), willpower", "whole"),
    (FIVE, 'blood="12"', 'blood="NaN"', "'Adam St. Charles' (number 1), blood", "whole number"),
    (FIVE, 'blood="12"', 'blood="lots"', "'Adam St. Charles' (number 1), blood", "whole number"),
    (
        ISRAELI,
        'change="5" type="0" reason="" earned="5"',
        'change="1e9" type="0" reason="" earned="5"',
        "'Rand McDom' (number 1), experience entry 1 change",
        "must be a number, not '1e9'",
    ),
    (
        ISRAELI,
        'change="5" type="0" reason="" earned="5"',
        'change="5" type="0" reason="" earned="inf"',
        "'Rand McDom' (number 1), experience entry 1 earned",
        "must be a number",
    ),
    (
        ISRAELI,
        'change="5" type="0" reason="" earned="5"',
        'change="NaN" type="0" reason="" earned="5"',
        "experience entry 1 change",
        "must be a number",
    ),
    (
        ISRAELI,
        'change="5" type="0" reason="" earned="5"',
        'change="5" type="0" reason="" earned="1000000"',
        "experience entry 1 earned",
        "must be from -999999.99 to 999999.99",
    ),
    (ISRAELI, 'willpower="2"', 'willpower="two"', "'Rand McDom' (number 1), willpower", "whole"),
    (
        FIVE,
        '<trait name="Stalwart" val="3"/>',
        '<trait name="Stalwart" val="-3"/>',
        "'Adam St. Charles' (number 1), traits 'physical' 'Stalwart'",
        "from 1",
    ),
    (
        FIVE,
        '<trait name="Dodge" val="2"/>',
        '<trait name="Dodge" val="Infinity"/>',
        "'Adam St. Charles' (number 1), abilities 'Dodge'",
        "whole",
    ),
]


@pytest.mark.parametrize(("path", "old", "new", "where", "why"), HOSTILE)
def test_it_refuses_a_hostile_value_naming_file_character_field_and_writes_nothing(
    tmp_path: Path, path: Path, old: str, new: str, where: str, why: str
) -> None:
    users = get_user_model().objects.count()
    bad = tmp_path / f"hostile-{path.name}"
    bad.write_text(_variant(path, old, new))
    with pytest.raises(CommandError) as refused:
        _import(bad, "Fresh Chronicle")
    message = str(refused.value)
    assert f"hostile-{path.name}" in message
    assert where in message
    assert why in message
    assert "nothing was imported" in message
    assert not Chronicle.objects.exists()
    assert not Character.objects.exists()
    assert get_user_model().objects.count() == users, "no account made for the file's player"


def _with_doctype(path: Path, doctype: str, old: str, new: str) -> str:
    text = _variant(path, old, new)
    return text.replace('<?xml version="1.0"?>', f'<?xml version="1.0"?>{doctype}', 1)


XML_ATTACKS = [
    (
        "entity expansion",
        '<!DOCTYPE grapevine [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]>',
        'name="Rand McDom"',
        'name="&c;"',
    ),
    (
        "external entity",
        '<!DOCTYPE grapevine [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
        'name="Rand McDom"',
        'name="&x;"',
    ),
    ("a DTD", '<!DOCTYPE grapevine SYSTEM "http://example.org/g.dtd">', "", ""),
]


@pytest.mark.parametrize(("what", "doctype", "old", "new"), XML_ATTACKS, ids=lambda v: v)
def test_it_refuses_an_xml_bomb(
    tmp_path: Path, what: str, doctype: str, old: str, new: str
) -> None:
    bad = tmp_path / "bomb.gex"
    bad.write_text(_with_doctype(ISRAELI, doctype, old, new))
    with pytest.raises(CommandError, match=r"bomb\.gex: The file was refused.*nothing was"):
        _import(bad, "Fresh Chronicle")
    assert not Chronicle.objects.exists()
    assert not get_user_model().objects.exists()


def test_it_refuses_an_absurdly_big_file_before_reading_it(tmp_path: Path, settings) -> None:
    settings.GRAPEVINE_MAX_BYTES = 50_000
    big = tmp_path / "big.gex"
    big.write_text(_variant(ISRAELI, "</grapevine>", f"<!-- {'x' * 60_000} --></grapevine>"))
    with pytest.raises(CommandError, match=r"big\.gex: the file is \d+ bytes; the limit is 50000"):
        _import(big, "Fresh Chronicle")
    assert not Chronicle.objects.exists()


def test_it_refuses_the_broken_file_with_line_and_column() -> None:
    with pytest.raises(CommandError, match=r"line 68, column 5.*nothing was imported"):
        _import(DATA / "adamstcharles_broken_xml.gex", "Fresh Chronicle")
    assert not Chronicle.objects.exists()
