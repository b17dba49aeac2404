# The combat rounds' tables (issue 11).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0002_challenges"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Combat",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("ruleset", models.CharField(max_length=20)),
                (
                    "stage",
                    models.CharField(
                        choices=[
                            ("initiative", "Initiative"),
                            ("round", "Round"),
                            ("book_keeping", "Book keeping"),
                            ("over", "Over"),
                        ],
                        default="initiative",
                        max_length=20,
                    ),
                ),
                ("round_number", models.PositiveIntegerField(default=1)),
                ("paused", models.BooleanField(default=False)),
                (
                    "members",
                    models.JSONField(default=list, help_text="Participant ids in the fight."),
                ),
                (
                    "initiative",
                    models.JSONField(default=dict, help_text="D3: per participant id, this round."),
                ),
                (
                    "state",
                    models.JSONField(default=dict, help_text="The engine's round state (to_dict)."),
                ),
                (
                    "haste",
                    models.JSONField(default=dict, help_text="D4: haste actions, carried over."),
                ),
                (
                    "effects",
                    models.JSONField(default=list, help_text="D17: effects lasting rounds."),
                ),
                (
                    "reminders",
                    models.JSONField(default=list, help_text="D17: reminders players raised."),
                ),
                (
                    "grapples",
                    models.JSONField(default=list, help_text="G1-G9: grapples in progress."),
                ),
                (
                    "work",
                    models.JSONField(
                        default=dict, help_text="The phase being resolved: rolls, spent."
                    ),
                ),
                (
                    "results",
                    models.JSONField(
                        default=list, help_text="The latest resolutions, dice and all."
                    ),
                ),
                (
                    "npc_damage",
                    models.JSONField(
                        default=dict,
                        help_text="D2: damage levels of quick NPCs (no sheet, no ledger).",
                    ),
                ),
                ("started_at", models.DateTimeField(auto_now_add=True)),
                ("ended_at", models.DateTimeField(blank=True, null=True)),
                (
                    "scene",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="combats",
                        to="combat.scene",
                    ),
                ),
                (
                    "started_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-started_at", "-pk"],
                "constraints": [
                    models.UniqueConstraint(
                        condition=models.Q(("ended_at__isnull", True)),
                        fields=("scene",),
                        name="one_running_combat_per_scene",
                    )
                ],
            },
        ),
    ]
