"""The engine is pure Python: no Django, no I/O, no hidden randomness."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE_FILES = [*sorted((ROOT / "combat" / "rules").rglob("*.py")), ROOT / "chases" / "rules.py"]
FORBIDDEN_MODULES = {"django", "channels", "asgiref", "requests", "socket", "sqlite3", "psycopg"}
FORBIDDEN_CALLS = {"open", "input", "print"}


def _imports(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _roots(modules: set[str]) -> set[str]:
    return {module.split(".")[0] for module in modules}


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_it_imports_neither_django_nor_io(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert not _roots(_imports(tree)) & FORBIDDEN_MODULES
    calls = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not calls & FORBIDDEN_CALLS, f"{path.name} does I/O: {calls & FORBIDDEN_CALLS}"


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_it_takes_its_randomness_as_an_argument(path: Path) -> None:
    """Dice and throws are passed in (a ``random.Random`` the caller owns), never global."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "random":
            names = {alias.name for alias in node.names}
            assert names <= {"Random"}, f"{path.name} imports {names} from random"
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "random"
        ):
            assert node.attr == "Random", f"{path.name} calls random.{node.attr}"


def test_it_finds_the_engine_files() -> None:
    assert len(ENGINE_FILES) > 1
    assert (ROOT / "chases" / "rules.py") in ENGINE_FILES


def test_the_guard_catches_a_django_import() -> None:
    tree = ast.parse("from django.db import models\nimport json\n")
    assert _roots(_imports(tree)) & FORBIDDEN_MODULES == {"django"}
