"""Players named in an imported file: matched within the importing storyteller's chronicles,
else given a new account of the chronicle.

A storyteller of one chronicle can never hand a sheet to, or learn about, a user of another.
A name (Grapevine's ``player=``, the JSON's ``player``) is matched only against the players
of the chronicles the import may look in: those the importing storyteller runs (the admin
upload; the commands' ``--storyteller``), else the chronicle imported into alone. A player
matches by username or by full name, letter case and punctuation aside (``Andrew Sayman``,
``andrew-sayman``).

A name nobody there answers to gets a new account, named from the player and the chronicle
(``andrew-sayman@phoenix-by-night``), whether or not an ``andrew-sayman`` plays elsewhere:
the import and its summary are the same either way, so they tell nothing of other
chronicles. The new account has no password: a login card, or a password set in the admin,
lets the player in. A name two players of the storyteller's chronicles answer to is linked to
neither; the summary says so, and the storyteller picks the player on the sheet.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet
from django.utils.text import slugify

from characters.models import Chronicle

AMBIGUOUS = "two or more players of your chronicles answer to it; pick one on the sheet"
NO_NAME = "no account can be named from it; pick the player on the sheet"
_PART = 60  # of the 150 characters of a username: the player's part, the chronicle's part


@dataclass
class PlayerLinks:
    """Who each player name of a file is, and what the import's summary says about it."""

    users: dict[str, Any] = field(default_factory=dict)
    linked: dict[str, str] = field(default_factory=dict)
    created: dict[str, str] = field(default_factory=dict)
    unlinked: dict[str, str] = field(default_factory=dict)

    def lines(self) -> list[str]:
        lines = [f"Player {n!r} is {u} (plays in your chronicles)." for n, u in self.linked.items()]
        lines += [
            f"Player {n!r}: new account {u} (no password yet: a login card or the admin)."
            for n, u in self.created.items()
        ]
        lines += [f"Player {n!r} left unlinked: {why}." for n, why in self.unlinked.items()]
        return lines


def _slug(text: str) -> str:
    return slugify(text, allow_unicode=True)


def _keys(text: str) -> set[str]:
    return {text.strip().casefold(), _slug(text)} - {""}


def players_resolve(
    *, chronicle: Chronicle, names: Iterable[str], scope: QuerySet[Chronicle] | None = None
) -> PlayerLinks:
    """Match or create an account for every player name (call inside the import's transaction).

    ``scope``: the chronicles whose players may be matched (the target chronicle always is).
    """
    users = get_user_model().objects
    where = Q(characters__chronicle=chronicle)
    if scope is not None:
        where |= Q(characters__chronicle__in=scope)
    by_key: dict[str, set[Any]] = {}
    for user in users.filter(pk__in=users.filter(where).values("pk")):
        for key in _keys(user.get_username()) | _keys(user.get_full_name()):
            by_key.setdefault(key, set()).add(user)
    links = PlayerLinks()
    to_create: dict[str, list[str]] = {}
    for name in dict.fromkeys(n.strip() for n in names if n and n.strip()):
        found = set().union(*(by_key.get(key, set()) for key in _keys(name)))
        if len(found) == 1:
            (user,) = found
            links.users[name] = user
            links.linked[name] = user.get_username()
        elif found:
            links.unlinked[name] = AMBIGUOUS
        elif not _slug(name):
            links.unlinked[name] = NO_NAME
        else:
            to_create.setdefault(_slug(name)[:_PART], []).append(name)
    _create(chronicle, to_create, links)
    return links


def _create(chronicle: Chronicle, to_create: dict[str, list[str]], links: PlayerLinks) -> None:
    """One new account per player name (names differing only in case share one)."""
    if not to_create:
        return
    model = get_user_model()
    suffix = _slug(chronicle.name)[:_PART] or f"chronicle-{chronicle.pk}"
    wanted = {base: f"{base}@{suffix}" for base in to_create}
    taken = set(
        model.objects.filter(username__in=list(wanted.values())).values_list("username", flat=True)
    )
    accounts = []
    for base, names in to_create.items():
        username, number = wanted[base], 1
        while username in taken:  # someone made this very name by hand: number ours
            number += 1
            username = f"{base}-{number}@{suffix}"
            if model.objects.filter(username=username).exists():
                taken.add(username)
        taken.add(username)
        account = model(username=username, first_name=names[0][:150])
        account.set_unusable_password()
        accounts.append((names, account))
    model.objects.bulk_create([account for _names, account in accounts])
    for names, account in accounts:
        for name in names:
            links.users[name] = account
            links.created[name] = account.get_username()
