"""A player's own part's sequence number (``Participant.own_seq``), for the hubs' catch-up."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("combat", "0004_scene_players_seq"),
    ]

    operations = [
        migrations.AddField(
            model_name="participant",
            name="own_seq",
            field=models.PositiveBigIntegerField(
                default=0,
                help_text="The scene's seq at the last change to its player's own part (the hubs"
                " compare it with what each phone was sent; never shown to a phone).",
            ),
        ),
    ]
