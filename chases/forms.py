"""Forms of the chase: what the tablet and the phones post, read and checked before a step
runs. Every form carries the chase's ``token`` (the state it was drawn for) and an idempotency
``key``."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from chases import rules
from chases.attacks import COVERS, DAMAGE_TYPES
from chases.models import Start
from chases.selectors import COURSE_PARTS, OBSTACLE_POOLS, TERRAINS
from config.bounds import parse_small

BAD_DICE = "Type the dice as numbers 1 to 10 separated by spaces (e.g. 3 8 10 1), or leave blank."
OBSTACLE_POOL_CHOICES = [(f"{a}+{b}", f"{a.title()} + {b.title()}") for a, b in OBSTACLE_POOLS]


def parse_dice(text: str) -> list[int] | None:
    """``"3 8 10 1"`` → ``[3, 8, 10, 1]``; blank → ``None`` (the server rolls)."""
    text = (text or "").strip()
    if not text:
        return None
    parts = [p for p in re.split(r"[\s,;]+", text) if p]
    dice = [parse_small(p, 1, 10) for p in parts]
    if len(parts) > 40 or None in dice:
        raise forms.ValidationError(BAD_DICE)
    return dice


def problems(form: forms.Form) -> str:
    """Every error of the form, one sentence per field."""
    parts = []
    for name, errors in form.errors.items():
        label = "" if name == "__all__" else f"{form.fields[name].label or name}: "
        parts.append(label + " ".join(errors))
    return " ".join(parts)


class StepForm(forms.Form):
    token = forms.CharField(max_length=64)
    key = forms.CharField(max_length=64)


class DiceForm(StepForm):
    """One dice field and one pool field per side that rolls (engine keys)."""

    def __init__(self, *args: Any, keys: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys = keys
        for k in keys:
            self.fields[f"dice-{k}"] = forms.CharField(required=False, max_length=200)
            self.fields[f"pool-{k}"] = forms.IntegerField(required=False, min_value=0, max_value=30)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        self.dice: dict[str, list[int] | None] = {}
        self.pools: dict[str, int] = {}
        for k in self.keys:
            try:
                self.dice[k] = parse_dice(data.get(f"dice-{k}", ""))
            except forms.ValidationError as error:
                self.add_error(f"dice-{k}", error)
            if data.get(f"pool-{k}") is not None:
                self.pools[k] = data[f"pool-{k}"]
        return data


class StartForm(forms.Form):
    key = forms.CharField(max_length=64)
    start = forms.ChoiceField(choices=Start.choices)
    prey = forms.TypedMultipleChoiceField(coerce=int, choices=[])  # K1: one, or a group
    predators = forms.TypedMultipleChoiceField(coerce=int, choices=[])
    head_start = forms.IntegerField(required=False, min_value=1, max_value=30)
    difficulty = forms.IntegerField(min_value=2, max_value=10, initial=rules.BASE_DIFFICULTY)
    terrain = forms.ChoiceField(choices=TERRAINS)
    sprint_rounds = forms.TypedChoiceField(coerce=int, choices=[(6, "6"), (5, "5")])
    prey_run = forms.IntegerField(required=False, min_value=1, max_value=50)
    predator_run = forms.IntegerField(required=False, min_value=1, max_value=50)
    prey_dice = forms.CharField(required=False, max_length=200)

    def __init__(self, *args: Any, participants: list[Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["predators"].choices = [(p.pk, p.name) for p in participants]
        self.fields["prey"].choices = [(p.pk, p.name) for p in participants]
        self.participants = {p.pk: p for p in participants}

    def clean_prey_dice(self) -> list[int] | None:
        return parse_dice(self.cleaned_data.get("prey_dice", ""))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if data.get("start") == Start.ESCAPE and not data.get("head_start"):
            self.add_error("head_start", "From an escape, give the head start (K4).")
        return data


class ManeuverForm(StepForm):
    pursuit = forms.CharField(max_length=20)
    role = forms.ChoiceField(choices=[("prey", "Prey"), ("predator", "Predator")])
    maneuver = forms.CharField(required=False, max_length=40)
    #: K7 In there!, K8 Herd: the part of the chase pool the new course uses.
    pick = forms.ChoiceField(
        required=False,
        choices=[("", "none"), *[(p, p.title()) for p in COURSE_PARTS]],
        error_messages={
            "invalid_choice": "A new course (In there!, Herd) uses one part of a chase pool; "
            "%(value)s is not one (K7, K8)."
        },
    )


class ObstacleForm(StepForm):
    label = forms.CharField(required=False, max_length=120)
    difficulty = forms.IntegerField(min_value=2, max_value=10)
    pool = forms.ChoiceField(choices=OBSTACLE_POOL_CHOICES)
    facing = forms.MultipleChoiceField(required=False, choices=[])

    def __init__(self, *args: Any, keys: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["facing"].choices = [(k, k) for k in keys]


class ChoiceForm(StepForm):
    who = forms.CharField(max_length=20)


class CourseForm(StepForm):
    difficulty = forms.IntegerField(min_value=2, max_value=10)


class AttackForm(StepForm):
    """K11: who attacks whom (side keys), with what, and the dice typed from the table."""

    attacker = forms.CharField(max_length=20)
    target = forms.CharField(max_length=20)
    means = forms.ChoiceField(choices=[(m.value, m.value) for m in rules.AttackMeans])
    weapon = forms.CharField(required=False, max_length=120)
    pool = forms.IntegerField(required=False, min_value=0, max_value=30)
    difficulty = forms.IntegerField(required=False, min_value=2, max_value=10)
    damage = forms.IntegerField(required=False, min_value=0, max_value=30)
    damage_type = forms.ChoiceField(
        required=False,
        choices=[("", "as the weapon says"), *[(t, t) for t in DAMAGE_TYPES]],
    )
    cover = forms.ChoiceField(choices=list(COVERS.items()), initial="near")
    dice_attack = forms.CharField(required=False, max_length=200)
    dice_dodge = forms.CharField(required=False, max_length=200)
    dice_damage = forms.CharField(required=False, max_length=200)
    dice_soak = forms.CharField(required=False, max_length=200)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        self.dice: dict[str, list[int] | None] = {}
        for roll in ("attack", "dodge", "damage", "soak"):
            try:
                self.dice[roll] = parse_dice(data.get(f"dice_{roll}", ""))
            except forms.ValidationError as error:
                self.add_error(f"dice_{roll}", error)
        return data
