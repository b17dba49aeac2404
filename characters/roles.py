"""The Storytellers group: staff users who edit the sheets of the chronicles they run."""

from __future__ import annotations

from typing import Any

GROUP = "Storytellers"
MODELS = [
    "chronicle",
    "character",
    "trait",
    "ability",
    "power",
    "attribute",
    "sheetentry",
    "healthlevel",
    "equipment",
    "experienceentry",
    "gamenight",
    "ledgerentry",
]
READ_ONLY = {"gamenight", "ledgerentry"}


def codenames() -> list[str]:
    names = []
    for model in MODELS:
        names.append(f"view_{model}")
        if model not in READ_ONLY:
            names += [f"add_{model}", f"change_{model}", f"delete_{model}"]
    return names


def storytellers_group(group_model: Any = None, permission_model: Any = None) -> Any:
    """Get or make the group with its permissions (a migration passes historical models)."""
    if group_model is None or permission_model is None:
        from django.contrib.auth.models import Group, Permission

        group_model, permission_model = Group, Permission
    group, _ = group_model.objects.get_or_create(name=GROUP)
    group.permissions.set(
        permission_model.objects.filter(
            content_type__app_label="characters", codename__in=codenames()
        )
    )
    return group
