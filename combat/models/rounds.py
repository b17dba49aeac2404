"""Combat rounds (issue 11): one fight in a scene, its engine state kept as JSON.

A :class:`Combat` holds the round machine of its ruleset (``combat.rules.wod_round.WodRound``
as ``to_dict``), the initiative of the round, the choices that carry over between rounds
(haste, D4), the running effects and reminders (D17), the grapples (G1-G9) and the work of
the phase being resolved. Services lock the row (``select_for_update``) on every step.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from combat.models.scenes import Scene

__all__ = ["Combat", "CombatStage"]


class CombatStage(models.TextChoices):
    INITIATIVE = "initiative", "Initiative"  # D3: rolling (or typing) initiative
    ROUND = "round", "Round"  # D4: declaring and resolving, phase by phase
    BOOK_KEEPING = "book_keeping", "Book keeping"  # D17
    OVER = "over", "Over"


class Combat(models.Model):
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="combats")
    ruleset = models.CharField(max_length=20)
    stage = models.CharField(
        max_length=20, choices=CombatStage.choices, default=CombatStage.INITIATIVE
    )
    round_number = models.PositiveIntegerField(default=1)
    paused = models.BooleanField(default=False)
    members = models.JSONField(default=list, help_text="Participant ids in the fight.")
    initiative = models.JSONField(default=dict, help_text="D3: per participant id, this round.")
    state = models.JSONField(default=dict, help_text="The engine's round state (to_dict).")
    haste = models.JSONField(default=dict, help_text="D4: haste actions, carried over.")
    effects = models.JSONField(default=list, help_text="D17: effects lasting rounds.")
    reminders = models.JSONField(default=list, help_text="D17: reminders players raised.")
    grapples = models.JSONField(default=list, help_text="G1-G9: grapples in progress.")
    work = models.JSONField(default=dict, help_text="The phase being resolved: rolls, spent.")
    results = models.JSONField(default=list, help_text="The latest resolutions, dice and all.")
    npc_damage = models.JSONField(
        default=dict, help_text="D2: damage levels of quick NPCs (no sheet, no ledger)."
    )
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["scene"],
                condition=models.Q(ended_at__isnull=True),
                name="one_running_combat_per_scene",
            )
        ]

    def __str__(self) -> str:
        return f"Combat {self.pk} in {self.scene_id}, round {self.round_number}"
