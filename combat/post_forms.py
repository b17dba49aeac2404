"""Forms that read a tap's post, their fields copied for each form at a tenth of the cost.

Django gives every form its own fields with ``copy.deepcopy(base_fields)``, which for a tap's
form of twenty-odd fields cost more CPU than the rest of reading it: the generic deep copy
walks each field, its widget and every choice. :class:`PostForm` makes the same copies
directly: each field and its widget copied, and whatever of them a form may change in its
own copy (the widget's attributes, the error messages, the validators, the choices, a model
field's queryset) copied as ``Field.__deepcopy__`` and its subclasses copy them. A field of a
class not listed in :data:`SHALLOW` (one whose own ``__deepcopy__`` copies more) is deep
copied as Django does.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from django import forms
from django.forms.forms import DeclarativeFieldsMetaclass

#: Field classes whose ``__deepcopy__`` (and their widgets') copies no more than
#: :func:`copy_field` does: the field, its widget and its widget's attributes, error messages,
#: validators, choices (tuples of strings), a model field's queryset (``.all()``).
SHALLOW: frozenset[type[forms.Field]] = frozenset(
    {
        forms.CharField,
        forms.RegexField,
        forms.IntegerField,
        forms.BooleanField,
        forms.ChoiceField,
        forms.ModelChoiceField,
        forms.ModelMultipleChoiceField,
    }
)
#: Widgets whose ``__deepcopy__`` copies the widget and its attributes (a choice widget: and
#: its choices list); a multi-widget copies its widgets too and is not among them.
WIDGETS: frozenset[type[forms.Widget]] = frozenset(
    {
        forms.TextInput,
        forms.NumberInput,
        forms.CheckboxInput,
        forms.Select,
        forms.SelectMultiple,
        forms.HiddenInput,
    }
)


def _copied(obj: Any) -> Any:
    """A shallow copy, as ``copy.copy`` makes of an object with no ``__copy__``."""
    out = object.__new__(type(obj))
    out.__dict__.update(obj.__dict__)
    return out


@cache
def _copies_shallow(kind: type[forms.Field], widget: type[forms.Widget]) -> bool:
    """Whether a field of ``kind`` with a ``widget`` is copied here (see :data:`SHALLOW`):
    neither declares a ``__deepcopy__`` of its own below the classes listed."""
    base = next((k for k in kind.__mro__ if k in SHALLOW), None)
    if base is None or widget not in WIDGETS:
        return False
    return not any("__deepcopy__" in k.__dict__ for k in kind.__mro__[: kind.__mro__.index(base)])


def copy_field(field: forms.Field) -> forms.Field:
    """``field`` copied for one form, as ``copy.deepcopy`` copies it (see :data:`SHALLOW`)."""
    if not _copies_shallow(type(field), type(field.widget)):
        return copy.deepcopy(field)
    out = _copied(field)
    widget = out.widget = _copied(field.widget)
    widget.attrs = field.widget.attrs.copy()
    if "_choices" in field.widget.__dict__:  # a choice widget's (normalized) choices
        choices = field.widget._choices
        if _flat(choices):
            widget._choices = list(choices)
        else:
            widget.choices = copy.copy(choices)  # as ChoiceWidget.__deepcopy__
    out.error_messages = field.error_messages.copy()
    out.validators = field.validators[:]
    if isinstance(field, forms.ModelChoiceField):
        if field.queryset is not None:
            out.queryset = field.queryset.all()  # sets the widget's choices too
    elif isinstance(field, forms.ChoiceField):
        out._choices = _choices_copy(field._choices)
    return out


def _flat(choices: Any) -> bool:
    """Whether ``choices`` are a list of (value, label) pairs of strings or numbers: a copy
    of the list is a deep copy (its pairs cannot change)."""
    return type(choices) is list and all(
        type(c) is tuple and all(type(x) in (str, int) for x in c) for c in choices
    )


def _choices_copy(choices: Any) -> Any:
    """A field's choices as ``ChoiceField.__deepcopy__`` copies them (deep: groups hold
    lists), at the cost of a list's copy when they are :func:`_flat`."""
    return list(choices) if _flat(choices) else copy.deepcopy(choices)


class _Fields(dict):
    """A form class's ``base_fields``: ``copy.deepcopy`` of it (each form's ``fields``) copies
    each field with :func:`copy_field`; a :attr:`PostForm.shared_fields` form's are the
    class's own fields, in a dict of the form's own."""

    shared = False

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, forms.Field]:
        if self.shared:
            return dict(self)
        return {name: copy_field(field) for name, field in self.items()}


class _PostFormMetaclass(DeclarativeFieldsMetaclass):
    def __new__(mcs, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> type:
        cls = super().__new__(mcs, name, bases, attrs)
        fields = cls.base_fields = _Fields(cls.base_fields)  # type: ignore[attr-defined]
        fields.shared = bool(attrs.get("shared_fields", False))
        if fields.shared and any(
            "__init__" in k.__dict__ for k in cls.__mro__ if issubclass(k, PostForm)
        ):
            # a form that changes its fields (a queryset, a user's choices) in its __init__
            # would change every other form's: each has its own copies
            raise TypeError(f"{name} shares its fields and has an __init__ of its own")
        return cls


class PostForm(forms.Form, metaclass=_PostFormMetaclass):
    """A form read from a tap's post, its fields copied by :func:`copy_field`.

    ``shared_fields = True`` (a class's own, not inherited): its forms use the class's fields
    themselves, not copies (a tap's form of two dozen fields then costs none of their
    copying). Only for a form that changes none of its fields: no ``__init__`` of its own
    (refused), and nothing of it sets a field's queryset, choices or widget; reading a post
    (``is_valid``, ``cleaned_data``, errors) changes no field."""

    shared_fields = False

    def _clean_fields(self) -> None:
        """Django's cleaning of each field, without making a ``BoundField`` for each (a
        tap's form has two dozen fields, most not posted): each field cleans what its widget
        reads of the post, then the form's ``clean_<name>``. A disabled field, or one that
        cleans its bound field another way (a file's), is cleaned as Django cleans it."""
        plain = forms.Field._clean_bound_field
        if any(f.disabled or type(f)._clean_bound_field is not plain for f in self.fields.values()):
            super()._clean_fields()  # type: ignore[misc]
            return
        for name, field in self.fields.items():
            try:
                value = field.widget.value_from_datadict(
                    self.data, self.files, self.add_prefix(name)
                )
                self.cleaned_data[name] = field.clean(value)
                if hasattr(self, f"clean_{name}"):
                    self.cleaned_data[name] = getattr(self, f"clean_{name}")()
            except forms.ValidationError as error:
                self.add_error(name, error)
