"""Forms of the scene pages: every post is validated here before a service sees it."""

from __future__ import annotations

import re
from typing import Any

from django import forms
from django.contrib.auth.models import AbstractBaseUser

from characters.models import Character, Ruleset
from characters.selectors import chronicles_run_by
from combat.models import JOIN_CODE_LENGTH, Scene
from combat.post_forms import PostForm
from combat.services import MAX_CLOCK_STEP

POOLS_HELP = "Name and number, one pair a line or comma-separated: Physical 7, Social 5, Brawl 3"
BAD_POOL = "Pools are a name and a number, like “Physical 7”; “{part}” is not."
POOL_RANGE = "A pool is 0 to 99; “{part}” is not."
TOO_MANY_POOLS = "At most 20 pools for a quick NPC."
NPC_ONE_OF = "Pick an NPC sheet or type a quick NPC's name (not both)."
KEY_PATTERN = r"^[A-Za-z0-9_-]{8,64}$"
TOKEN_PATTERN = r"^[0-9a-f]{16}$"  # combat.steps.token

_POOL = re.compile(r"^(?P<name>[^\d:=]+?)\s*[:=]?\s*(?P<value>-?\d+)$")


def parse_pools(text: str) -> dict[str, int]:
    """``"Physical 7, Social 5\\nBrawl: 3"`` -> ``{"Physical": 7, "Social": 5, "Brawl": 3}``."""
    pools: dict[str, int] = {}
    for raw in re.split(r"[,;\n]", text or ""):
        part = raw.strip()
        if not part:
            continue
        match = _POOL.match(part)
        if match is None:
            raise forms.ValidationError(BAD_POOL.format(part=part[:40]))
        value = int(match["value"])
        if not 0 <= value <= 99:
            raise forms.ValidationError(POOL_RANGE.format(part=part[:40]))
        pools[match["name"].strip()[:40]] = value
    if len(pools) > 20:
        raise forms.ValidationError(TOO_MANY_POOLS)
    return pools


class OpenSceneForm(forms.Form):
    chronicle = forms.ModelChoiceField(queryset=None, empty_label=None)
    name = forms.CharField(max_length=120, strip=True)
    ruleset = forms.ChoiceField(
        choices=[("", "The chronicle's ruleset"), *Ruleset.choices], required=False
    )

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["chronicle"].queryset = chronicles_run_by(user).order_by("name")


class StepForm(PostForm):
    """A scene step's post: the tap's key (a double tap counts once) and the token of the
    board it was made on (a board that moved on is refused), both optional here."""

    key = forms.RegexField(regex=KEY_PATTERN, required=False)
    token = forms.RegexField(regex=TOKEN_PATTERN, required=False)


class ClockForm(StepForm):
    seconds = forms.IntegerField(min_value=1, max_value=MAX_CLOCK_STEP)
    key = forms.RegexField(regex=KEY_PATTERN)


class SituationForm(StepForm):
    situation = forms.CharField(max_length=300, required=False, strip=True)


class RulesetForm(StepForm):
    ruleset = forms.ChoiceField(choices=Ruleset.choices)


class NpcForm(StepForm):
    character = forms.ModelChoiceField(queryset=None, required=False)
    name = forms.CharField(max_length=120, required=False, strip=True)
    pools = forms.CharField(max_length=600, required=False, help_text=POOLS_HELP)
    hidden = forms.BooleanField(required=False)

    def __init__(self, *args: Any, scene: Scene, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = Character.objects.filter(
            chronicle_id=scene.chronicle_id, npc=True
        )

    def clean_pools(self) -> dict[str, int]:
        return parse_pools(self.cleaned_data.get("pools", ""))

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if bool(data.get("character")) == bool(data.get("name")):
            raise forms.ValidationError(NPC_ONE_OF)
        return data


class JoinForm(forms.Form):
    code = forms.CharField(max_length=JOIN_CODE_LENGTH + 4, strip=True)
    character = forms.ModelChoiceField(
        queryset=None,
        required=False,
        error_messages={"invalid_choice": "That is not one of your characters."},
    )

    def __init__(self, *args: Any, user: AbstractBaseUser, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = Character.objects.filter(player=user)

    def clean_code(self) -> str:
        return re.sub(r"[\s-]", "", self.cleaned_data["code"]).upper()


def problems(form: forms.Form) -> str:
    """A form's errors as one sentence for people."""
    found = []
    for name, errors in form.errors.items():
        label = "" if name == "__all__" else f"{form.fields[name].label or name.capitalize()}: "
        found.extend(f"{label}{error}" for error in errors)
    return " ".join(found)
