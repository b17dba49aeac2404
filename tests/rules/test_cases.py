"""Runs every rules case: the project's copy and every folder in ``RULES_CASES_DIR``.

One test per case id; a failure names the case id and the rule it pins. A case that RULES.md
contradicts is not marked as an expected failure: the case or the engine gets fixed, and the
report names the case id.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

from tests.rules import adapters
from tests.rules.casekit import ADAPTERS, Case, check_refused_indices, load_cases

for _module in pkgutil.iter_modules(adapters.__path__):
    importlib.import_module(f"{adapters.__name__}.{_module.name}")

CASES = list(load_cases())


def run_case(case: Case) -> None:
    """Run one case through its adapter (also used by the mutation checks)."""
    run = ADAPTERS.get((case.kind, case.ruleset))
    assert run is not None, f"{case.label}: the engine has no adapter for kind {case.kind!r}"
    check_refused_indices(case)
    run(case)


def test_case_ids_are_unique_per_folder() -> None:
    seen: dict[tuple[str, str], str] = {}
    for case in CASES:
        key = (str(case.source.parent), case.id)
        assert key not in seen, f"case id {case.id} appears twice in {case.source.parent}"
        seen[key] = case.source.name


@pytest.mark.parametrize("case", CASES, ids=[f"{c.source.parent.name}/{c.id}" for c in CASES])
def test_case(case: Case) -> None:
    run_case(case)
