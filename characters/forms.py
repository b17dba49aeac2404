"""Forms of the storyteller's chronicle page."""

from __future__ import annotations

from collections.abc import Iterable

from django import forms

from characters.idempotency import KEY_MALFORMED, KeyMalformed, idempotency_key_check
from characters.models import Category, Character, DamageType, LedgerKind
from config.bounds import MAX_ID


class GameNightForm(forms.Form):
    """``expected`` is the open night's number the storyteller saw, 0 when none was open."""

    expected = forms.IntegerField(min_value=0, max_value=MAX_ID, widget=forms.HiddenInput)


class ReverseForm(forms.Form):
    reason = forms.CharField(max_length=300, strip=True)


KINDS = [
    (kind.value, kind.label)
    for kind in LedgerKind
    if kind not in {LedgerKind.REFRESH, LedgerKind.TRAIT_REGAINED}
] + [(LedgerKind.TRAIT_REGAINED.value, "Traits regained (W7: one willpower)")]
CATEGORIES = [("", "—"), *Category.choices]
DAMAGE_TYPES = [("", "—"), *DamageType.choices]


def subject_choices(characters: Iterable[Character], now: dict[int, dict]) -> list:
    """Each character's traits and abilities, grouped per character, with current values."""
    groups: list = [("", "—")]
    for character in characters:
        values = now[character.pk]
        options = [
            (
                f"trait:{trait.pk}",
                f"{trait.name} ({trait.category}) "
                f"{values['traits'][trait.category][trait.name]}/{trait.count}",
            )
            for trait in character.traits.all()
            if not trait.negative
        ]
        options += [
            (
                f"ability:{ability.pk}",
                f"{ability.name} (ability) {values['abilities'][ability.name]}/{ability.rating}",
            )
            for ability in character.abilities.all()
        ]
        if options:
            groups.append((character.name, options))
    return groups


class LedgerRecordForm(forms.Form):
    """A cost the storyteller records by hand (a challenge run on paper, say)."""

    character = forms.ModelChoiceField(queryset=Character.objects.none())
    kind = forms.ChoiceField(choices=KINDS)
    subject = forms.ChoiceField(
        required=False, label="Trait or ability", help_text="For a lost trait or ability points"
    )
    category = forms.ChoiceField(
        choices=CATEGORIES, required=False, help_text="For traits regained"
    )
    damage_type = forms.ChoiceField(choices=DAMAGE_TYPES, required=False, help_text="For damage")
    amount = forms.IntegerField(min_value=1, max_value=50, initial=1)
    reason = forms.CharField(max_length=300, required=False)
    key = forms.CharField(
        widget=forms.HiddenInput, strip=False, error_messages={"required": KEY_MALFORMED}
    )

    def clean_key(self) -> str:
        try:
            return idempotency_key_check(self.cleaned_data["key"])
        except KeyMalformed as error:
            raise forms.ValidationError(str(error)) from None

    def __init__(
        self, *args: object, characters: list[Character], now: dict[int, dict], **kwargs: object
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = Character.objects.filter(
            pk__in=[c.pk for c in characters]
        )
        self.fields["subject"].choices = subject_choices(characters, now)
        self._sheet_parts = {
            **{f"trait:{t.pk}": t for c in characters for t in c.traits.all()},
            **{f"ability:{a.pk}": a for c in characters for a in c.abilities.all()},
        }

    def clean(self) -> dict:
        data = super().clean()
        kind, character = data.get("kind"), data.get("character")
        part = self._sheet_parts.get(data.get("subject") or "")
        data["trait"] = part if data.get("subject", "").startswith("trait:") else None
        data["ability"] = part if data.get("subject", "").startswith("ability:") else None
        if kind == LedgerKind.TRAIT_LOST and data["trait"] is None:
            self.add_error("subject", "Pick the trait lost.")
        elif kind == LedgerKind.ABILITY_SPENT and data["ability"] is None:
            self.add_error("subject", "Pick the ability spent.")
        elif kind == LedgerKind.TRAIT_REGAINED and not data.get("category"):
            self.add_error("category", "Pick the category regained.")
        if part is not None and character is not None and part.character_id != character.pk:
            self.add_error("subject", f"{part.name} is not on {character}'s sheet.")
        return data
