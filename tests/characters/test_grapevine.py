"""Reading Grapevine 3 files: every list, every locale's dates, broken and hostile files."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from characters.grapevine import GrapevineError, parse_grapevine, read_grapevine

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


# Real files at their worst: what no column of ours expected is kept, never a refusal.


def _one(character_xml: str, root_extra: str = "") -> dict:
    xml = f'<grapevine version="3">{character_xml}{root_extra}</grapevine>'
    (sheet,) = read_grapevine(xml.encode()).sheets
    return sheet


@pytest.mark.parametrize(
    ("written", "day_first", "expected"),
    [
        ("29/10/2008 00:26:48", True, "2008-10-29T00:26:48"),  # Israel
        ("29.10.2008 00:26:48", True, "2008-10-29T00:26:48"),  # Germany
        ("29-10-2008", True, "2008-10-29T00:00:00"),  # Netherlands
        ("2008-10-29 13:05:01", False, "2008-10-29T13:05:01"),  # Sweden, ISO
        ("07/15/2010 18:21:12 PM", False, "2010-07-15T18:21:12"),  # a real file's 24 h + PM
        ("8/5/2003 12:53:01 AM", False, "2003-08-05T00:53:01"),
        ("8/5/2003 12:53:01 PM", False, "2003-08-05T12:53:01"),
        ("13/1/09", False, "2009-01-13T00:00:00"),  # month-first file, a day-first date
        ("1/2/99", True, "1999-02-01T00:00:00"),
        ("12:00:00 AM", False, None),  # a time alone is no date
        ("someday", False, None),
        ("31/02/2008", True, None),
    ],
)
def test_it_reads_dates_of_any_locale(written: str, day_first: bool, expected: str | None) -> None:
    from characters.grapevine import _date

    assert _date(written, day_first) == expected


def test_it_reads_half_points_and_a_decimal_comma_and_long_reasons() -> None:
    reason = "Purchased " + ", ".join(f"Trait {i}" for i in range(160))
    assert len(reason) > 1400
    sheet = _one(
        '<mortal name="M"><experience>'
        '<entry date="2/7/2004" change="0.5" earned="4.5" unspent="4,5" reason="Workshop"/>'
        f'<entry change="1" reason="{reason}"/>'
        "</experience></mortal>"
    )
    first, second = sheet["experience"]
    assert (first["change"], first["earned"], first["unspent"]) == (
        Decimal("0.5"),
        Decimal("4.5"),
        Decimal("4.5"),
    )
    assert second["reason"] == reason


def test_it_rounds_points_past_two_decimals_and_says_so() -> None:
    read = read_grapevine(
        b'<grapevine><mortal name="M"><experience><entry change="0.333"/>'
        b"</experience></mortal></grapevine>"
    )
    assert read.sheets[0]["experience"][0]["change"] == Decimal("0.33")
    assert any("rounded" in line and "0.333 to 0.33" in line for line in read.notes)


def test_it_keeps_unknown_attributes_and_elements_and_says_what_it_left_out() -> None:
    read = read_grapevine(
        b'<grapevine version="3">'
        b'<vampire name="V" sect="Sabbat" aura="+2" tempblood="9">'
        b'<traitlist name="Physical" colour="red"><trait name="Brawny" val="2" note="str"/>'
        b"</traitlist>"
        b"<history><![CDATA[Born in Prague.]]></history><goals/>"
        b'<experience earned="4.5"/></vampire>'
        b'<item name="Sword" damage="2"/><player name="Andrew Sayman" email="a@example.org"/>'
        b"</grapevine>"
    )
    (sheet,) = read.sheets
    kept = {e["name"]: e["value"] for e in sheet["lists"]["Grapevine"]}
    assert kept == {"sect": "Sabbat", "aura": "+2", "tempblood": "9", "experience earned": "4.5"}
    assert "history: Born in Prague." in sheet["notes"]
    assert sheet["traits"]["physical"] == {"Brawny": {"count": 2, "note": "str"}}
    summary = " ".join(read.notes)
    assert "aura, experience earned, sect, tempblood" in summary
    assert "<history>" in summary
    assert "<item> (not a character) (1)" in summary
    assert "<player> (not a character) (1)" in summary
    assert "empty <goals>" in summary
    assert "colour= of <traitlist>" in summary


def test_it_keeps_an_attribute_too_long_for_a_value_in_the_note() -> None:
    sheet = _one(f'<mortal name="M" coterie="{"c" * 500}"/>')
    (entry,) = sheet["lists"]["Grapevine"]
    assert (entry["name"], entry["value"], entry["note"]) == ("coterie", "", "c" * 500)


def test_it_reads_a_windows_file_that_declares_no_encoding() -> None:
    data = '<?xml version="1.0"?><grapevine><mortal name="Zoé Mora"/></grapevine>'
    read = read_grapevine(data.encode("cp1252"))
    assert read.sheets[0]["name"] == "Zoé Mora"
    assert "Windows-1252" in read.notes[0]


def test_it_reads_other_grapevine_types_and_elements_with_trait_lists_as_characters() -> None:
    read = read_grapevine(
        b'<grapevine><kuei-jin name="K"/><hengeyokai name="H"><traitlist name="Physical"/>'
        b"</hengeyokai></grapevine>"
    )
    assert [(s["name"], s["creature"]) for s in read.sheets] == [("K", "other"), ("H", "other")]
    assert read.sheets[0]["lists"]["Grapevine"] == [
        {"name": "type", "value": "kuei-jin", "note": ""}
    ]
