"""Loading the JSON rules cases and checking an engine's answers against them.

The cases' format is described in ``../shared/rules/cases/FORMAT.md``. The project runs its
own copy (``tests/rules/cases/``) and every ``*.json`` in the folder named by the environment
variable ``RULES_CASES_DIR``.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

CASES_DIR = Path(__file__).parent / "cases"


@dataclass(frozen=True)
class Case:
    """One case of a case file, with where it came from for failure messages."""

    id: str
    ruleset: str
    kind: str
    rule: str
    given: Mapping[str, Any]
    steps: list[Mapping[str, Any]]
    expect: Mapping[str, Any]
    source: Path

    @property
    def label(self) -> str:
        return f"case {self.id} ({self.ruleset}, rule {self.rule}, {self.source.name})"

    @property
    def refused(self) -> set[int]:
        return set(self.expect.get("refused", []))


def case_dirs() -> list[Path]:
    """The project's copy of the cases, then the folders named by ``RULES_CASES_DIR``."""
    dirs = [CASES_DIR]
    extra = os.environ.get("RULES_CASES_DIR", "")
    for part in extra.split(os.pathsep):
        if part.strip():
            folder = Path(part.strip())
            if not folder.is_dir():
                raise FileNotFoundError(f"RULES_CASES_DIR names {folder}, which is not a folder")
            dirs.append(folder)
    return dirs


def load_cases(dirs: list[Path] | None = None) -> Iterator[Case]:
    for folder in dirs if dirs is not None else case_dirs():
        for path in sorted(folder.glob("*.json")):
            for raw in json.loads(path.read_text(encoding="utf-8")):
                yield Case(
                    id=str(raw["id"]),
                    ruleset=raw["ruleset"],
                    kind=raw["kind"],
                    rule=str(raw.get("rule", "")),
                    given=raw.get("given", {}),
                    steps=list(raw.get("steps", [])),
                    expect=raw.get("expect", {}),
                    source=path,
                )


class CaseMismatch(AssertionError):
    """An engine answer that differs from what a case expects."""


def _same(key: str, want: Any, got: Any) -> bool:
    if key == "lost" and isinstance(want, Mapping) and isinstance(got, Mapping):
        for side, w in want.items():
            g = got.get(side, [] if isinstance(w, list) else 0)
            if isinstance(w, list):
                if not isinstance(g, list) or Counter(w) != Counter(g):
                    return False
            elif isinstance(g, list):
                if w != len(g):
                    return False
            elif w != g:
                return False
        return True
    if key == "spent" and isinstance(want, Mapping) and isinstance(got, Mapping):
        return all(
            {k: v for k, v in (got.get(side) or {}).items() if v} == dict(w)
            for side, w in want.items()
        )
    return want == got


def check(
    case: Case, expect: Mapping[str, Any], observed: Mapping[str, Any], where: str = ""
) -> None:
    """Compare every key of ``expect`` (but ``refused``/``refused_start``) with ``observed``.

    ``lost`` compares as multisets per side, ``spent`` exactly per side named (zero counts
    ignored), anything else by equality (lists in full length and order; an adapter turns
    groups that the format compares as sets into sets before calling).
    """
    problems = []
    for key, want in expect.items():
        if key in {"refused", "refused_start"}:
            continue
        if key not in observed:
            problems.append(f"{key}: expected {want!r}, the engine gave nothing")
            continue
        got = observed[key]
        if not _same(key, want, got):
            problems.append(f"{key}: expected {want!r}, got {got!r}")
    if problems:
        at = f" {where}" if where else ""
        raise CaseMismatch(f"{case.label}{at}: " + "; ".join(problems))


Adapter = Callable[[Case], None]
ADAPTERS: dict[tuple[str, str], Adapter] = {}


def adapter(kind: str, *rulesets: str) -> Callable[[Adapter], Adapter]:
    """Register the function that runs cases of ``kind`` for the given rulesets."""

    def register(fn: Adapter) -> Adapter:
        for ruleset in rulesets:
            ADAPTERS[(kind, ruleset)] = fn
        return fn

    return register


def started(case: Case, begin: Callable[[], T]) -> T | None:
    """Start the engine for ``case``, honouring ``expect.refused_start``.

    With ``refused_start: true`` the start must be refused by a rules error naming a rule
    (returns None: there is nothing more to check); otherwise a refused start fails the case.
    Every adapter starts through here, so no adapter can ignore the key.
    """
    from combat.rules.errors import RuleError

    if case.expect.get("refused_start"):
        try:
            begin()
        except RuleError as refused:
            if not refused.rule:
                raise CaseMismatch(f"{case.label}: the refusal names no rule") from refused
            return None
        raise CaseMismatch(f"{case.label}: should not even start (refused_start)")
    try:
        return begin()
    except RuleError as error:
        raise CaseMismatch(f"{case.label}: refused at the start: {error}") from error


def check_refused_indices(case: Case) -> None:
    """``expect.refused`` names steps of the case; an index past the last step is a broken
    case, not a pass."""
    beyond = sorted(i for i in case.refused if not 0 <= i < len(case.steps))
    if beyond:
        raise CaseMismatch(f"{case.label}: refused names steps {beyond} the case does not have")


def step_through(
    case: Case,
    state: Any,
    apply: Callable[[Any, Mapping[str, Any]], Any],
    observe: Callable[[Any, Mapping[str, Any]], Mapping[str, Any]] | None = None,
    after: Callable[[Any, int], Any] | None = None,
) -> Any:
    """Drive an engine state through the case's steps, one at a time, as a service would.

    A step listed in ``expect.refused`` must raise a RuleError naming a rule and leave the
    state equal to before; any other refusal fails the case. After each applied step the state
    must round-trip through ``to_dict``/``from_dict``, and its own ``expect`` is checked against
    ``observe(state, step)``. ``after(state, index)`` may take the decisions a step leaves implied.
    """
    from combat.rules.errors import RuleError

    for index, step in enumerate(case.steps):
        before = state
        if index in case.refused:
            try:
                apply(state, step)
            except RuleError as refused:
                assert refused.rule, f"{case.label} step {index}: the refusal names no rule"
            else:
                raise CaseMismatch(f"{case.label}: step {index} should have been refused")
            assert state == before, f"{case.label} step {index}: a refusal changed the state"
            continue
        try:
            state = apply(state, step)
        except RuleError as error:
            raise CaseMismatch(f"{case.label} step {index} refused: {error}") from error
        if after is not None:
            state = after(state, index)
        assert type(state).from_dict(state.to_dict()) == state, f"{case.label}: JSON round trip"
        if observe is not None and step.get("expect"):
            check(case, step["expect"], observe(state, step), where=f"after step {index}")
    return state
