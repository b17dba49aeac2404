"""One rule decides who is a storyteller of a chronicle.

A user storytells a chronicle when all of these hold, checked on every request:

- the account is active;
- it is a superuser, or it is a staff user in the Storytellers group and listed among the
  chronicle's storytellers.

Superusers storytell every chronicle (as everywhere else in Django, a superuser holds every
permission); an inactive superuser storytells nothing. Taking a staff user out of the
Storytellers group, or taking away their staff flag, takes away every chronicle at once: the
admin, the chronicle desk, the Grapevine upload and the live views all ask this module.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Exists, Q, QuerySet

from characters.models import Character, Chronicle
from characters.roles import GROUP

User = AbstractBaseUser | AnonymousUser


def _is_active_superuser(user: User) -> bool:
    return bool(user.is_authenticated and user.is_active and user.is_superuser)


def is_storyteller(user: User) -> bool:
    """May this user storytell at all (before asking which chronicles)?"""
    if not (user.is_authenticated and user.is_active):
        return False
    if user.is_superuser:
        return True
    return bool(user.is_staff) and user.groups.filter(name=GROUP).exists()


def chronicles_run_by(user: User) -> QuerySet[Chronicle]:
    """The chronicles this user storytells now (every chronicle for an active superuser).

    Lazy: the Storytellers group is asked inside the query that uses it (``exists()``, a
    subquery of ``__in``), not by a query of its own first, so a storyteller's every check
    on a tap costs one query."""
    if _is_active_superuser(user):
        return Chronicle.objects.all()
    if not (user.is_authenticated and user.is_active and user.is_staff):
        return Chronicle.objects.none()
    in_group = Exists(user.groups.filter(name=GROUP))
    return Chronicle.objects.filter(in_group, storytellers=user)


def is_storyteller_of(user: User, chronicle: Chronicle | int | None) -> bool:
    """Does this user storytell this chronicle (object or primary key) now?"""
    if chronicle is None:
        return False
    pk = chronicle.pk if isinstance(chronicle, Chronicle) else chronicle
    if _is_active_superuser(user):
        return Chronicle.objects.filter(pk=pk).exists()
    return chronicles_run_by(user).filter(pk=pk).exists()


def characters_run_by(user: User) -> QuerySet[Character]:
    """Every character of the chronicles this user storytells."""
    if _is_active_superuser(user):
        return Character.objects.all()
    return Character.objects.filter(chronicle__in=chronicles_run_by(user))


def characters_visible_to(user: User) -> QuerySet[Character]:
    """A player sees their own characters; a storyteller every character of their chronicles."""
    if not (user.is_authenticated and user.is_active):
        return Character.objects.none()
    if user.is_superuser:
        return Character.objects.all()
    return Character.objects.filter(Q(player=user) | Q(chronicle__in=chronicles_run_by(user)))


def players_offered_to(user: User, *, current: Any = None) -> QuerySet:
    """The accounts a storyteller may name as a character's player.

    Players of the chronicles they run, and active accounts that no chronicle has claimed yet
    (no character, not staff): newcomers waiting for their first sheet. Never the players of
    someone else's chronicle. ``current`` (the character's player now) is always kept, so
    saving a form does not silently drop them.
    """
    users = get_user_model().objects
    if _is_active_superuser(user):
        return users.all()
    if not is_storyteller(user):
        return users.none()
    mine = Q(characters__chronicle__in=chronicles_run_by(user))
    unclaimed = Q(is_active=True, is_staff=False, is_superuser=False, characters__isnull=True)
    keep = Q(pk=getattr(current, "pk", current)) if current is not None else Q(pk__in=[])
    return users.filter(pk__in=users.filter(mine | unclaimed | keep).values("pk"))


def storytellers_offered_to(user: User) -> QuerySet:
    """The accounts that may be named storytellers of a chronicle: staff in the group."""
    users = get_user_model().objects
    if not is_storyteller(user):
        return users.none()
    if _is_active_superuser(user):
        return users.filter(Q(is_superuser=True) | Q(is_staff=True, groups__name=GROUP)).distinct()
    group = users.filter(is_active=True, is_staff=True, groups__name=GROUP)
    return users.filter(pk__in=group.values("pk"))
