"""A start form is rendered once for what it offers, not on every change of the scene.

Each player's own part carries a start form per character (``_start.html``: every bid of every
category, the abilities, the weapons, a dozen fields), and each change of the scene rendered
them all again although they change only when the sheet does (a trait spent, a wound) or a
challenge starts (the form's key). ``{% kept_start %}…{% endkept_start %}`` (around
``_start.html``'s body) keys its rendering by everything the body reads, spelt out:
the participant (id, name, NPC, sheet), each value of ``start_form.start_choices`` the form
shows (bids, tempers, abilities, attributes, weapons, targets, health, Celerity, key: those
offered from the sheet as the key they are kept under, ``start_form.OFFER_KEY``), the
include's arguments (url, target, phone, modes, how many forms) and whether a CSRF token is
rendered. A new value of any of them renders anew, in any process; nothing is read from the
database for the key (the choices are read already).

A form rendered for a request (a page, an answer) is kept with a mark in its CSRF token's
place and each request gets its copy with its own token (as
:mod:`combat.templatetags.finished_cards` keeps a finished card's forms).
"""

from __future__ import annotations

from collections.abc import Hashable

from django import template
from django.utils.safestring import SafeString

from combat.challenges.finished import Memo
from combat.challenges.start_form import OFFER_KEY
from combat.templatetags.finished_cards import kept_block

register = template.Library()

SIZE = 2048  # forms (about 4 KB each): a night's characters at their recent sheets
_memo: Memo[SafeString] = Memo(SIZE)
stats = _memo.stats


def clear() -> None:
    _memo.clear()


def start_key(context: template.Context) -> Hashable | None:
    """What a start form's html is a function of (see the module), or None: render it."""
    s = context.get("s")
    if not isinstance(s, dict) or "participant" not in s:
        return None
    p = s["participant"]
    offered = s.get(OFFER_KEY)
    if offered is None:  # offered afresh (start_form._offered): each value spelt
        offered = (
            *(repr(s.get(name)) for name in _OFFERED),
            tuple((w.pk, w.name, w.bonus_traits) for w in s.get("weapons") or ()),
        )
    return (
        (p.pk, p.name, p.npc, p.character_id),
        *(repr(s.get(name)) for name in _PLAIN),
        offered,
        tuple((t.pk, t.name) for t in s.get("targets") or ()),
        tuple(context.get("modes") or ()),
        len(context.get("starts") or ()),
        *(repr(context.get(name)) for name in ("url", "target", "phone", "from_phone")),
        bool(context.get("csrf_token")),  # with the mark in the token's place
    )


# The values of start_form.start_choices the form shows that are plain data (str, int, bool
# and lists or tuples of them): spelt by their repr. Those offered from the sheet
# (``_OFFERED``, with the weapons) are spelt only when no offer's key names them
# (start_form.OFFER_KEY: the sheet's key, under which those values are kept as they are).
_PLAIN = ("key", "bns")
_OFFERED = ("incapacitated", "celerity", "bids", "tempers", "abilities", "attributes")


kept_block(register, "kept_start", start_key, _memo)
