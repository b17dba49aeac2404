"""The Storytellers group: staff users who edit the sheets of the chronicles they run."""

from django.db import migrations

from characters.roles import GROUP, storytellers_group


def create_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions
    from django.contrib.contenttypes.management import create_contenttypes

    # Permissions are normally made after migrate; make them now so the group can hold them.
    config = apps.get_app_config("characters")
    config.models_module = True
    create_contenttypes(config, apps=apps, verbosity=0)
    create_permissions(config, apps=apps, verbosity=0)
    config.models_module = None
    storytellers_group(apps.get_model("auth", "Group"), apps.get_model("auth", "Permission"))


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]
    operations = [migrations.RunPython(create_group, remove_group)]
