"""One value of an imported sheet checked against the column it lands in: its type, range,
length, choices, no NUL characters, the same on SQLite and PostgreSQL (what PostgreSQL enforces
and SQLite would not). A bad value raises :class:`BadValue` saying why; the caller adds where.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from django.core.validators import MinValueValidator
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations
from django.utils import timezone


def aware(value: str | None) -> datetime | None:
    if not value:
        return None
    parsed = datetime.fromisoformat(value)
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


class BadValue(Exception):
    """One bad value: why, said by the checker; where, added by the caller."""


def _field(model: type[models.Model], name: str) -> Any:
    return model._meta.get_field(name)


def checked(model: type[models.Model], name: str, value: Any) -> Any:
    """The value as the column will hold it, or :class:`BadValue` saying why not.

    Integer ranges are the portable ones (Django's base operations: what PostgreSQL enforces
    and SQLite would not), so a file imports the same everywhere.
    """
    column = _field(model, name)
    if value is None:
        if column.null:
            return None
        raise BadValue("is missing")
    if isinstance(column, models.DecimalField):
        return _decimal(column, value)
    if isinstance(column, models.BooleanField):
        if not isinstance(value, bool):
            raise BadValue(f"must be true or false, not {shown(value)}")
        return value
    if isinstance(column, models.IntegerField):
        if isinstance(value, bool) or not isinstance(value, int):
            raise BadValue(f"must be a whole number, not {shown(value)}")
        low, high = BaseDatabaseOperations.integer_field_ranges[column.get_internal_type()]
        for validator in column.validators:
            if isinstance(validator, MinValueValidator):
                low = max(low, validator.limit_value)
        if not low <= value <= high:
            raise BadValue(f"must be from {low} to {high}, not {value}")
        return value
    if isinstance(column, (models.CharField, models.TextField)):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            raise BadValue(f"must be text, not {shown(value)}")
        if "\x00" in value:
            raise BadValue("holds a NUL character")
        if column.max_length is not None and len(value) > column.max_length:
            raise BadValue(f"is {len(value)} characters long; the limit is {column.max_length}")
        if column.choices and value not in {c for c, _label in column.flatchoices}:
            if value == "" and column.blank:
                return value
            allowed = ", ".join(str(c) for c, _label in column.flatchoices)
            raise BadValue(f"must be one of {allowed}, not {shown(value)}")
        return value
    return value


def _decimal(column: models.DecimalField, value: Any) -> Decimal:
    """A number the column holds exactly: finite, within its digits, at most its decimals."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        raise BadValue(f"must be a number, not {shown(value)}")
    try:
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        raise BadValue(f"must be a number, not {shown(value)}") from None
    if not number.is_finite():
        raise BadValue(f"must be a number, not {shown(value)}")
    step = Decimal(1).scaleb(-column.decimal_places)
    limit = Decimal(10) ** (column.max_digits - column.decimal_places) - step
    if not -limit <= number <= limit:
        raise BadValue(f"must be from {-limit} to {limit}, not {shown(value)}")
    if number != number.quantize(step):
        raise BadValue(f"has more than {column.decimal_places} decimals: {shown(value)}")
    return number.quantize(step)


def shown(value: Any) -> str:
    if isinstance(value, str):
        text = value if len(value) <= 40 else value[:40] + "…"
        return repr(text)
    if isinstance(value, (dict, list)):
        return "a list" if isinstance(value, list) else "an object"
    if isinstance(value, Decimal):
        return str(value)
    return repr(value)


def required_name(model: type[models.Model], field_name: str, value: Any) -> str:
    """A required name: text, not blank once trimmed, within the column."""
    if not isinstance(value, str):
        raise BadValue(f"must be text, not {shown(value)}")
    value = value.strip()
    if not value:
        raise BadValue("is blank")
    return checked(model, field_name, value)


def mapping(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadValue(f"must be an object of {what}, not {shown(value)}")
    return value


def listing(value: Any, what: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadValue(f"must be a list of {what}, not {shown(value)}")
    return value


def rated(model: type[models.Model], number: str, value: Any) -> dict[str, Any]:
    """``{"Dodge": 2}`` or ``{"Academics": {"rating": 3, "note": "Anthropology"}}``; a trait's
    ``{"Quick": 2}`` or ``{"Brawny": {"count": 2, "note": "str"}}`` the same way."""
    if isinstance(value, dict):
        unknown = set(value) - {number, "note"}
        if unknown:
            raise BadValue(f"has unknown keys {sorted(unknown)}")
        return {
            number: checked(model, number, value.get(number, 1)),
            "note": checked(model, "note", value.get("note") or ""),
        }
    return {number: checked(model, number, value), "note": ""}
