"""PostgreSQL's ``timestamptz`` values are read by psycopg's C loader (``config.postgresql``):
the same values, in the same time zone object, as Django's own loader gives, for any offset,
precision or era; a connection in another time zone keeps Django's loader."""

from __future__ import annotations

import datetime
import types

import pytest
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader

from combat.models import SceneLogEntry
from tests.factories import SceneFactory

pytestmark = pytest.mark.django_db

# Values at their worst: offsets either side, microseconds, a leap day, a DST change in
# Europe, the first year, the far future, negative and fractional offsets.
LITERALS = (
    "2026-03-29 00:59:59.999999+00",
    "2026-03-29 01:00:00+00",
    "2028-02-29 23:30:00.5-05",
    "1999-12-31 23:00:00-05:30",
    "2026-11-28 07:00:00.000001+14",
    "0001-01-01 00:00:00+00",
    "9999-12-31 23:59:59.999999+00",
    "1969-07-20 20:17:40+00",
)


@pytest.fixture
def postgresql():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's loader")


def _read(django_loader: bool) -> list[datetime.datetime]:
    sql = "SELECT " + ", ".join(f"timestamptz '{v}'" for v in LITERALS)
    sql += " FROM generate_series(1, 3)"
    with connection.cursor() as cursor:
        if django_loader:
            register_tzloader(connection.timezone, cursor.cursor)
        cursor.execute(sql)
        return [v for row in cursor.fetchall() for v in row]


def test_the_c_loader_reads_every_value_as_djangos_does(postgresql):
    fast, django = _read(False), _read(True)
    assert fast == django
    assert all(a.tzinfo is b.tzinfo is datetime.UTC for a, b in zip(fast, django, strict=True))


def test_a_connection_reads_timestamps_with_the_c_loader(postgresql):
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        loader = cursor.cursor.adapters.get_loader(1184, 0)  # timestamptz, text
        # Django's cursor registered no loader of its own (its time zone matched)
        assert loader is connection.connection.adapters.get_loader(1184, 0)
        load = loader(1184, cursor.cursor).load
    assert loader.timezone is datetime.UTC
    # psycopg's compiled one, not a Python function (Django's loader is one, calling Python's)
    assert not isinstance(getattr(load, "__func__", load), types.FunctionType)


def test_a_model_reads_back_what_it_wrote(postgresql):
    scene = SceneFactory()
    written = datetime.datetime(2026, 11, 28, 21, 15, 3, 250001, tzinfo=datetime.UTC)
    entry = SceneLogEntry.objects.create(scene=scene, seq=1, game_time=0, kind="note", text="x")
    SceneLogEntry.objects.filter(pk=entry.pk).update(created_at=written)
    assert SceneLogEntry.objects.get(pk=entry.pk).created_at == written


def test_a_connection_in_another_time_zone_keeps_djangos_loader(postgresql, settings):
    from config.postgresql.base import DatabaseWrapper

    settings_dict = {**connection.settings_dict, "TIME_ZONE": "Europe/Paris"}
    other = DatabaseWrapper(settings_dict, alias="paris")
    context = other.get_connection_params()["context"]
    loader = context.get_loader(1184, 0)
    assert loader.timezone == other.timezone != datetime.UTC
    assert loader.__name__ == "SpecificTzLoader"  # Django's
