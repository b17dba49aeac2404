"""Forms of the challenge posts: every post is read here before a service sees it."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from combat import access
from combat.challenges.reads import MODES, THROWS
from combat.forms import KEY_PATTERN
from combat.models import Scene
from combat.post_forms import PostForm
from config.bounds import MAX_ID

SIDES = [("attacker", "attacker"), ("defender", "defender")]


def _named(scene: Scene, user: Any) -> Any:
    """The participants the poster may name: a hidden NPC is nobody to a player, so a forged
    id of one is "not a valid choice" like an id of nobody (:mod:`combat.access`)."""
    return access.participants_named_by(scene, user)


def _an_id(value: Any) -> int | None:
    """A posted id as a number (None: no id at all, or one past any row's: it names nobody)."""
    text = str(value) if value is not None else ""
    if not re.fullmatch(r"[0-9]{1,19}", text) or int(text) > MAX_ID:
        return None
    return int(text)


class NamedField(forms.ModelChoiceField):
    """A participant the poster may name, looked up among ``known`` (the form's one read of
    every participant it names) when the form has read them, else in the queryset."""

    known: dict[int, Any] | None = None

    def to_python(self, value: Any) -> Any:
        if self.known is None or value in self.empty_values:
            return super().to_python(value)
        found = self.known.get(_an_id(value))
        if found is None:
            invalid = self.error_messages["invalid_choice"]
            raise forms.ValidationError(invalid, code="invalid_choice", params={"value": value})
        return found


class NamedMany(forms.ModelMultipleChoiceField):
    """Participants the poster may name; none posted is an empty list (the queryset's
    ``none()`` would be compiled to be read as nothing)."""

    def clean(self, value: Any) -> Any:
        if not self.required and value in self.empty_values:
            return []
        return super().clean(value)


class StartForm(PostForm):
    attacker = NamedField(queryset=None)
    defender = NamedField(queryset=None, required=False)
    mode = forms.ChoiceField(choices=[(m, m) for m in MODES], required=False)
    bid = forms.CharField(max_length=200, required=False)
    category = forms.CharField(max_length=12, required=False)
    ability = forms.CharField(max_length=80, required=False)
    what = forms.CharField(max_length=120, required=False)
    effect = forms.CharField(max_length=300, required=False)
    difficulty = forms.IntegerField(min_value=0, max_value=99, required=False)
    target_wins = forms.IntegerField(min_value=0, max_value=20, required=False)
    race = forms.BooleanField(required=False)
    win_outright = forms.BooleanField(required=False)
    bid_required = forms.BooleanField(required=False)
    ranged = forms.BooleanField(required=False)
    ranged_far = forms.BooleanField(required=False)
    surprise = forms.BooleanField(required=False)
    attack = forms.BooleanField(required=False)
    mind_control = forms.BooleanField(required=False)
    effect_public = forms.BooleanField(required=False)
    celerity = forms.IntegerField(min_value=0, max_value=4, required=False)
    weapon = forms.IntegerField(max_value=MAX_ID, required=False)
    attribute = forms.CharField(max_length=40, required=False)
    skill = forms.CharField(max_length=80, required=False)
    bonus = forms.IntegerField(min_value=0, max_value=10, required=False)
    mob = NamedMany(queryset=None, required=False)
    mob_side = forms.ChoiceField(
        choices=[("attacker", "they attack with me"), ("defender", "they defend with my target")],
        required=False,
    )
    seq = forms.IntegerField(min_value=0, max_value=MAX_ID, required=False)
    key = forms.RegexField(regex=KEY_PATTERN, required=False)

    def __init__(self, *args: Any, scene: Scene, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # the attacker and the defender in one read (a tap starts a challenge with both)
        posted = [self.data.get(n) for n in ("attacker", "defender")] if self.is_bound else []
        ids = {i for i in map(_an_id, posted) if i is not None}
        if ids:
            known = access.participants_named_among(scene, user, ids)
            self.fields["attacker"].known = self.fields["defender"].known = known
        # The queryset the fields look ids up in (and a mob's members), built only when one is
        # read from it: a start names both sides by the one read above and no mob, mostly.
        mob = self.data.getlist("mob") if hasattr(self.data, "getlist") else self.data.get("mob")
        if not ids or not self.is_bound or mob:
            here = _named(scene, user)
            for name in ("attacker", "defender", "mob"):
                self.fields[name].queryset = here

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        bid = data.get("bid") or ""
        if ":" in bid:  # "physical:Strong" picks the category with the bid; "rage:" a temper
            category, _, trait = bid.partition(":")
            data["category"] = category
            data["bid"] = trait
        data["mode"] = data.get("mode") or "contested"
        return data

    def service_kwargs(self) -> dict[str, Any]:
        d = self.cleaned_data
        return {
            "attacker": d["attacker"],
            "defender": d.get("defender"),
            "mode": d["mode"],
            "category": d.get("category") or "",
            "bid": d.get("bid") or "",
            "ability": d.get("ability") or "",
            "what": d.get("what") or "",
            "effect": d.get("effect") or "",
            "difficulty": d.get("difficulty") or 0,
            "target_wins": d.get("target_wins") or None,
            "race": d.get("race", False),
            "win_outright": d.get("win_outright", False),
            "bid_required": d.get("bid_required", False),
            "ranged": d.get("ranged", False),
            "ranged_far": d.get("ranged_far", False),
            "surprise": d.get("surprise", False),
            "attack": d.get("attack", False),
            "mind_control": d.get("mind_control", False),
            "effect_public": d.get("effect_public", False),
            "celerity": d.get("celerity") or 0,
            "weapon": d.get("weapon"),
            "attribute": d.get("attribute") or "",
            "skill": d.get("skill") or "",
            "bonus": d.get("bonus") or 0,
            "mob": list(d.get("mob") or []),
            "mob_side": d.get("mob_side") or "attacker",
            "expected_seq": d.get("seq"),
            "key": d.get("key") or None,
        }


ACTIONS = (
    "answer",
    "throw",
    "by_hand",
    "declare",
    "retest",
    "cancel",
    "accept",
    "relent",
    "dispute",
    "negative",
    "blood",
    "choose",
)


class ActForm(PostForm):
    """One step of a side: which action, for which side, and the token of the step (or the
    throw) its screen saw."""

    shared_fields = True  # a tap's form reads its post with the class's own fields

    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS])
    side = forms.ChoiceField(choices=SIDES)
    token = forms.CharField(max_length=40, required=False)  # steps.token: the state seen
    key = forms.RegexField(regex=KEY_PATTERN, required=False)
    answer = forms.ChoiceField(
        choices=[("bid", "bid"), ("relent", "relent"), ("no_bid", "no_bid")], required=False
    )
    bid = forms.CharField(max_length=80, required=False)
    ability = forms.CharField(max_length=80, required=False)
    power = forms.CharField(max_length=120, required=False)
    effect = forms.CharField(max_length=300, required=False)
    weapon = forms.IntegerField(max_value=MAX_ID, required=False)
    attribute = forms.CharField(max_length=40, required=False)
    skill = forms.CharField(max_length=80, required=False)
    bonus = forms.IntegerField(min_value=0, max_value=10, required=False)
    prone = forms.BooleanField(required=False)
    counterattack = forms.BooleanField(required=False)
    throw = forms.ChoiceField(choices=[(t, t) for t in (*THROWS, "random")], required=False)
    result = forms.ChoiceField(
        choices=[("attacker", "attacker"), ("defender", "defender"), ("draw", "draw")],
        required=False,
    )
    total = forms.IntegerField(min_value=0, max_value=999, required=False)
    kind = forms.ChoiceField(
        choices=[(k, k) for k in ("power", "ability", "overbid", "willpower", "free")],
        required=False,
    )
    declared = forms.IntegerField(min_value=0, max_value=999, required=False)
    trait = forms.CharField(max_length=80, required=False)
    text = forms.CharField(max_length=200, required=False)
    amount = forms.IntegerField(min_value=1, max_value=3, required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        needs = {
            "blood": "amount",
            "answer": "answer",
            "throw": "throw",
            "by_hand": "result",
            "declare": "total",
            "retest": "kind",
        }
        field = needs.get(data.get("action", ""))
        if field and data.get(field) in (None, ""):
            raise forms.ValidationError(f"Missing {field}.")
        return data


ST_ACTIONS = (
    "time",
    "pause",
    "force",
    "deny",
    "allow",
    "rule",
    "stamina",
    "surprise",
    "winner",
    "void",
    "by_hand",
)


class StForm(PostForm):
    shared_fields = True

    action = forms.ChoiceField(choices=[(a, a) for a in ST_ACTIONS])
    token = forms.CharField(max_length=40, required=False)  # steps.token: the state seen
    seconds = forms.IntegerField(min_value=1, max_value=600, required=False)
    side = forms.CharField(max_length=10, required=False)
    text = forms.CharField(max_length=300, required=False)
    key = forms.RegexField(regex=KEY_PATTERN, required=False)


class RegainForm(PostForm):
    participant = forms.ModelChoiceField(queryset=None)
    category = forms.ChoiceField(choices=[(c, c) for c in ("physical", "social", "mental")])
    key = forms.RegexField(regex=KEY_PATTERN, required=False)

    def __init__(self, *args: Any, scene: Scene, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["participant"].queryset = _named(scene, user)


class MobForm(PostForm):
    member = forms.ModelChoiceField(queryset=None)
    bid = forms.CharField(max_length=80, required=False)
    drop = forms.BooleanField(required=False)
    drop_out = forms.BooleanField(required=False, help_text="C16: leave a formed mob.")
    step_in = forms.BooleanField(required=False, help_text="C16: take a place left by a drop-out.")
    token = forms.CharField(max_length=40, required=False)  # steps.token: the state seen
    key = forms.RegexField(regex=KEY_PATTERN, required=False)

    def __init__(self, *args: Any, scene: Scene, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["member"].queryset = _named(scene, user)
