from django.apps import AppConfig


class CombatConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "combat"
