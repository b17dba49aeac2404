"""Chases in a scene (K1–K12): the chase, its sides, and its own record of steps and rolls.

The rules state lives in ``Chase.state`` (``chases.rules.Chase.to_dict()``); the row adds what
the app needs around it: the phase the storyteller and phones are in, what is pending (the
winners' maneuvers, an obstacle), a ``step`` counter that every change bumps (a form carries
the step it was drawn for, so a late tap is refused), and where the chase came from.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from combat.models import Participant, Scene


class Start(models.TextChoices):
    COLD = "cold", "Cold start (K3)"
    STALK = "stalk", "Stalk and pounce (K5)"
    ESCAPE = "escape", "From an escape defense (K4)"


class Phase(models.TextChoices):
    ROLL = "roll", "Roll the round"
    MANEUVER = "maneuver", "Winners choose a maneuver"
    OBSTACLE = "obstacle", "Obstacle"
    OVER = "over", "Over"


class Role(models.TextChoices):
    PREY = "prey", "Prey"
    PREDATOR = "predator", "Predator"


class Chase(models.Model):
    scene = models.ForeignKey(Scene, on_delete=models.CASCADE, related_name="chases")
    start = models.CharField(max_length=10, choices=Start.choices)
    state = models.JSONField(help_text="The rules engine's state (chases.rules.Chase).")
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.ROLL)
    pending = models.JSONField(
        default=dict,
        blank=True,
        help_text="maneuvers: [{pursuit, role}] still to choose; obstacle: what the ST set.",
    )
    step = models.PositiveIntegerField(default=0, help_text="Bumped by every change.")
    origin = models.JSONField(default=dict, blank=True)
    outcome = models.CharField(max_length=20, blank=True)
    npc_damage = models.JSONField(
        default=dict,
        blank=True,
        help_text="Damage a quick NPC took in the chase (K11), by participant id.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["scene"],
                condition=Q(ended_at__isnull=True),
                name="one_running_chase_per_scene",
            )
        ]

    def __str__(self) -> str:
        return f"Chase {self.pk} in {self.scene_id}"

    @property
    def running(self) -> bool:
        return self.ended_at is None

    @property
    def prey(self) -> PreyGroup:
        """The Prey: one character, or a group fleeing together (K1), named as one."""
        members = [s.participant for s in self.sides.all() if s.role == Role.PREY]
        return PreyGroup(members)


class PreyGroup:
    """K1: the characters fleeing together as one Prey (``name`` joins theirs)."""

    def __init__(self, participants: list[Participant]) -> None:
        self.participants = participants

    @property
    def name(self) -> str:
        names = [p.name for p in self.participants]
        if len(names) <= 1:
            return "".join(names)
        return ", ".join(names[:-1]) + " and " + names[-1]


class Side(models.Model):
    """One participant of a chase: the Prey or a Predator. A group fleeing together is one
    Prey (K1): one Side per member, each with role ``prey`` (the first keyed ``prey``, the
    others ``prey-p<participant id>``); the engine knows them all as ``prey``. A Predator is
    known to the engine by its ``key``."""

    chase = models.ForeignKey(Chase, on_delete=models.CASCADE, related_name="sides")
    participant = models.ForeignKey(Participant, on_delete=models.PROTECT, related_name="+")
    role = models.CharField(max_length=10, choices=Role.choices)
    key = models.CharField(max_length=20)

    class Meta:
        ordering = ["-role", "pk"]  # the Prey first, then the Predators in order
        constraints = [
            models.UniqueConstraint(fields=["chase", "key"], name="chase_side_key"),
            models.UniqueConstraint(fields=["chase", "participant"], name="chase_side_once"),
        ]

    def __str__(self) -> str:
        return f"{self.get_role_display()} {self.participant}"


class StepKind(models.TextChoices):
    START = "start", "Start"
    ROUND = "round", "Round"
    MANEUVER = "maneuver", "Maneuver"
    PASS = "pass", "No maneuver"
    OBSTACLE_SET = "obstacle_set", "Obstacle set"
    OBSTACLE = "obstacle", "Obstacle faced"
    COURSE = "course", "Course"
    ATTACK = "attack", "Attack"
    END = "end", "End"


class ChaseStep(models.Model):
    """One step of the chase, in order: what happened, who did it, the Leads after it."""

    chase = models.ForeignKey(Chase, on_delete=models.CASCADE, related_name="steps")
    number = models.PositiveIntegerField()
    round = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=20, choices=StepKind.choices)
    text = models.CharField(max_length=500)
    data = models.JSONField(default=dict, blank=True)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["number", "pk"]

    def __str__(self) -> str:
        return self.text


class ChaseRoll(models.Model):
    """One side's roll: its pool, difficulty, every die, successes and botch (D1)."""

    class Purpose(models.TextChoices):
        START = "start", "Head start"
        STALK = "stalk", "Stalk"
        ROUND = "round", "Round"
        OBSTACLE = "obstacle", "Obstacle"
        ATTACK = "attack", "Attack"
        DODGE = "dodge", "Dodge"
        DAMAGE = "damage", "Damage"
        SOAK = "soak", "Soak"

    step = models.ForeignKey(ChaseStep, on_delete=models.CASCADE, related_name="rolls")
    side = models.ForeignKey(Side, on_delete=models.CASCADE, related_name="rolls")
    purpose = models.CharField(max_length=10, choices=Purpose.choices)
    pool = models.PositiveSmallIntegerField()
    difficulty = models.PositiveSmallIntegerField()
    dice = models.JSONField(default=list)
    successes = models.PositiveSmallIntegerField()
    botch = models.BooleanField(default=False)
    typed = models.BooleanField(default=False, help_text="Dice typed in, not rolled here.")

    class Meta:
        ordering = ["step__number", "side__pk", "pk"]

    def __str__(self) -> str:
        return f"{self.side}: {self.successes}"
