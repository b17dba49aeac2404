"""A character's lines, newest first, without walking the scene's log (combat.own_log): an
index on the lines' characters ``(character, line)``. The table is the many-to-many's own
(``SceneLogEntry.characters``), which declares no index of its own: written as SQL both
PostgreSQL and SQLite take."""

from django.db import migrations

INDEX = "combat_log_named_newest"
TABLE = "combat_scenelogentry_characters"


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0008_scene_challenges_done"),
    ]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX {INDEX} ON {TABLE} (character_id, scenelogentry_id)",
            f"DROP INDEX {INDEX}",
        ),
    ]
