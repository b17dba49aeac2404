"""A page as the phone or tablet holds it: the whole state it got on connect, with the pushes
applied the way htmx's websocket extension and static/js/scene.js apply them, and the form a
fresh render is compared in (zulip's ``verify_action`` for scenes)."""

from __future__ import annotations

import copy

from django.test.html import Element, RootElement, parse_html

WHOLE_STATE = ("scene-board", "scene-public")
OOB = "hx-swap-oob"  # htmx takes it off an element it swaps in: no part of what a page shows


def pieces(html: str) -> list[Element]:
    """The top-level elements of a message (parse_html unwraps a single one)."""
    doc = parse_html(html)
    children = doc.children if isinstance(doc, RootElement) else [doc]
    return [c for c in children if isinstance(c, Element)]


def element_id(element: Element) -> str | None:
    return dict(element.attributes).get("id")


def walk(tree: Element):
    yield tree
    for child in tree.children:
        if isinstance(child, Element):
            yield from walk(child)


def _numbers(element: Element, attr: str) -> list[int] | None:
    value = dict(element.attributes).get(attr)
    return None if value is None else [int(x) for x in value.split(".")]


def older(incoming: Element, shown: Element) -> bool:
    """crossing.js's rule: a fragment older than the one shown (data-seq, data-sheet-seq)."""
    for attr in ("data-seq", "data-sheet-seq"):
        a, b = _numbers(incoming, attr), _numbers(shown, attr)
        if a is None or b is None:
            continue
        if any(x < (b[i] if i < len(b) else 0) for i, x in enumerate(a)):
            return True
    return False


def _keep_newer_inside(page: list[Element], piece: Element) -> None:
    """crossing.js: a region inside ``piece`` older than the one shown stays as shown."""
    shown = {element_id(e): e for root in page for e in walk(root) if element_id(e)}
    for part in list(walk(piece))[1:]:
        now = shown.get(element_id(part))
        if now is not None and dict(part.attributes).get("data-seq") and older(part, now):
            part.attributes, part.children = now.attributes, copy.deepcopy(now.children)


def apply(page: list[Element], html: str, *, keep_newer: bool = False) -> None:
    """What htmx's websocket extension does: each top-level element replaces its id's.
    ``keep_newer``: as static/js/crossing.js, never swap in a fragment older than the one
    shown, nor a region inside it older than the one shown."""
    for piece in pieces(html):
        for root in page:
            for element in walk(root):
                if element_id(element) == element_id(piece):
                    if not (keep_newer and older(piece, element)):
                        if keep_newer:
                            _keep_newer_inside(page, piece)
                        # htmx takes hx-swap-oob off what it swaps in
                        element.attributes = [a for a in piece.attributes if a[0] != OOB]
                        element.children = piece.children
                    break
            else:
                continue
            break


def is_whole_state(html: str) -> bool:
    """The state a socket sends on connect (and on a resync), not a push."""
    head = html[:400]
    return any(f'id="{name}"' in head for name in WHOLE_STATE)


def _without_region_seqs(root: Element) -> str:
    root = copy.deepcopy(root)
    for element in walk(root):
        dropped = {OOB} if element_id(element) in WHOLE_STATE else {OOB, "data-seq"}
        element.attributes = [(k, v) for k, v in element.attributes if k not in dropped]
    return str(root)


def as_shown(page: list[Element], seq: int) -> str:
    """The page as compared: scene.js keeps the board's own data-seq at the newest seq shown,
    and a region or a private part not pushed keeps the seq it was rendered at (its content
    is the same: the change did not touch it), so only the two parts every change reaches
    (the board, the public part) keep their seq in the comparison."""
    page = copy.deepcopy(page)
    for root in page:
        if element_id(root) == "scene-board":
            root.attributes = [(k, str(seq) if k == "data-seq" else v) for k, v in root.attributes]
    return "".join(_without_region_seqs(root) for root in page)
