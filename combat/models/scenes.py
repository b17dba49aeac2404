"""Scenes: where a storyteller runs the night's conflicts and the players' phones follow.

A scene belongs to the chronicle's open game night. It has a join code the phones type or
scan, a game clock the storyteller advances, participants (player characters, NPC sheets of
the chronicle, quick NPCs typed in) and a log. Every change bumps the scene's sequence number
``seq`` in the same transaction, and every change the players see bumps ``players_seq``, the
number the phones carry: a phone that sees a gap knows it missed something, and a step only a
hidden NPC takes leaves no gap to count.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from characters.models import Character, Chronicle, GameNight, Ruleset

JOIN_CODE_LENGTH = 6
# No 0/O, 1/I/L: a code is read aloud in a dark room and typed on a phone.
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


class Scene(models.Model):
    chronicle = models.ForeignKey(Chronicle, on_delete=models.CASCADE, related_name="scenes")
    game_night = models.ForeignKey(GameNight, on_delete=models.PROTECT, related_name="scenes")
    name = models.CharField(max_length=120)
    ruleset = models.CharField(max_length=20, choices=Ruleset.choices)
    join_code = models.CharField(max_length=JOIN_CODE_LENGTH, unique=True)
    storyteller = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="scenes_run"
    )
    game_time = models.PositiveIntegerField(
        default=0, help_text="Game seconds since the scene opened (locks and effects expire by it)."
    )
    situation = models.CharField(
        max_length=300, blank=True, help_text="What is happening, as the players see it."
    )
    seq = models.PositiveBigIntegerField(default=0, help_text="Bumped by every change.")
    players_seq = models.PositiveBigIntegerField(
        default=0,
        help_text="Bumped by every change the players see (the phones' sequence: a step"
        " only a hidden NPC takes leaves it, so no phone can count such steps).",
    )
    # The board's fold of finished challenges reads these, not the night's rows (issue 21,
    # combat.challenges.board_reads): kept by the step that saves a challenge
    # (combat.challenges.recording.save), under the scene's lock.
    challenges_done = models.PositiveIntegerField(
        default=0,
        help_text="How many of its challenges are finished: over or void, no loser's choice"
        " waiting (W8).",
    )
    challenges_done_seq = models.PositiveBigIntegerField(
        default=0,
        help_text="The seq of the last change to a finished challenge (one finishing, a void).",
    )
    opened_at = models.DateTimeField(auto_now_add=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-opened_at", "-pk"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_open(self) -> bool:
        return self.closed_at is None


class Participant(models.Model):
    """A character in a scene: a player's, an NPC sheet, or a quick NPC with typed-in pools."""

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="participants")
    character = models.ForeignKey(
        Character, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    name = models.CharField(max_length=120, help_text="Shown in the scene.")
    npc = models.BooleanField(default=False)
    hidden = models.BooleanField(
        default=False, help_text="An NPC the players do not know is there."
    )
    quick_pools = models.JSONField(
        default=dict, blank=True, help_text="A quick NPC's typed-in pools and traits."
    )
    joined_at = models.DateTimeField(auto_now_add=True)
    removed_at = models.DateTimeField(null=True, blank=True)
    own_seq = models.PositiveBigIntegerField(
        default=0,
        help_text="The scene's seq at the last change to its player's own part (the hubs"
        " compare it with what each phone was sent; never shown to a phone).",
    )
    last_started = models.PositiveBigIntegerField(
        default=0,
        help_text="The id of the latest challenge it started as attacker, 0 before its first"
        " (its start form's key; written by the start, combat.challenges.starting).",
    )

    class Meta:
        ordering = ["npc", "name", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["scene", "character"],
                condition=Q(removed_at__isnull=True, character__isnull=False),
                name="participant_once_per_scene",
            )
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def player_id(self) -> int | None:
        return self.character.player_id if self.character_id and self.character else None


class Presence(models.Model):
    """One open socket of a scene: who is connected right now, across every server process."""

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="presences")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    channel_name = models.CharField(max_length=200, unique=True)
    connected_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["scene", "user"])]

    def __str__(self) -> str:
        return f"{self.user_id} in {self.scene_id}"


class LogKind(models.TextChoices):
    SCENE = "scene", "Scene"
    JOIN = "join", "Joined"
    LEAVE = "leave", "Left"
    CLOCK = "clock", "Game clock"
    LEDGER = "ledger", "Sheet"
    CHALLENGE = "challenge", "Challenge"
    COMBAT = "combat", "Combat"
    CHASE = "chase", "Chase"


class SceneLogEntry(models.Model):
    """One line of a scene's log, in order (``seq``) with the game time it happened at."""

    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="log")
    seq = models.PositiveBigIntegerField()
    game_time = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=LogKind.choices)
    text = models.CharField(max_length=500)
    public = models.BooleanField(
        default=False, help_text="Every player of the scene reads it (else only who it concerns)."
    )
    characters = models.ManyToManyField(Character, blank=True, related_name="+")
    data = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["seq", "pk"]
        verbose_name_plural = "scene log entries"
        # A player's own log walks the scene's lines back from the newest (combat.own_log).
        indexes = [models.Index(fields=["scene", "seq", "id"], name="combat_log_scene_seq")]

    def __str__(self) -> str:
        return self.text
