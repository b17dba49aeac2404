"""The phones' own sequence number (``Scene.players_seq``), starting where ``seq`` is."""

from django.db import migrations, models
from django.db.models import F


def start_at_seq(apps, schema_editor):
    apps.get_model("combat", "Scene").objects.update(players_seq=F("seq"))


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0003_rounds"),
    ]

    operations = [
        migrations.AddField(
            model_name="scene",
            name="players_seq",
            field=models.PositiveBigIntegerField(
                default=0,
                help_text="Bumped by every change the players see (the phones' sequence: a step"
                " only a hidden NPC takes leaves it, so no phone can count such steps).",
            ),
        ),
        migrations.RunPython(start_at_seq, migrations.RunPython.noop),
    ]
