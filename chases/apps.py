from django.apps import AppConfig


class ChasesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "chases"
