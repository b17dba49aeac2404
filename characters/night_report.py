"""The night report: what a game night left behind, for the storyteller's downtime.

Every scene of the night with its whole log (hidden NPCs included: storytellers only), and
each character's ledger for the night: every entry in order, reversals marked, and the net
change per kind and subject once reversed pairs cancel out. One query per part, whatever the
number of scenes or entries.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from characters.models import GameNight, LedgerEntry, LedgerKind
from combat.models import Scene, SceneLogEntry
from combat.selectors import log_rows


def night_report(night: GameNight) -> dict[str, Any]:
    """The report as plain data: the page renders it, the JSON is it."""
    scenes = list(
        Scene.objects.filter(game_night=night)
        .select_related("storyteller")
        .order_by("opened_at", "pk")
    )
    logs: dict[int, list[SceneLogEntry]] = defaultdict(list)
    for entry in SceneLogEntry.objects.filter(scene__in=scenes).order_by("scene", "seq", "pk"):
        logs[entry.scene_id].append(entry)
    ledger = list(
        LedgerEntry.objects.filter(game_night=night)
        .select_related("character", "character__player", "created_by")
        .order_by("character__name", "character_id", "pk")
    )
    reversed_ids = {e.reverses_id for e in ledger if e.reverses_id}
    characters: dict[int, dict[str, Any]] = {}
    for entry in ledger:
        row = characters.setdefault(
            entry.character_id,
            {
                "name": entry.character.name,
                "player": entry.character.player.username if entry.character.player else "",
                "npc": entry.character.npc,
                "ledger": [],
                "net": {},
            },
        )
        cancelled = entry.pk in reversed_ids or entry.reverses_id is not None
        row["ledger"].append(
            {
                "id": entry.pk,
                "kind": entry.kind,
                "what": str(entry),
                "subject": entry.subject,
                "category": entry.category,
                "amount": entry.amount,
                "reason": entry.reason,
                "source": entry.source,
                "reverses": entry.reverses_id,
                "reversed": entry.pk in reversed_ids,
                "by": entry.created_by.username if entry.created_by else "",
                "at": entry.created_at.isoformat(),
            }
        )
        if not cancelled and entry.kind != LedgerKind.REFRESH:
            key = (entry.get_kind_display(), entry.subject or entry.category)
            row["net"][key] = row["net"].get(key, 0) + entry.amount
    for row in characters.values():
        row["net"] = [
            {"kind": kind, "subject": subject, "amount": amount}
            for (kind, subject), amount in row["net"].items()
        ]
    return {
        "chronicle": night.chronicle.name,
        "night": night.number,
        "opened_at": night.opened_at.isoformat(),
        "closed_at": night.closed_at.isoformat() if night.closed_at else None,
        "scenes": [
            {
                "id": scene.pk,
                "name": scene.name,
                "ruleset": scene.ruleset,
                "storyteller": scene.storyteller.username,
                "opened_at": scene.opened_at.isoformat(),
                "closed_at": scene.closed_at.isoformat() if scene.closed_at else None,
                "log": log_rows(logs[scene.pk]),
            }
            for scene in scenes
        ],
        "characters": list(characters.values()),
    }
