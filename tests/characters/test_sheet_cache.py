"""The per-process sheet cache: a read is one query, and every change shows on the next read.

Each test below fails without one part of the cache's key or one bump of a sheet version
(``characters.sheet_cache``, ``characters.sheet_versions``).
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.db import transaction

from characters import services, sheet_cache
from characters.models import Character, Equipment, LedgerKind, Trait
from characters.sheet_io import sheets_import
from characters.sheet_versions import bump_sheets
from tests.conftest import client_for
from tests.factories import (
    AbilityFactory,
    CharacterFactory,
    PowerFactory,
    TraitFactory,
    lose_a_trait,
)

pytestmark = pytest.mark.django_db


def read(character: Character) -> tuple[Character, dict]:
    return sheet_cache.sheets([character.pk])[character.pk]


def social(character: Character) -> dict[str, int]:
    return read(character)[1]["traits"].get("social", {})


# -- one query a read ---------------------------------------------------------------------------


def test_a_sheet_read_again_unchanged_is_one_query(character, django_assert_num_queries) -> None:
    other = CharacterFactory(chronicle=character.chronicle, name="Cody")
    sheet_cache.clear()
    with django_assert_num_queries(9):  # the rows, 7 kinds of sheet rows, the ledger
        first = sheet_cache.sheets([character.pk, other.pk])
    with django_assert_num_queries(1):
        again = sheet_cache.sheets([character.pk, other.pk])
    assert again[character.pk][1] == first[character.pk][1]
    with django_assert_num_queries(0):  # its rows come with it
        names = [t.name for t in again[character.pk][0].traits.all()]
        assert [a.name for a in again[character.pk][0].abilities.all()] == []
    assert names == ["Quick", "Charismatic", "Tactless"]


def test_only_the_changed_sheets_are_read_again(character, django_assert_num_queries) -> None:
    others = [CharacterFactory(chronicle=character.chronicle, name=n) for n in ("A", "B")]
    ids = [character.pk, *(o.pk for o in others)]
    sheet_cache.sheets(ids)
    TraitFactory(character=others[0], category="mental", name="Clever")
    with django_assert_num_queries(9):  # the same 9 for the one changed sheet
        now = sheet_cache.sheets(ids)
    assert now[others[0].pk][1]["traits"]["mental"] == {"Clever": 1}


def test_a_ledger_write_reads_the_ledger_alone(character, django_assert_num_queries) -> None:
    first = read(character)
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=None)
    with django_assert_num_queries(2):  # the row, the ledger: the sheet's rows are kept
        again = read(character)
    assert (first[1]["willpower"], again[1]["willpower"]) == (3, 2)
    assert again[0].traits.all() is first[0].traits.all()  # the same rows, not read again


def test_a_refresh_reads_the_ledgers_alone(character, storyteller, django_assert_num_queries):
    other = CharacterFactory(chronicle=character.chronicle, name="Cody")
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=None)
    sheet_cache.sheets([character.pk, other.pk])
    services.game_night_refresh(chronicle=character.chronicle, by=storyteller)
    with django_assert_num_queries(2):
        now = sheet_cache.sheets([character.pk, other.pk])
    assert now[character.pk][1]["willpower"] == 3


def test_a_row_written_after_a_ledger_write_is_read_again(character) -> None:
    read(character)
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=None)
    read(character)  # the ledger alone read again
    TraitFactory(character=character, category="mental", name="Clever")
    assert read(character)[1]["traits"]["mental"] == {"Clever": 1}
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=None)
    assert read(character)[1]["traits"]["mental"] == {"Clever": 1}  # kept with the new rows


def test_a_missing_character_is_left_out(character) -> None:
    assert set(sheet_cache.sheets([character.pk, 10**9])) == {character.pk}


# -- every change shows on the next read --------------------------------------------------------


class _Form(HTMLParser):
    """The values a browser would post for the page's form (checked boxes, selected options)."""

    def __init__(self) -> None:
        super().__init__()
        self.data: dict[str, str] = {}
        self._select: str | None = None
        self._textarea: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        name = a.get("name")
        if tag == "input" and name and a.get("type") not in ("submit", "button", "file"):
            if a.get("type") in ("checkbox", "radio") and "checked" not in a:
                return
            self.data[name] = a.get("value") or ("on" if a.get("type") == "checkbox" else "")
        elif tag == "select" and name:
            self._select = name
            self.data.setdefault(name, "")
        elif tag == "option" and self._select and "selected" in a:
            self.data[self._select] = a.get("value") or ""
        elif tag == "textarea" and name:
            self._textarea = name
            self.data[name] = ""

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self.data[self._textarea] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None
        elif tag == "textarea":
            self._textarea = None


def admin_sets_trait_count(storyteller, character, name: str, count: int):
    """The storyteller sets a trait's count on the character's admin page (its whole form
    posted back as the browser would); Django admin's answer."""
    client = client_for(storyteller)
    url = f"/admin/characters/character/{character.pk}/change/"
    form = _Form()
    form.feed(client.get(url).content.decode())
    field = next(k for k, v in form.data.items() if k.endswith("-name") and v == name)
    form.data[field.replace("-name", "-count")] = str(count)
    return client.post(url, form.data)


def test_a_trait_edited_in_the_admin_shows(character, storyteller) -> None:
    assert social(character) == {"Charismatic": 3}
    answer = admin_sets_trait_count(storyteller, character, "Charismatic", 5)
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert social(character) == {"Charismatic": 5}


def test_a_trait_deleted_shows(character) -> None:
    assert social(character) == {"Charismatic": 3}
    Trait.objects.get(character=character, name="Charismatic").delete()
    assert social(character) == {}


def test_sheet_rows_deleted_in_bulk_show(character) -> None:
    assert social(character) == {"Charismatic": 3}
    Trait.objects.filter(character=character, category="social").delete()
    assert social(character) == {}


@pytest.mark.parametrize(
    "write",
    [
        lambda c: AbilityFactory(character=c, name="Dodge"),
        lambda c: PowerFactory(character=c, name="Celerity"),
        lambda c: c.attributes.create(name="Wits", value=2),
        lambda c: c.health.create(name="Bruised", boxes=2),
        lambda c: Equipment.objects.create(character=c, name="Knife", kind="weapon"),
        lambda c: c.entries.create(list_name="Backgrounds", name="Fame"),
    ],
    ids=["ability", "power", "attribute", "health", "equipment", "entry"],
)
def test_each_kind_of_sheet_row_written_shows(character, write) -> None:
    before = read(character)[0]
    before_rows = {name: list(qs) for name, qs in before._prefetched_objects_cache.items()}
    write(character)
    after = read(character)[0]
    after_rows = {name: list(qs) for name, qs in after._prefetched_objects_cache.items()}
    assert after_rows != before_rows


def test_the_characters_own_fields_show(character) -> None:
    assert read(character)[1]["willpower"] == 3
    character.willpower = 5
    character.save(update_fields=["willpower"])  # a save of some fields bumps too
    assert read(character)[1]["willpower"] == 5
    assert read(character)[0].sheet_version == character.sheet_version  # the one written
    character.refresh_from_db()
    character.willpower = 4
    character.save()
    assert read(character)[1]["willpower"] == 4


def test_a_ledger_entry_shows(character) -> None:
    assert social(character) == {"Charismatic": 3}
    lose_a_trait(character)
    assert social(character) == {"Charismatic": 2}
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=None)
    assert read(character)[1]["willpower"] == 2


def test_a_new_game_night_shows(character, storyteller) -> None:
    lose_a_trait(character)
    assert social(character) == {"Charismatic": 2}
    services.game_night_open(chronicle=character.chronicle, by=storyteller)
    assert social(character) == {"Charismatic": 3}  # lost traits come back with the night


def test_a_refresh_written_in_bulk_shows(character, storyteller) -> None:
    services.ledger_spend(character=character, kind=LedgerKind.WILLPOWER_SPENT, by=None)
    assert read(character)[1]["willpower"] == 2
    services.game_night_refresh(chronicle=character.chronicle, by=storyteller)
    assert read(character)[1]["willpower"] == 3


def test_an_import_over_the_sheet_shows(character) -> None:
    bare = CharacterFactory(chronicle=character.chronicle, name="Bare", willpower=1)
    assert social(character) == {"Charismatic": 3}
    assert (social(bare), read(bare)[1]["willpower"]) == ({}, 1)
    sheets = [
        {"name": "Janet", "willpower": 6, "traits": {"social": {"Witty": 2}}},
        {"name": "Bare", "willpower": 2, "traits": {"social": {"Sly": 1}}},  # no rows to delete
    ]
    sheets_import(chronicle_name=character.chronicle.name, sheets=sheets)
    assert social(character) == {"Witty": 2}
    assert read(character)[1]["willpower"] == 6
    assert (social(bare), read(bare)[1]["willpower"]) == ({"Sly": 1}, 2)


def test_a_new_ruleset_of_the_chronicle_shows(character) -> None:
    track = [level["name"] for level in read(character)[1]["health"]["levels"]]
    assert track[0] == "Healthy"  # no track of its own: the ruleset's
    chronicle = character.chronicle
    chronicle.ruleset = "wod_dice"
    chronicle.save()
    assert read(character)[1]["health"]["levels"][0]["name"] == "Bruised"


def test_a_bulk_write_shows_once_bumped(character) -> None:
    assert social(character) == {"Charismatic": 3}
    Trait.objects.filter(character=character, name="Charismatic").update(count=4)
    bump_sheets([character.pk])
    assert social(character) == {"Charismatic": 4}


def test_a_version_read_in_a_rolled_back_write_is_never_used_again(character) -> None:
    trait = Trait.objects.get(character=character, name="Charismatic")
    with pytest.raises(RuntimeError), transaction.atomic():
        trait.count = 5
        trait.save()
        assert social(character) == {"Charismatic": 5}  # cached under a version rolled back
        raise RuntimeError
    trait.refresh_from_db()
    assert trait.count == 3  # (read from the cache now, it would replace the entry)
    trait.count = 4
    trait.save()  # a counter would give it the rolled-back version again
    assert social(character) == {"Charismatic": 4}


# -- bounded, and readers never share what they could change ------------------------------------


def test_it_keeps_at_most_its_size_one_entry_a_character(character, settings) -> None:
    settings.SHEET_CACHE_SIZE = 3
    sheet_cache.clear()
    more = [CharacterFactory(chronicle=character.chronicle, name=f"N{i}") for i in range(4)]
    sheet_cache.sheets([character.pk])
    for other in more:
        sheet_cache.sheets([other.pk])
        assert sheet_cache.cached_count() <= 3
    assert sheet_cache.cached_count() == 3
    for count in range(2, 6):  # a new version replaces its character's entry
        TraitFactory(character=more[-1], category="mental", name=f"M{count}")
        sheet_cache.sheets([more[-1].pk])
    assert sheet_cache.cached_count() == 3
    sheet_cache.sheets([c.pk for c in more])  # more at once than it keeps: all answered
    assert sheet_cache.cached_count() == 3


def test_a_reader_changing_what_it_got_changes_nobody_elses(
    character, django_assert_num_queries
) -> None:
    mine, now = read(character)
    now["traits"]["social"]["Charismatic"] = 0
    now["health"]["levels"][0]["boxes"][0] = "lethal"
    now["ledger"].append("junk")
    mine.name = "Someone else"
    mine._prefetched_objects_cache.pop("traits")
    theirs, fresh = read(character)
    assert theirs is not mine and theirs.name == "Janet"
    assert fresh["traits"]["social"] == {"Charismatic": 3}
    assert fresh["health"]["levels"][0]["boxes"][0] is None and fresh["ledger"] == []
    with django_assert_num_queries(0):  # still cached, not dropped by the other reader
        assert [t.name for t in theirs.traits.all()] == ["Quick", "Charismatic", "Tactless"]
