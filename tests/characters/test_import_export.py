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
from characters.sheet_io import chronicle_export, sheets_write
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
DATA = Path(__file__).parent / "data" / "grapevine"
FIVE = DATA / "chronicle_camarilla_five_xml.gex"


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_it_imports_a_chronicle_and_reports_counts() -> None:
    assert _run("import_grapevine", str(FIVE), "--chronicle", "Phoenix").strip() == (
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


def test_it_links_a_grapevine_player_to_the_user_of_that_name() -> None:
    nobody = UserFactory(username="nobody")
    _run("import_grapevine", str(DATA / "israeli_datetime_xml.gex"), "--chronicle", "Israel")
    assert Character.objects.get(name="Rand McDom").player == nobody


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
    assert len(big.captured_queries) <= len(small.captured_queries) + 12
    assert Trait.objects.filter(character__chronicle=chronicle).count() == 50 * 30
