"""The CSS is one coherent set (issue 19): a feature's stylesheet styles only its feature's
markup, and every page links the stylesheets of the markup it includes.

A chases.css rule once turned the sheet's health track into a sideways scroller, and the phone
never loaded sheet.css. Read from the files themselves: no browser needed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from characters import sheet_html

ROOT = Path(__file__).resolve().parents[2]
CSS = ROOT / "static" / "css"
TEMPLATES = ROOT / "templates"

# Each feature's stylesheet and the roots of its markup: every selector starts at one of them
# (itself, or :where(root) which scopes a rule without adding to its weight).
FEATURES: dict[str, tuple[str, ...]] = {
    "challenges.css": (".challenges", ".challenges-public"),
    "rounds.css": (".rounds",),
    "chases.css": (".chases",),
    "sheet.css": (".sheet", ".health-boxes"),
    "print.css": ("body.print", ".print"),
    "report.css": ("body.report", ".report"),
    "cards.css": ("body.cards-sheet", ".cards-sheet", ".cards", ".login-card"),
}
# The shared base files: the app's look (app.css) and the scene pages' frame with the looks
# every feature shares (dice, soft timers, folds, the freshness badge: scene.css).
SHARED = {"app.css", "scene.css"}
# A feature's rule may say on which screen it applies first.
SCREENS = (".phone ", ".tablet ")

# The markup a stylesheet draws: a page including any of these templates links the stylesheet
# (or, for the sheet, the paper backup's own print.css).
NEEDS: dict[str, tuple[tuple[str, ...], set[str]]] = {
    "challenges": (("combat/challenges/",), {"challenges.css"}),
    "rounds": (("combat/rounds/",), {"rounds.css"}),
    "chases": (("chases/",), {"chases.css"}),
    "sheet": (
        ("characters/_sheet_body.html", "characters/_health_boxes.html"),
        {"sheet.css", "print.css"},
    ),
}


def _blocks(css: str) -> Iterator[tuple[str, str]]:
    """(prelude, body) of each top-level block of ``css``."""
    i = 0
    while (start := css.find("{", i)) != -1:
        depth, j = 1, start + 1
        while depth:
            depth += {"{": 1, "}": -1}.get(css[j], 0)
            j += 1
        yield css[i:start].strip(), css[start + 1 : j - 1]
        i = j


def _split(selectors: str) -> list[str]:
    """A selector list split at its top-level commas (not those inside :is(...) and the like)."""
    parts, depth, current = [], 0, ""
    for char in selectors:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [" ".join(p.split()) for p in [*parts, current]]


def selectors(css: str) -> Iterator[str]:
    """Every selector of the style rules of ``css``, inside @media and @supports too."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    for prelude, body in _blocks(css):
        if prelude.startswith(("@media", "@supports")):
            yield from selectors(body)
        elif not prelude.startswith("@"):  # @keyframes, @page: no element selected
            yield from _split(prelude)


def scoped(selector: str, roots: tuple[str, ...]) -> bool:
    for screen in SCREENS:
        selector = selector.removeprefix(screen)
    return any(
        selector.startswith(f":where({root})") or re.match(re.escape(root) + r"(?![\w-])", selector)
        for root in roots
    )


def test_every_stylesheet_is_a_feature_s_or_a_shared_one() -> None:
    assert {p.name for p in CSS.glob("*.css")} == set(FEATURES) | SHARED


def test_every_rule_of_a_feature_s_stylesheet_starts_at_its_feature_s_root() -> None:
    leaks = [
        f"{name}: {selector}"
        for name, roots in FEATURES.items()
        for selector in selectors((CSS / name).read_text())
        if not scoped(selector, roots)
    ]
    assert leaks == []


def test_the_scope_check_catches_a_rule_that_leaks() -> None:
    leaking = ".chase-track ol.track { overflow-x: auto; } .track li { display: flex; }"
    assert [s for s in selectors(leaking) if not scoped(s, (".chases",))] == [
        ".chase-track ol.track",
        ".track li",
    ]
    kept = ":where(.chases) .track, .phone :where(.chases).chase-board a, .chases { color: red; }"
    assert [scoped(s, (".chases",)) for s in selectors(kept)] == [True, True, True]
    assert not scoped(".chases-public a", (".chases",))


# Template tags that render a template in the page, as an include would.
TAGS = {"sheet_body": sheet_html.TEMPLATE}  # characters.templatetags.sheets


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text()


def _included(name: str, seen: set[str] | None = None) -> set[str]:
    """The template, what it extends, and everything they include, transitively."""
    seen = set() if seen is None else seen
    if name in seen or not (TEMPLATES / name).exists():
        return seen
    seen.add(name)
    for other in re.findall(r'{%\s*(?:include|extends)\s+"([^"]+)"', _template(name)):
        _included(other, seen)
    for tag, other in TAGS.items():  # a tag that renders a template as an include would
        if re.search(r"{%\s*" + tag + r"\b", _template(name)):
            _included(other, seen)
    return seen


def _pages() -> Iterator[str]:
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = path.read_text()
        if "{% extends" in text or "<html" in text:
            yield str(path.relative_to(TEMPLATES))


def test_every_page_links_the_stylesheets_of_the_markup_it_includes() -> None:
    missing = []
    for page in _pages():
        parts = _included(page)
        linked = {
            css for part in parts for css in re.findall(r"static 'css/([\w.-]+)'", _template(part))
        }
        for feature, (markup, sheets) in NEEDS.items():
            if any(part.startswith(markup) for part in parts) and not linked & sheets:
                missing.append(f"{page} shows the {feature} but links none of {sorted(sheets)}")
    assert missing == []


def test_the_phone_and_the_tablet_are_pages_that_need_every_feature_s_stylesheet() -> None:
    """The link check reads the scene pages (the phone once lacked sheet.css)."""
    for page in ("combat/scene_phone.html", "combat/scene_tablet.html"):
        parts = _included(page)
        assert page in set(_pages())
        for feature, (markup, _sheets) in NEEDS.items():
            assert any(part.startswith(markup) for part in parts), (page, feature)
