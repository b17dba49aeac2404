"""Forms of the storyteller's chronicle page."""

from __future__ import annotations

from django import forms


class GameNightForm(forms.Form):
    expected = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)


class ReverseForm(forms.Form):
    reason = forms.CharField(max_length=300, strip=True)
