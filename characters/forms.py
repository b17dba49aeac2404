"""Forms of the storyteller's chronicle page."""

from __future__ import annotations

from django import forms

from characters.models import Category, Character, Chronicle, LedgerKind


class GameNightForm(forms.Form):
    expected = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


class ReverseForm(forms.Form):
    reason = forms.CharField(max_length=300, strip=True)


SPENDABLE = [
    (kind.value, kind.label)
    for kind in LedgerKind
    if kind not in {LedgerKind.REFRESH, LedgerKind.TRAIT_REGAINED}
]
CATEGORIES = [("", "—"), *Category.choices]


class LedgerRecordForm(forms.Form):
    """A cost the storyteller records by hand (a challenge run on paper, say)."""

    character = forms.ModelChoiceField(queryset=Character.objects.none())
    kind = forms.ChoiceField(choices=SPENDABLE)
    subject = forms.CharField(max_length=120, required=False, help_text="Trait or ability")
    category = forms.ChoiceField(choices=CATEGORIES, required=False)
    amount = forms.IntegerField(min_value=1, max_value=50, initial=1)
    reason = forms.CharField(max_length=300, required=False)
    key = forms.CharField(max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args: object, chronicle: Chronicle, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["character"].queryset = chronicle.characters.all()

    def clean(self) -> dict:
        data = super().clean()
        kind = data.get("kind")
        if kind == LedgerKind.TRAIT_LOST and not (data.get("subject") and data.get("category")):
            raise forms.ValidationError("Name the trait and its category.")
        if kind == LedgerKind.ABILITY_SPENT and not data.get("subject"):
            raise forms.ValidationError("Name the ability.")
        return data
