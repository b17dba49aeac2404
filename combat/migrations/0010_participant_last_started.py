"""Each participant's latest challenge as attacker kept on its row
(``Participant.last_started``): a start form's key reads it with the participants instead of
looking up each one's newest challenge (which PostgreSQL's planner, on a skewed history,
answered by walking the whole table backwards). Filled from the challenges there are."""

from django.db import migrations, models
from django.db.models import Max, OuterRef, Subquery
from django.db.models.functions import Coalesce


def started_last(Challenge):
    """A participant's (``OuterRef("pk")``) newest challenge as attacker, 0 for one that never
    attacked (tests that write challenges in bulk note it the same way)."""
    newest = (
        Challenge.objects.filter(attacker=OuterRef("pk"))
        .order_by()
        .values("attacker")
        .annotate(last=Max("pk"))
        .values("last")
    )
    return Coalesce(Subquery(newest), 0)


def fill(apps, schema_editor):
    """Each participant's newest challenge as attacker, 0 for one that never attacked."""
    Participant = apps.get_model("combat", "Participant")
    Participant.objects.update(last_started=started_last(apps.get_model("combat", "Challenge")))


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0009_log_characters_newest"),
    ]

    operations = [
        migrations.AddField(
            model_name="participant",
            name="last_started",
            field=models.PositiveBigIntegerField(
                default=0,
                help_text="The id of the latest challenge it started as attacker, 0 before its"
                " first (its start form's key; written by the start,"
                " combat.challenges.starting).",
            ),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
