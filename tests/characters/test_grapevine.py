"""Reading Grapevine 3 files: every list, every locale's dates, broken and hostile files."""

from __future__ import annotations

from pathlib import Path

import pytest

from characters.grapevine import GrapevineError, parse_grapevine

DATA = Path(__file__).parent / "data" / "grapevine"


def _file(name: str) -> bytes:
    return (DATA / name).read_bytes()


def test_it_reads_every_character_and_list_of_a_chronicle() -> None:
    sheets = parse_grapevine(_file("chronicle_camarilla_five_xml.gex"))
    assert len(sheets) == 5
    adam = next(s for s in sheets if s["name"] == "Adam St. Charles")
    assert adam["creature"] == "vampire"
    assert adam["affiliation"] == "Toreador"
    assert (adam["generation"], adam["blood"], adam["willpower"]) == (11, 12, 5)
    assert adam["npc"] is True
    assert adam["traits"]["physical"] == {"Energetic": 1, "Stalwart": 3, "Tough": 2}
    assert adam["negative_traits"]["mental"] == {"Ignorant": 2, "Impatient": 1}
    assert adam["abilities"]["Dodge"] == 2
    assert adam["powers"]["Celerity: Alacrity"] == {"level": 3, "note": "basic"}
    assert [h["name"] for h in adam["health"]][:3] == ["Healthy", "Bruised", "Wounded"]
    assert {"Backgrounds", "Status"} <= set(adam["lists"])
    assert adam["equipment"][0]["bonus_traits"] == 2
    assert adam["equipment"][0]["damage_type"] == "lethal"
    assert adam["narrator"] == "Shuniqua Rodriguez"


def test_it_keeps_notes_and_experience() -> None:
    sheets = parse_grapevine(_file("chronicle_camarilla_five_xml.gex"))
    assert any("warrior poet" in s["notes"] for s in sheets)
    adam = next(s for s in sheets if s["name"] == "Adam St. Charles")
    assert [x["change"] for x in adam["experience"]] == [1, 1]
    assert adam["experience"][1]["date"] == "2010-12-23T00:00:00"
    assert adam["experience"][0]["date"] is None, "a time alone is no date"


def test_it_reads_day_first_dates() -> None:
    (rand,) = parse_grapevine(_file("israeli_datetime_xml.gex"))
    dates = [x["date"] for x in rand["experience"]]
    assert "2008-10-31T22:15:37" in dates
    assert "2008-08-08T00:00:00" in dates  # 08/08 is the same either way
    assert "2009-01-06T00:00:00" in dates  # 06/01/2009 read day-first
    assert rand["player"] == "Nobody"


@pytest.mark.parametrize(
    ("stamp", "expected"),
    [
        ("5/13/2003 9:46:08 AM", "2003-05-13T09:46:08"),
        ("8/5/2003 5:53:01 PM", "2003-08-05T17:53:01"),
        ("11/23/2000", "2000-11-23T00:00:00"),
    ],
)
def test_it_reads_us_dates(stamp: str, expected: str) -> None:
    entry = f'<experience><entry date="{stamp}" change="1"/></experience>'
    xml = f'<grapevine version="3"><mortal name="X">{entry}</mortal></grapevine>'
    (sheet,) = parse_grapevine(xml.encode())
    assert sheet["experience"][0]["date"] == expected
    assert sheet["creature"] == "mortal"


def test_it_says_where_a_broken_file_breaks() -> None:
    with pytest.raises(GrapevineError) as caught:
        parse_grapevine(_file("adamstcharles_broken_xml.gex"))
    assert (caught.value.line, caught.value.column) == (68, 5)
    assert "line 68, column 5" in str(caught.value)


def test_it_refuses_entity_expansion() -> None:
    bomb = (
        b'<?xml version="1.0"?><!DOCTYPE g [<!ENTITY a "aaaaaaaaaa">'
        b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;">]><grapevine version="3">'
        b'<mortal name="&b;"/></grapevine>'
    )
    with pytest.raises(GrapevineError, match="refused"):
        parse_grapevine(bomb)


def test_it_refuses_external_entities() -> None:
    xxe = (
        b'<?xml version="1.0"?><!DOCTYPE g [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        b'<grapevine version="3"><mortal name="&x;"/></grapevine>'
    )
    with pytest.raises(GrapevineError, match="refused"):
        parse_grapevine(xxe)


def test_it_refuses_a_file_over_the_size_cap() -> None:
    with pytest.raises(GrapevineError, match="limit is 100 bytes"):
        parse_grapevine(_file("israeli_datetime_xml.gex"), max_bytes=100)


def test_it_refuses_xml_that_is_not_grapevine() -> None:
    with pytest.raises(GrapevineError, match="not a Grapevine 3 file"):
        parse_grapevine(b"<html><body/></html>")
