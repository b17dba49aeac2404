"""Forms read from a tap's post copy their fields cheaply (combat.post_forms), each form's
fields its own as Django's deep copy makes them."""

from __future__ import annotations

import copy

import pytest
from django import forms
from django.http import QueryDict

from combat.challenges.forms import ActForm, StartForm
from combat.post_forms import PostForm, copy_field
from combat.rounds.forms import DeclareForm


class _Sample(PostForm):
    name = forms.CharField(max_length=10, required=False)
    pick = forms.ChoiceField(choices=[("a", "A"), ("b", "B")])
    grouped = forms.ChoiceField(choices=[("Group", [("x", "X"), ("y", "Y")])], required=False)
    many = forms.ModelMultipleChoiceField(queryset=None, required=False)
    when = forms.SplitDateTimeField(required=False)  # a multi-widget: deep copied


def _state(field: forms.Field) -> dict:
    """What a form may change of its copy of a field, as plain values."""
    widget = field.widget
    return {
        "class": type(field),
        "widget": type(widget),
        "attrs": widget.attrs,
        "messages": field.error_messages,
        "validators": field.validators,
        "choices": getattr(field, "_choices", None),
        # a model field's: an iterator over its queryset (compared by what it iterates)
        "widget_choices": (
            (type(widget._choices), getattr(widget._choices, "queryset", None))
            if isinstance(field, forms.ModelChoiceField)
            else getattr(widget, "_choices", None)
        ),
        "required": field.required,
    }


@pytest.mark.parametrize("form_class", [_Sample, ActForm, StartForm, DeclareForm])
def test_each_field_is_copied_as_django_deep_copies_it(form_class):
    for name, field in form_class.base_fields.items():
        ours, django = copy_field(field), copy.deepcopy(field)
        assert _state(ours) == _state(django), name
        assert ours is not field and ours.widget is not field.widget, name


def test_what_one_form_changes_of_its_fields_stays_its_own():
    first, second = _Sample(), _Sample()
    first.fields["name"].widget.attrs["class"] = "big"
    first.fields["name"].error_messages["required"] = "changed"
    first.fields["name"].validators.append(lambda value: None)
    first.fields["pick"].choices = [("c", "C")]
    first.fields["grouped"].choices[0][1].append(("z", "Z"))
    first.fields["when"].widget.widgets[0].attrs["class"] = "big"
    for form in (second, _Sample()):
        assert "class" not in form.fields["name"].widget.attrs
        assert form.fields["name"].error_messages["required"] != "changed"
        assert form.fields["name"].validators == _Sample.base_fields["name"].validators
        assert form.fields["pick"].choices == [("a", "A"), ("b", "B")]
        assert list(form.fields["pick"].widget.choices) == [("a", "A"), ("b", "B")]
        assert form.fields["grouped"].choices == [("Group", [("x", "X"), ("y", "Y")])]
        assert "class" not in form.fields["when"].widget.widgets[0].attrs


@pytest.mark.django_db
def test_a_model_field_gets_a_queryset_of_its_own():
    from combat.models import Participant

    form = _Sample()
    form.fields["many"].queryset = Participant.objects.filter(pk=1)
    assert _Sample.base_fields["many"].queryset is None
    assert _Sample().fields["many"].queryset is None


def test_a_post_form_reads_a_post_as_a_django_form_does():
    post = {"action": "throw", "side": "attacker", "throw": "rock", "key": "abcdefgh12"}

    plain_class = type("Plain", (forms.Form,), copy.deepcopy(dict(ActForm.base_fields)))
    ours, plain = ActForm(post), plain_class(post)
    assert ours.is_valid() and plain.is_valid()
    assert ours.cleaned_data == plain.cleaned_data
    bad = ActForm({**post, "side": "nobody", "total": "x"})
    assert not bad.is_valid()
    assert set(bad.errors) == {"side", "total"}


def test_a_form_sharing_its_fields_reads_posts_as_one_with_copies():
    """ActForm shares the class's fields (combat.post_forms: no copy per tap); reading one post
    after another, valid and not, gives what a form with fields of its own gives, and leaves
    the class's fields as they were."""
    assert ActForm.base_fields.shared and not _Sample.base_fields.shared
    before = {name: _state(field) for name, field in ActForm.base_fields.items()}
    copied = type("Copied", (ActForm,), {})  # its clean(), each form copying its fields
    assert not copied.base_fields.shared
    posts = [
        {"action": "throw", "side": "attacker", "throw": "rock", "key": "abcdefgh12"},
        {"action": "nothing", "side": "nobody", "total": "x", "bonus": "11"},
        {"action": "blood", "side": "defender"},
        {"action": "declare", "side": "defender", "total": "7", "prone": "on"},
    ]
    for post in posts:
        ours, theirs = ActForm(post), copied(post)
        assert ours.fields["action"] is ActForm.base_fields["action"]
        assert theirs.fields["action"] is not ActForm.base_fields["action"]
        assert ours.is_valid() == theirs.is_valid()
        assert ours.errors == theirs.errors
        assert ours.cleaned_data == theirs.cleaned_data
    assert {name: _state(field) for name, field in ActForm.base_fields.items()} == before


def test_a_form_that_changes_its_fields_cannot_share_them():
    with pytest.raises(TypeError, match="shares its fields"):

        class _Changes(PostForm):
            shared_fields = True
            pick = forms.ChoiceField(choices=[("a", "A")])

            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.fields["pick"].choices = [("b", "B")]


class _Hooked(PostForm):
    name = forms.CharField(max_length=5)
    count = forms.IntegerField(min_value=0, required=False)
    pick = forms.MultipleChoiceField(choices=[("a", "A"), ("b", "B")], required=False)

    def clean_name(self) -> str:
        if self.cleaned_data["name"] == "bad":
            raise forms.ValidationError("Not that name.")
        return self.cleaned_data["name"].upper()


class _Disabled(_Hooked):
    count = forms.IntegerField(disabled=True, initial=3, required=False)


@pytest.mark.parametrize(
    "form_class, posts",
    [
        (
            ActForm,
            [
                {"action": "throw", "side": "attacker", "throw": "rock", "key": "abcdefgh12"},
                {"action": "nothing", "side": "nobody", "total": "x", "bonus": "11"},
                {"action": "blood", "side": "defender"},
                {"action": "declare", "side": "defender", "total": "7", "prone": "on"},
                {"side": "attacker", "token": "t" * 41, "key": "no spaces"},
            ],
        ),
        (
            _Hooked,
            [
                {"name": "ok", "count": "2", "pick": ["a", "b"]},
                {"name": "bad", "count": "-1", "pick": ["c"]},
                {"name": "toolong", "count": "x"},
                {},
            ],
        ),
        (_Disabled, [{"name": "ok", "count": "9"}, {"name": "bad"}]),
    ],
)
def test_a_post_form_cleans_each_post_as_django_does(form_class, posts):
    """A post form cleans its fields without a bound field for each (combat.post_forms): the
    same values, errors and validity as Django's own cleaning, its ``clean_<name>`` hooks
    too, and a disabled field's initial value."""
    plain = type("Plain", (form_class,), {"_clean_fields": forms.Form._clean_fields})
    for post in posts:
        data = QueryDict(mutable=True)
        for name, value in post.items():
            data.setlist(name, value if isinstance(value, list) else [value])
        ours, django = form_class(data), plain(data)
        assert ours.is_valid() == django.is_valid(), post
        assert ours.errors == django.errors, post
        assert ours.cleaned_data == django.cleaned_data, post
