"""Challenges phone to phone (issue 10): one row per challenge in a scene, and the locks
finished challenges leave (C10, W9).

The engine's state (:class:`combat.rules.challenge.Challenge`) is kept whole in ``state``; what
each side has sealed but not yet revealed (a throw, a declared total) is kept apart in
``sealed`` and never rendered for anyone but its owner. ``step`` is bumped by every change, so
a tap that arrives after the challenge moved on is refused.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from combat.models.scenes import Participant, Scene


class ChallengeStatus(models.TextChoices):
    ANSWER = "answer", "Waiting for the defender's answer"
    LIVE = "live", "In play"
    OVER = "over", "Over"
    VOID = "void", "Voided"


class Challenge(models.Model):
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="challenges")
    attacker = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="+")
    defender = models.ForeignKey(
        Participant, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    mode = models.CharField(max_length=12, default="contested")
    category = models.CharField(max_length=12, blank=True)
    what = models.CharField(
        max_length=120, blank=True, help_text="The ability, power or effect used (C10, W9 locks)."
    )
    attacker_effect = models.CharField(max_length=300, blank=True)
    defender_effect = models.CharField(max_length=300, blank=True)
    difficulty = models.PositiveSmallIntegerField(default=0)
    options = models.JSONField(default=dict, blank=True, help_text="How it was started.")
    status = models.CharField(
        max_length=8, choices=ChallengeStatus.choices, default=ChallengeStatus.ANSWER
    )
    state = models.JSONField(default=dict, blank=True, help_text="The engine's state.")
    sealed = models.JSONField(
        default=dict, blank=True, help_text="Throws and totals not revealed yet (never rendered)."
    )
    history = models.JSONField(default=list, blank=True, help_text="What both sides saw, in order.")
    step = models.PositiveIntegerField(default=0, help_text="Bumped by every change.")
    deadline = models.DateTimeField(null=True, blank=True, help_text="A soft timer; never decides.")
    timer_label = models.CharField(max_length=80, blank=True)
    paused = models.BooleanField(default=False)
    winner = models.CharField(max_length=8, blank=True)
    outcome = models.CharField(max_length=300, blank=True)
    void_reason = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        # What a change's phone parts read is bounded by what phones show, not by the scene's
        # history (issue 21, combat.challenges.reads._phone_listing): the newest of a scene
        # (the public part's last few), of a participant's sides (a player's kept cards), and
        # the few rows still waiting (open, a W8 choice, a mob's, C16) without a scan.
        indexes = [
            models.Index(fields=["scene", "id"], name="combat_ch_scene_newest"),
            models.Index(fields=["attacker", "id"], name="combat_ch_attacker_newest"),
            models.Index(fields=["defender", "id"], name="combat_ch_defender_newest"),
            models.Index(
                fields=["scene"],
                condition=models.Q(status__in=["answer", "live"])
                | models.Q(options__has_key="choose")
                | models.Q(options__has_key="mob")
                | models.Q(options__has_key="mob_dropped"),
                name="combat_ch_scene_waiting",
            ),
        ]

    def __str__(self) -> str:
        return f"challenge {self.pk}"

    @property
    def source(self) -> str:
        """What its ledger entries carry in ``source`` (a void reverses exactly those)."""
        return f"challenge {self.pk}"

    @property
    def is_open(self) -> bool:
        return self.status in {ChallengeStatus.ANSWER, ChallengeStatus.LIVE}

    @property
    def is_done(self) -> bool:
        """Finished as the board counts it: over or void, no loser's choice waiting (W8)."""
        return not self.is_open and "choose" not in self.options

    #: Whether the row was finished when it was read (a new row was not): a step that saves
    #: it finished counts it in ``Scene.challenges_done`` once (recording.save).
    done_when_read = False

    @classmethod
    def from_db(cls, db: str | None, field_names: Any, values: Any) -> Challenge:
        row = super().from_db(db, field_names, values)
        if "status" in row.__dict__ and "options" in row.__dict__:  # neither deferred
            row.done_when_read = row.is_done
        return row


class ChallengeLock(models.Model):
    """C10, W9: an attacker kept from using ``what`` on a target until ``until`` (game seconds)."""

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="challenge_locks")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="locks")
    attacker = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="+")
    what = models.CharField(max_length=120)
    until = models.PositiveIntegerField()
    rule = models.CharField(max_length=4)

    def __str__(self) -> str:
        return f"{self.rule} {self.what} until {self.until}"


__all__ = ["Challenge", "ChallengeLock", "ChallengeStatus"]
