"""import_grapevine, import_characters and export_characters, end to end."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from characters.models import Character, Chronicle, Trait
from characters.sheet_export import chronicle_export
from characters.sheet_io import sheets_write

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data" / "grapevine"
FIVE = DATA / "chronicle_camarilla_five_xml.gex"


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_imports_a_chronicle_and_reports_counts() -> None:
    assert _run("import_grapevine", str(FIVE), "--chronicle", "Phoenix").splitlines()[0] == (
        "imported 5 characters (5 new, 0 updated)"
    )
    adam = Character.objects.get(name="Adam St. Charles")
    assert adam.chronicle.name == "Phoenix"
    assert adam.traits.get(name="Stalwart").count == 3
    assert adam.powers.filter(name="Celerity: Alacrity").exists()


def test_it_updates_in_place_on_a_second_import() -> None:
    _run("import_grapevine", str(FIVE), "--chronicle", "Phoenix")
    traits = Trait.objects.count()
    assert "(0 new, 5 updated)" in _run("import_grapevine", str(FIVE), "--chronicle", "Phoenix")
    assert Character.objects.count() == 5
    assert Trait.objects.count() == traits


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.gex")))
def test_it_imports_every_sample_or_refuses_it_whole(name: str) -> None:
    path = DATA / name
    if "broken" in name:
        with pytest.raises(CommandError, match=r"line 68, column 5.*nothing was imported"):
            _run("import_grapevine", str(path), "--chronicle", "Broken")
        assert not Chronicle.objects.filter(name="Broken").exists()
        assert not Character.objects.exists()
    else:
        assert "imported" in _run("import_grapevine", str(path), "--chronicle", "Samples")


def test_it_says_when_the_file_cannot_be_read(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot read"):
        _run("import_grapevine", str(tmp_path / "missing.gex"), "--chronicle", "X")


def test_it_round_trips_through_json(tmp_path: Path) -> None:
    _run("import_grapevine", str(FIVE), "--chronicle", "Phoenix")
    out = tmp_path / "phoenix.json"
    _run("export_characters", "--chronicle", "Phoenix", "--output", str(out))
    first = json.loads(out.read_text())
    assert {
        "name",
        "creature",
        "player",
        "npc",
        "traits",
        "negative_traits",
        "abilities",
        "powers",
        "willpower",
        "blood",
        "generation",
        "health",
    } <= set(first["characters"][0])
    assert "imported 5 characters (5 new" in _run(
        "import_characters", str(out), "--chronicle", "Copy"
    )
    copy = chronicle_export(characters=Chronicle.objects.get(name="Copy").characters.all())
    assert copy["characters"] == first["characters"]


def test_it_refuses_json_that_is_not_a_sheet_list(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"characters": [{"creature": "vampire"}]}')
    with pytest.raises(CommandError, match="number 1 has no name"):
        _run("import_characters", str(bad), "--chronicle", "X")
    broken = tmp_path / "broken.json"
    broken.write_text("{oops")
    with pytest.raises(CommandError, match="line 1, column 2"):
        _run("import_characters", str(broken), "--chronicle", "X")
    assert not Character.objects.exists()


def test_it_writes_any_number_of_sheets_in_a_fixed_number_of_queries() -> None:
    def sheets(n: int, traits: int) -> list[dict]:
        return [
            {
                "name": f"PC {i}",
                "traits": {"physical": {f"T{j}": 1 for j in range(traits)}},
                "abilities": {"Dodge": 1},
                "lists": {"Backgrounds": [{"name": "Fame"}]},
            }
            for i in range(n)
        ]

    chronicle = Chronicle.objects.create(name="Load")
    with CaptureQueriesContext(connection) as small:
        sheets_write(chronicle=chronicle, sheets=sheets(2, 2))
    with CaptureQueriesContext(connection) as big:
        sheets_write(chronicle=chronicle, sheets=sheets(50, 30))
    # 25x the characters and 15x the traits: only SQLite's variable limit splits the bulk
    # inserts into a few batches; a query per character or trait would be 50 or 1500 more.
    # Replacing the 2 sheets' rows reads each kind first and bumps their versions once per
    # kind (characters.sheet_versions): a few more, not one per row.
    assert len(big.captured_queries) <= len(small.captured_queries) + 20
    assert Trait.objects.filter(character__chronicle=chronicle).count() == 50 * 30


# Every bad value is refused before anything is written, naming the file, the character, the
# field and why; the same limits hold on SQLite and PostgreSQL.
ADAM = b'name="Adam St. Charles"'


def _five_with(old: bytes, new: bytes) -> bytes:
    data = FIVE.read_bytes()
    assert old in data, old
    return data.replace(old, new, 1)


BAD_GEX = [
    (b'willpower="5"', b'willpower="abc"', "'Adam St. Charles' (number 1), willpower", "whole"),
    (b'<trait name="Tough" val="2"/>', b'<trait name="Tough" val="1e9"/>', "'Tough'", "whole"),
    (b'<trait name="Tough" val="2"/>', b'<trait name="Tough" val="-2"/>', "'Tough'", "from 1"),
    (b'<trait name="Dodge" val="2"/>', b'<trait name="Dodge" val="99999"/>', "Dodge", "32767"),
    (b'blood="12"', b'blood="1000000000"', "(number 1), blood", "32767"),
    (b'generation="11"', b'generation="-3"', "generation", "from 0"),
    (ADAM, b'name="   "', "character number 1", "has no name"),
    (ADAM, b'name="' + b"A" * 50_000 + b'"', "character number 1, name", "limit is 120"),
    (b'<trait name="Healthy" val="2"/>', b'<trait name="Healthy" val="x"/>', "health", "whole"),
    (b'clan="Toreador"', b'clan="' + b"T" * 81 + b'"', "affiliation", "limit is 80"),
]


@pytest.mark.parametrize(("old", "new", "where", "why"), BAD_GEX)
def test_it_refuses_a_bad_grapevine_value_and_writes_nothing(
    tmp_path: Path, old: bytes, new: bytes, where: str, why: str
) -> None:
    bad = tmp_path / "bad.gex"
    bad.write_bytes(_five_with(old, new))
    with pytest.raises(CommandError) as refused:
        _run("import_grapevine", str(bad), "--chronicle", "Fresh Chronicle")
    message = str(refused.value)
    assert "bad.gex" in message
    assert where in message
    assert why in message
    assert "nothing was imported" in message
    assert not Chronicle.objects.exists(), "not even an empty chronicle"
    assert not Character.objects.exists()


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b'<?xml version="1.0" encoding="klingon"?><grapevine/>', "unknown encoding"),
        (b'<?xml version="1.0" encoding="utf-32"?><grapevine/>', "could not be read"),
        (b'<grapevine><vampire name="A\x00B"/></grapevine>', "not well-formed"),
        (b'<grapevine><vampire name="A&#0;B"/></grapevine>', "not well-formed"),
    ],
)
def test_it_refuses_an_unreadable_grapevine_file(tmp_path: Path, data: bytes, why: str) -> None:
    bad = tmp_path / "odd.gex"
    bad.write_bytes(data)
    with pytest.raises(CommandError, match=why):
        _run("import_grapevine", str(bad), "--chronicle", "Fresh Chronicle")
    assert not Chronicle.objects.exists()


def test_it_exits_non_zero_from_the_command_line(tmp_path: Path, monkeypatch) -> None:
    from django.core.management import base

    # run_from_argv closes the connections when it is done: the test database must stay.
    monkeypatch.setattr(base.connections, "close_all", lambda: None)
    bad = tmp_path / "bad.gex"
    bad.write_bytes(_five_with(b'willpower="5"', b'willpower="abc"'))
    with pytest.raises(SystemExit) as exited:
        from django.core.management import ManagementUtility

        ManagementUtility(
            ["manage.py", "import_grapevine", str(bad), "--chronicle", "Fresh Chronicle"]
        ).execute()
    assert exited.value.code != 0
    assert not Chronicle.objects.exists()


def test_it_keeps_a_powers_level_and_note_as_grapevine_wrote_them() -> None:
    _run("import_grapevine", str(FIVE), "--chronicle", "Notes")
    adam = Character.objects.get(name="Adam St. Charles")
    touch = adam.powers.get(name="Auspex: Spirit's Touch")
    assert (touch.level, touch.note) == (6, "int.")
    academics = Character.objects.get(name="Amber Bradbury (NPC)").abilities
    assert academics.get(name="Academics").note == "Anthropology"
    exported = chronicle_export(characters=Character.objects.filter(pk=adam.pk))
    powers = exported["characters"][0]["powers"]
    assert powers["Auspex: Spirit's Touch"] == {"level": 6, "note": "int."}


def _sheet(**fields: object) -> dict:
    return {"name": "Janet", "creature": "vampire", **fields}


BAD_JSON = [
    ({"characters": "Janet"}, "no list of characters"),
    ({"characters": ["Janet"]}, "character number 1 is 'Janet', not a sheet"),
    ({"characters": [_sheet(willpower="3")]}, "willpower must be a whole number, not '3'"),
    ({"characters": [_sheet(willpower=3.5)]}, "willpower must be a whole number, not 3.5"),
    ({"characters": [_sheet(blood=1e9)]}, "blood must be a whole number"),
    ({"characters": [_sheet(blood=10**12)]}, "blood must be from 0 to 32767"),
    ({"characters": [_sheet(rage=-1)]}, "rage must be from 0 to 32767, not -1"),
    ({"characters": [_sheet(npc="yes")]}, "npc must be true or false"),
    ({"characters": [_sheet(creature="dragon")]}, "creature must be one of"),
    ({"characters": [_sheet(name="J" * 50_000)]}, "is 50000 characters long"),
    ({"characters": [_sheet(name="")]}, "character number 1 has no name"),
    ({"characters": [_sheet(name=7)]}, "name must be text, not 7"),
    ({"characters": [_sheet(notes="a\x00b")]}, "notes holds a NUL character"),
    ({"characters": [_sheet(traits=[])]}, "traits must be an object"),
    ({"characters": [_sheet(traits={"spiritual": {"Pure": 1}})]}, "must be one of"),
    ({"characters": [_sheet(traits={"physical": {"Quick": "2"}})]}, "'Quick' must be a whole"),
    ({"characters": [_sheet(traits={"physical": {"Quick": 0}})]}, "from 1 to 32767, not 0"),
    ({"characters": [_sheet(powers={"Celerity": {"level": "x"}})]}, "powers 'Celerity'"),
    ({"characters": [_sheet(health=[{"name": "Hurt", "boxes": 10**6}])]}, "boxes must be"),
    ({"characters": [_sheet(equipment=[{"name": "Gun", "damage": -1}])]}, "damage must be"),
    ({"characters": [_sheet(lists={"Backgrounds": [{"name": ""}]})]}, "name is blank"),
    ({"characters": [_sheet(experience=[{"date": "yesterday"}])]}, "must be an ISO date"),
    ({"characters": [_sheet(experience=[{"change": 2**40}])]}, "change must be from"),
    ({"characters": [_sheet(experience=[{"change": float("nan")}])]}, "change must be a number"),
    ({"characters": [_sheet(experience=[{"earned": float("inf")}])]}, "earned must be a number"),
    ({"characters": [_sheet(experience=[{"change": "0.5"}])]}, "change must be a number"),
    ({"characters": [_sheet(experience=[{"change": 1e9}])]}, "must be from -999999.99"),
    ({"characters": [_sheet(experience=[{"change": 0.125}])]}, "more than 2 decimals"),
    ({"characters": [_sheet(traits={"physical": {"Quick": {"count": 2, "x": 1}}})]}, "unknown"),
    ({"characters": [_sheet(), _sheet()]}, "appears twice"),
]


@pytest.mark.parametrize(("document", "why"), BAD_JSON)
def test_it_refuses_bad_json_values_and_writes_nothing(
    tmp_path: Path, document: dict, why: str
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    with pytest.raises(CommandError) as refused:
        _run("import_characters", str(bad), "--chronicle", "Fresh Chronicle")
    message = str(refused.value)
    assert "bad.json" in message
    assert why in message
    assert "nothing was imported" in message
    assert not Chronicle.objects.exists(), "not even an empty chronicle"
    assert not Character.objects.exists()


def test_it_names_every_bad_value_of_a_file_at_once(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    sheets = [_sheet(name="Janet", willpower=-1), _sheet(name="Cody", blood="x")]
    bad.write_text(json.dumps({"characters": sheets}))
    with pytest.raises(CommandError) as refused:
        _run("import_characters", str(bad), "--chronicle", "X")
    assert "'Janet' (number 1), willpower" in str(refused.value)
    assert "'Cody' (number 2), blood" in str(refused.value)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("Janet".encode("utf-16"), "not UTF-8"),
        (b"\xff\xfe\x00", "not UTF-8"),
        (b"[" * 100_000, "not JSON|nested too deeply"),
    ],
)
def test_it_refuses_a_json_file_it_cannot_read(tmp_path: Path, raw: bytes, why: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(raw)
    with pytest.raises(CommandError, match=why):
        _run("import_characters", str(bad), "--chronicle", "X")
    assert not Chronicle.objects.exists()


def test_it_refuses_a_chronicle_name_the_column_cannot_hold(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"characters": [_sheet()]}))
    with pytest.raises(CommandError, match="chronicle name is 200 characters long"):
        _run("import_characters", str(good), "--chronicle", "C" * 200)
    assert not Chronicle.objects.exists()
