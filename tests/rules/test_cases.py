"""Runs every rules case: the project's copy and every folder in ``RULES_CASES_DIR``.

One test per case id; a failure names the case id and the rule it pins.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from tests.rules import adapters
from tests.rules.casekit import ADAPTERS, Case, load_cases

for _module in pkgutil.iter_modules(adapters.__path__):
    importlib.import_module(f"{adapters.__name__}.{_module.name}")

try:
    from tests.rules.disagreements import KNOWN_DISAGREEMENTS
except ImportError:
    KNOWN_DISAGREEMENTS = {}

CASES = list(load_cases())


def _param(case: Case) -> object:
    """A case that contradicts RULES.md runs as a strict xfail: the engine follows the
    rulebook, and the day the two agree the xfail fails and tells us to drop the entry."""
    marks = []
    if case.id in KNOWN_DISAGREEMENTS:
        marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_DISAGREEMENTS[case.id]))
    return pytest.param(case, id=f"{case.source.parent.name}/{case.id}", marks=marks)


def test_case_ids_are_unique_per_folder() -> None:
    seen: dict[tuple[str, str], str] = {}
    for case in CASES:
        key = (str(case.source.parent), case.id)
        assert key not in seen, f"case id {case.id} appears twice in {case.source.parent}"
        seen[key] = case.source.name


@pytest.mark.parametrize("case", CASES, ids=[f"{c.source.parent.name}/{c.id}" for c in CASES])
def test_case(case: Case) -> None:
    run = ADAPTERS.get((case.kind, case.ruleset))
    assert run is not None, f"{case.label}: the engine has no adapter for kind {case.kind!r}"
    run(case)
