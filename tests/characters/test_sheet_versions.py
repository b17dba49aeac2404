"""Every write to a sheet changes its version, or the sheet cache would show it stale.

Saves and deletes go through the model signals (``characters.sheet_versions``); writes that
send no signal (``QuerySet.update()``, ``bulk_create()``, ``bulk_update()``, raw SQL) must be
followed by ``bump_sheets`` (``bump_ledgers`` after ledger entries alone) in the same
function. The scan below finds every such write in the project's code: one that bumps nothing
fails, unless it is listed in ``NOT_SHEETS`` with what it writes (no sheet row).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from characters.models import Character, LedgerEntry, new_sheet_version
from characters.sheet_versions import SHEET_ROWS, rows_part
from tests.factories import CharacterFactory, TraitFactory

ROOT = Path(__file__).resolve().parents[2]
# bench/ runs against databases of its own (``_tapcost``), never under a serving process.
SKIPPED_DIRS = {"tests", "bench", ".venv", "node_modules", "static", "templates", "var", ".git"}

BULK = {"bulk_create", "bulk_update", "_raw_delete", "_update", "_insert", "raw"}
RAW_SQL = {"execute", "executemany", "RunSQL"}
QUERYSET_HINTS = (
    "objects",
    ".filter(",
    ".exclude(",
    ".all()",
    ".select_for_update(",
    *(f".{name}" for name in ("traits", "abilities", "powers", "attributes", "entries")),
    *(f".{name}" for name in ("health", "equipment", "ledger", "characters", "experience")),
)

# Writes in bulk that touch no sheet row: (file, what is written to, how) -> what it is.
NOT_SHEETS: dict[tuple[str, str, str], str] = {
    ("characters/cards.py", "LoginCard.objects.filter(pk__in=[c.pk for c in cards])", "update"): (
        "login cards"
    ),
    ("characters/import_players.py", "model.objects", "bulk_create"): "user accounts",
    ("characters/management/commands/backup.py", "target", "execute"): "a PRAGMA check",
    ("chases/recording.py", "ChaseRoll.objects", "bulk_create"): "a chase's rolls",
    ("config/health.py", "cursor", "execute"): "SELECT 1",
    ("characters/sheet_versions.py", "cursor", "execute"): (
        "insert_ledger_entry: a ledger entry's INSERT with its character's bump, one statement"
    ),
    ("config/prepared.py", "cursor", "execute"): (
        "a queryset's SELECT or UPDATE compiled once, save_row's UPDATE, insert_rows' INSERT: "
        "sheet models are refused or saved by save() (keep_signals)"
    ),
    ("config/prepared.py", "model._default_manager.using(alias)", "bulk_create"): (
        "insert_rows on a database that cannot return ids: sheet models refused (keep_signals)"
    ),
    ("config/sessions.py", "cursor", "execute"): "a session's SELECT",
    ("config/prepared.py", "super()", "execute"): "statement_cursor passing a statement on",
    ("config/prepared.py", "queryset", "update"): (
        "a prepared UPDATE of a long list, run by the ORM: sheet models refused (keep_signals)"
    ),
    ("combat/own_log.py", "cursor", "execute"): "a SELECT of players' own logs",
    ("combat/selectors.py", "cursor", "execute"): "a SELECT of the sheets' counter (sheet_seq)",
    ("combat/hub.py", "pipe", "execute"): "a Redis pipeline",
    ("combat/hub.py", "mine", "update"): "presence rows",
    ("combat/render_cache.py", "", "execute"): "a wrapper that passes each query on",
    ("characters/idempotency.py", "cursor", "execute"): "an idempotency key claimed",
    (
        "combat/migrations/0004_scene_players_seq.py",
        "apps.get_model('combat', 'Scene').objects",
        "update",
    ): "scenes",
    ("combat/rounds/planning.py", "plan", "update"): "a dict",
    ("combat/challenges/board_reads.py", "Scene.objects.filter(pk=scene_id)", "update"): (
        "a scene's count of finished challenges (recount)"
    ),
    ("combat/migrations/0009_log_characters_newest.py", "migrations", "RunSQL"): (
        "an index on the log lines' characters"
    ),
    ("combat/migrations/0010_participant_last_started.py", "Participant.objects", "update"): (
        "participants' latest challenge started (Participant.last_started)"
    ),
}


_listed_and_found: set[tuple[str, str, str]] = set()


def _python_files() -> list[Path]:
    files = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if not set(parts[:-1]) & SKIPPED_DIRS:
            files.append(path)
    return files


def _is_bulk_write(call: ast.Call) -> tuple[str, str] | None:
    """(receiver, method) of a write that sends no model signal, else None."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in RAW_SQL:
        return ("", func.id)
    if not isinstance(func, ast.Attribute):
        return None
    receiver = ast.unparse(func.value)
    if func.attr in BULK or func.attr in RAW_SQL:
        return (receiver, func.attr)
    if func.attr == "update":
        looks_like_a_queryset = any(hint in receiver for hint in QUERYSET_HINTS)
        keywords_only = bool(call.keywords) and not call.args
        if looks_like_a_queryset or keywords_only:
            return (receiver, func.attr)
    return None


def _is_bump(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
    return name in ("bump_sheets", "bump_ledgers") or any(
        k.arg == "sheet_version" for k in node.keywords
    )


def _unbumped_writes(path: Path) -> list[tuple[str, str, str, int]]:
    """Writes without a signal not followed by a bump further down the same function."""
    tree = ast.parse(path.read_text(), filename=str(path))
    rel = path.relative_to(ROOT).as_posix()
    found = []
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, functions))]:
        own = list(_own_nodes(scope))
        bumps = [n.lineno for n in own if _is_bump(n)]
        for node in own:
            write = _is_bulk_write(node) if isinstance(node, ast.Call) else None
            if write is None or _is_bump(node):
                continue
            receiver, how = write
            if any(line > node.lineno for line in bumps):
                continue
            if (rel, receiver, how) in NOT_SHEETS:
                _listed_and_found.add((rel, receiver, how))
            else:
                found.append((rel, receiver, how, node.lineno))
    return found


def _own_nodes(scope: ast.AST):
    """The nodes of a module or function, not of the functions and classes inside it."""
    for child in ast.iter_child_nodes(scope):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if isinstance(scope, ast.Module) and isinstance(child, ast.ClassDef):
                yield from _own_nodes(child)  # a class body's statements run at import
            continue
        yield child
        yield from _own_nodes(child)


def test_every_write_in_bulk_to_sheets_bumps_their_versions() -> None:
    files = _python_files()
    assert any(p.name == "sheet_io.py" for p in files)  # the scan does see the code
    found = [w for path in files for w in _unbumped_writes(path)]
    assert found == [], (
        "Writes that send no model signal and bump no sheet version "
        "(call characters.sheet_versions.bump_sheets after them, or list them in NOT_SHEETS "
        f"if they write no sheet row): {found}"
    )
    assert set(NOT_SHEETS) == _listed_and_found, "NOT_SHEETS lists writes no longer there"


def test_the_scan_finds_a_write_in_bulk_without_a_bump(tmp_path) -> None:
    code = tmp_path / "writes.py"
    code.write_text(
        "def refresh(ids):\n"
        "    Trait.objects.filter(pk__in=ids).update(count=1)\n"
        "def imported(rows):\n"
        "    model.objects.bulk_create(rows)\n"
        "    bump_sheets([r.character_id for r in rows])\n"
        "def bumped_too_early(ids, qs):\n"
        "    bump_sheets(ids)\n"
        "    qs.update(count=2)\n"
        "def raw(cursor):\n"
        "    cursor.execute('UPDATE characters_trait SET count = 1')\n"
    )
    global ROOT
    root, ROOT = ROOT, tmp_path
    try:
        found = _unbumped_writes(code)
    finally:
        ROOT = root
    assert [(how, line) for _file, _receiver, how, line in found] == [
        ("update", 2),
        ("update", 8),
        ("execute", 10),
    ]


def test_data_migrations_of_the_characters_app_bump_what_they_write() -> None:
    """A migration run while servers are up changes rows under their caches: one that writes
    sheet rows must write ``sheet_version`` too (historic models have no signals)."""
    sheets = {m.__name__ for m in (*SHEET_ROWS, Character)}
    for path in sorted((ROOT / "characters" / "migrations").glob("0*.py")):
        text = path.read_text()
        if "RunPython" not in text and "RunSQL" not in text:
            continue
        touches = any(f'"{name}"' in text or f"'{name}'" in text for name in sheets)
        touches = touches or "characters_" in text.replace("characters_group", "")
        assert not touches or "sheet_version" in text, path.name


# -- the signals --------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("model", SHEET_ROWS, ids=lambda m: m.__name__)
def test_saving_or_deleting_any_sheet_row_bumps_its_character(model, chronicle) -> None:
    character = CharacterFactory(chronicle=chronicle)
    other = CharacterFactory(chronicle=chronicle)

    def version(c: Character) -> int:
        return Character.objects.values_list("sheet_version", flat=True).get(pk=c.pk)

    before, untouched = version(character), version(other)
    if model is LedgerEntry:
        row = model.objects.create(
            character=character, game_night=chronicle.game_nights.get(), kind="willpower_spent"
        )
    else:
        field = {f.name for f in model._meta.fields}
        row = model.objects.create(
            character=character,
            name="X",
            **({"category": "social"} if "category" in field else {}),
            **({"list_name": "Backgrounds"} if "list_name" in field else {}),
        )
    saved = version(character)
    assert saved != before
    # a ledger entry keeps the part of the version the sheet's other rows are cached on
    assert (rows_part(saved) == rows_part(before)) == (model is LedgerEntry)
    if model is not LedgerEntry:  # entries are never deleted (PROTECT keeps reversals)
        row.delete()
        assert version(character) != saved
    assert version(other) == untouched


@pytest.mark.django_db
def test_deleting_a_character_does_not_bump_it_row_by_row(
    chronicle, django_assert_max_num_queries
) -> None:
    character = CharacterFactory(chronicle=chronicle)
    for i in range(20):
        TraitFactory(character=character, category="mental", name=f"T{i}")
    with django_assert_max_num_queries(25):
        character.delete()


@pytest.mark.django_db
def test_a_character_saved_draws_its_rows_part_anew(chronicle) -> None:
    character = CharacterFactory(chronicle=chronicle)
    before = character.sheet_version
    character.save(update_fields=["willpower"])
    assert rows_part(character.sheet_version) != rows_part(before)


@pytest.mark.django_db
def test_a_ledger_bump_is_never_the_version_it_replaces(chronicle) -> None:
    character = CharacterFactory(chronicle=chronicle)
    night = chronicle.game_nights.get()
    seen = {character.sheet_version}
    for _ in range(20):
        LedgerEntry.objects.create(character=character, game_night=night, kind="willpower_spent")
        seen.add(Character.objects.values_list("sheet_version", flat=True).get(pk=character.pk))
    assert len(seen) == 21 and min(seen) > 0
    assert len({rows_part(v) for v in seen}) == 1


@pytest.mark.django_db
def test_a_ledger_entry_inserted_with_its_bump_in_one_statement(chronicle) -> None:
    """``insert_ledger_entry`` writes the entry as ``save()`` does and draws the ledger's bits
    of the version anew as its receiver does (the rows' part kept, never the version it
    replaces); on PostgreSQL in one statement (issue 21: a challenge's loss)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from characters.sheet_versions import insert_ledger_entry

    character = CharacterFactory(chronicle=chronicle)
    night = chronicle.game_nights.get()
    seen = {character.sheet_version}
    for n in range(5):
        entry = LedgerEntry(
            character=character, game_night=night, kind="trait_lost", subject="Quick",
            category="physical", amount=1, reason=f"loss {n}",
        )  # fmt: skip
        with CaptureQueriesContext(connection) as captured:
            insert_ledger_entry(entry)
        assert len(captured) == (1 if connection.vendor == "postgresql" else 2)
        stored = LedgerEntry.objects.get(pk=entry.pk)
        assert (stored.reason, stored.character_id, stored.created_at) == (
            f"loss {n}",
            character.pk,
            entry.created_at,
        )
        assert not entry._state.adding
        seen.add(Character.objects.values_list("sheet_version", flat=True).get(pk=character.pk))
    assert len(seen) == 6 and min(seen) > 0
    assert len({rows_part(v) for v in seen}) == 1


def test_a_version_is_never_zero_and_rarely_the_same() -> None:
    versions = {new_sheet_version() for _ in range(1000)}
    assert len(versions) == 1000 and min(versions) > 0


@pytest.mark.django_db
def test_a_ledger_entry_inserted_in_one_statement_still_reaches_a_receiver_added_later(
    chronicle,
) -> None:
    """The one-statement insert sends no ``post_save``: a receiver of new ledger entries
    connected later (a report's cache, say) makes it save by ``save()``, and hears it."""
    from django.db.models.signals import post_save

    from characters.sheet_versions import insert_ledger_entry

    character = CharacterFactory(chronicle=chronicle)
    heard: list[int] = []

    def receiver(sender, instance, created, **kwargs) -> None:
        heard.append(instance.pk)

    post_save.connect(receiver, sender=LedgerEntry, dispatch_uid="test.later")
    try:
        entry = LedgerEntry(
            character=character, game_night=chronicle.game_nights.get(), kind="trait_lost",
            subject="Quick", category="physical", amount=1, reason="loss",
        )  # fmt: skip
        before = character.sheet_version
        insert_ledger_entry(entry)
    finally:
        post_save.disconnect(sender=LedgerEntry, dispatch_uid="test.later")
    assert heard == [entry.pk]
    after = Character.objects.values_list("sheet_version", flat=True).get(pk=character.pk)
    assert after != before and rows_part(after) == rows_part(before)
