from django.apps import AppConfig


class CharactersConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "characters"

    def ready(self) -> None:
        from characters import sheet_versions
        from characters.cards import end_sessions_of_night
        from characters.signals import night_closed

        sheet_versions.connect()

        night_closed.connect(end_sessions_of_night, dispatch_uid="characters.end_sessions_of_night")
