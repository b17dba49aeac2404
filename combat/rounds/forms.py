"""Forms of the round posts: they parse; the services decide what the rules allow."""

from __future__ import annotations

import re

from django import forms

from combat.forms import KEY_PATTERN
from combat.post_forms import PostForm
from combat.rounds import wod
from config.bounds import MAX_ID

_KEY = forms.RegexField(regex=KEY_PATTERN, required=False)


class _Base(PostForm):
    participant = forms.IntegerField(min_value=1, max_value=MAX_ID)
    key = forms.RegexField(regex=KEY_PATTERN, required=False)
    token = forms.CharField(max_length=80, required=False)  # the state the screen saw


class InitiativeForm(_Base):
    roll = forms.IntegerField(min_value=1, max_value=10, required=False)


class SplitField(forms.Field):
    """D14: the further actions of a split, one ``<select name="also">`` each: ``dodge``,
    ``block`` or ``attack:<participant id>``; empty selects are left out."""

    widget = forms.SelectMultiple
    PATTERN = re.compile(r"^(?:block|dodge|attack:[1-9][0-9]{0,9})$")
    MOST = 9

    def to_python(self, value) -> list[tuple[str, int | None]]:
        values = [v.strip() for v in (value or []) if v and v.strip()]
        if len(values) > self.MOST:
            raise forms.ValidationError(f"At most {self.MOST} further actions (D14).")
        out = []
        for v in values:
            if not self.PATTERN.match(v):
                raise forms.ValidationError(f"Not an action to split off: {v[:20]!r} (D14).")
            action, _, pk = v.partition(":")
            out.append((action, int(pk) if pk else None))
        return out


class DeclareForm(_Base):
    action = forms.ChoiceField(choices=[(a, a) for a in wod.ACTIONS])
    target = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    maneuver = forms.ChoiceField(choices=[(m, m) for m in wod.MANEUVERS], required=False)
    weapon = forms.CharField(max_length=120, required=False)
    actions = forms.IntegerField(min_value=1, max_value=10, required=False)
    also = SplitField(required=False)
    haste = forms.IntegerField(min_value=0, max_value=5, required=False)


class ResolveForm(_Base):
    attack_difficulty = forms.IntegerField(min_value=2, max_value=10, required=False)
    defense_difficulty = forms.IntegerField(min_value=2, max_value=10, required=False)
    attack_dice = forms.CharField(max_length=120, required=False)
    defense_dice = forms.CharField(max_length=120, required=False)
    damage_dice = forms.CharField(max_length=120, required=False)
    soak_dice = forms.CharField(max_length=120, required=False)
    effect = forms.CharField(max_length=20, required=False)
    forced = forms.ChoiceField(
        choices=[("", ""), ("shrug_off", "shrug off"), ("hostage_block", "hostage block")],
        required=False,
    )
    forced_difficulty = forms.IntegerField(min_value=2, max_value=10, required=False)
    forced_dice = forms.CharField(max_length=120, required=False)


class AbortForm(_Base):
    reason = forms.CharField(max_length=40)
    dice = forms.CharField(max_length=120, required=False)


class CommittedForm(_Base):
    # Empty: the unseen (hidden) attacker's committed attack, answered without its name (D5).
    attacker = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    answer = forms.ChoiceField(
        choices=[("accept", "accept"), ("harder", "harder"), ("abort", "abort")]
    )


class RemindForm(_Base):
    text = forms.CharField(max_length=200)


class EffectForm(_Base):
    name = forms.CharField(max_length=80)
    rounds = forms.IntegerField(min_value=1, max_value=100)


class StartForm(PostForm):
    who = forms.TypedMultipleChoiceField(coerce=int, choices=[])

    def __init__(self, *args, choices: list[int], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["who"].choices = [(c, c) for c in choices]


class OutForm(_Base):
    out = forms.BooleanField(required=False)


class PursueForm(_Base):
    """K4: ``participant`` is the attacker the escape beat; ``pursue`` false lets it go."""

    pursue = forms.BooleanField(required=False)


class PauseForm(PostForm):
    paused = forms.BooleanField(required=False)
    key = forms.RegexField(regex=KEY_PATTERN, required=False)


class KeyForm(PostForm):
    key = forms.RegexField(regex=KEY_PATTERN, required=False)  # a double tap counts once


class TokenForm(PostForm):
    token = forms.CharField(max_length=80, required=False)  # the state the screen saw
    key = forms.RegexField(regex=KEY_PATTERN, required=False)


class BnsActForm(_Base):
    standard = forms.CharField(max_length=40, required=False)
    simple = forms.CharField(max_length=40, required=False)
    target = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    against_physical = forms.BooleanField(required=False)
    ranged_far = forms.BooleanField(required=False)  # B10: ranged, from more than 3 steps
    # B1: the test pool of a challenge the action opens (blank: the action's own attribute).
    attribute = forms.CharField(max_length=40, required=False)
    skill = forms.CharField(max_length=80, required=False)
    weapon = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False)


class MediateForm(PostForm):
    agreed = forms.BooleanField(required=False)
    key = forms.RegexField(regex=KEY_PATTERN, required=False)


class AssessForm(PostForm):
    started_by = forms.IntegerField(min_value=1, max_value=MAX_ID, required=False)
    key = forms.RegexField(regex=KEY_PATTERN, required=False)


class CelerityForm(_Base):
    rounds = forms.IntegerField(min_value=0, max_value=3)


class SettleForm(PostForm):
    cannot_be_attacked = forms.BooleanField(required=False)
    key = forms.RegexField(regex=KEY_PATTERN, required=False)


class MetCelerityForm(_Base):
    level = forms.IntegerField(min_value=0, max_value=4)
    follow_ups = forms.IntegerField(min_value=0, max_value=4)


class MetTakeForm(_Base):
    action = forms.CharField(max_length=20)
