"""The Storytellers group: staff users who edit the sheets of the chronicles they run."""

from django.db import migrations

GROUP = "Storytellers"
MODELS = [
    "chronicle",
    "character",
    "trait",
    "ability",
    "power",
    "attribute",
    "sheetentry",
    "healthlevel",
    "equipment",
    "experienceentry",
    "gamenight",
    "ledgerentry",
]
READ_ONLY = {"gamenight", "ledgerentry"}


def create_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions
    from django.contrib.contenttypes.management import create_contenttypes

    # Permissions are normally made after migrate; make them now so the group can hold them.
    config = apps.get_app_config("characters")
    config.models_module = True
    create_contenttypes(config, apps=apps, verbosity=0)
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name=GROUP)
    codenames = []
    for model in MODELS:
        codenames.append(f"view_{model}")
        if model not in READ_ONLY:
            codenames += [f"add_{model}", f"change_{model}", f"delete_{model}"]
    group.permissions.set(
        Permission.objects.filter(content_type__app_label="characters", codename__in=codenames)
    )


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]
    operations = [migrations.RunPython(create_group, remove_group)]
