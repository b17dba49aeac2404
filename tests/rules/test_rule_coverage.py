"""Every rule ID of RULES.md is cited by a test marker or pinned by a case.

A citation is not coverage: C15 and W13 were cited and wrong. Coverage is a mutation in
``test_mutations.MUTATIONS`` (break the rule, see a case or a test go red); the rules fixed in
issue 7 must each have one. The other rules are, so far, only cited.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.rules.casekit import load_cases

ROOT = Path(__file__).resolve().parents[2]
PROJECT_RULES = ROOT / "tests" / "rules" / "RULES.md"
SHARED_RULES = ROOT.parent / "shared" / "rules" / "RULES.md"
RULE_LINE = re.compile(r"^- ([CWBDGK]\d+) ", re.MULTILINE)
RULE_ID = re.compile(r"\b[CWBDGK]\d+\b")
MARKER = re.compile(r"mark\.rules\(([^)]*)\)")


def rule_ids(path: Path) -> set[str]:
    return set(RULE_LINE.findall(path.read_text(encoding="utf-8")))


def cited_by_tests() -> set[str]:
    cited: set[str] = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        for args in MARKER.findall(path.read_text(encoding="utf-8")):
            cited.update(RULE_ID.findall(args))
    return cited


def pinned_by_cases() -> set[str]:
    return {rule for case in load_cases() for rule in RULE_ID.findall(case.rule)}


def test_it_reads_every_rule_of_the_rulebook() -> None:
    ids = rule_ids(PROJECT_RULES)
    assert {"C1", "C16", "W0", "W14", "B1", "B11", "D1", "D17", "G1", "G9", "K1", "K12"} <= ids


def test_every_rule_is_cited_by_a_test_or_a_case() -> None:
    ids = rule_ids(PROJECT_RULES)
    if SHARED_RULES.exists():
        ids |= rule_ids(SHARED_RULES)
    uncited = ids - cited_by_tests() - pinned_by_cases()
    assert not uncited, f"rules no test or case cites: {sorted(uncited, key=_order)}"


def test_the_rules_fixed_in_issue_7_are_covered_by_mutations() -> None:
    from tests.rules.test_mutations import ISSUE_7_RULES, mutated_rules

    assert mutated_rules() >= ISSUE_7_RULES, sorted(ISSUE_7_RULES - mutated_rules(), key=_order)
    assert mutated_rules() <= rule_ids(PROJECT_RULES), "a mutation names an unknown rule"


def _order(rule: str) -> tuple[str, int]:
    return rule[0], int(rule[1:])
