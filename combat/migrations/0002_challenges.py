# The challenges' tables (issue 10).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0001_scenes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Challenge",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("mode", models.CharField(default="contested", max_length=12)),
                ("category", models.CharField(blank=True, max_length=12)),
                (
                    "what",
                    models.CharField(
                        blank=True,
                        help_text="The ability, power or effect used (C10, W9 locks).",
                        max_length=120,
                    ),
                ),
                ("attacker_effect", models.CharField(blank=True, max_length=300)),
                ("defender_effect", models.CharField(blank=True, max_length=300)),
                ("difficulty", models.PositiveSmallIntegerField(default=0)),
                (
                    "options",
                    models.JSONField(blank=True, default=dict, help_text="How it was started."),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("answer", "Waiting for the defender's answer"),
                            ("live", "In play"),
                            ("over", "Over"),
                            ("void", "Voided"),
                        ],
                        default="answer",
                        max_length=8,
                    ),
                ),
                (
                    "state",
                    models.JSONField(blank=True, default=dict, help_text="The engine's state."),
                ),
                (
                    "sealed",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="Throws and totals not revealed yet (never rendered).",
                    ),
                ),
                (
                    "history",
                    models.JSONField(
                        blank=True, default=list, help_text="What both sides saw, in order."
                    ),
                ),
                (
                    "step",
                    models.PositiveIntegerField(default=0, help_text="Bumped by every change."),
                ),
                (
                    "deadline",
                    models.DateTimeField(
                        blank=True, help_text="A soft timer; never decides.", null=True
                    ),
                ),
                ("timer_label", models.CharField(blank=True, max_length=80)),
                ("paused", models.BooleanField(default=False)),
                ("winner", models.CharField(blank=True, max_length=8)),
                ("outcome", models.CharField(blank=True, max_length=300)),
                ("void_reason", models.CharField(blank=True, max_length=300)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                (
                    "attacker",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="combat.participant",
                    ),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "defender",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="combat.participant",
                    ),
                ),
                (
                    "scene",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="challenges",
                        to="combat.scene",
                    ),
                ),
            ],
            options={
                "ordering": ["pk"],
            },
        ),
        migrations.CreateModel(
            name="ChallengeLock",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("what", models.CharField(max_length=120)),
                ("until", models.PositiveIntegerField()),
                ("rule", models.CharField(max_length=4)),
                (
                    "attacker",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="combat.participant",
                    ),
                ),
                (
                    "challenge",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="locks",
                        to="combat.challenge",
                    ),
                ),
                (
                    "scene",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="challenge_locks",
                        to="combat.scene",
                    ),
                ),
                (
                    "target",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="combat.participant",
                    ),
                ),
            ],
        ),
    ]
