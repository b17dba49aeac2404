from django.apps import AppConfig


class VenueConfig(AppConfig):
    """Running a real night: login cards, the first storyteller, the health check."""

    name = "venue"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from characters.signals import night_closed
        from venue.cards import end_sessions_of_night

        night_closed.connect(end_sessions_of_night, dispatch_uid="venue.end_sessions_of_night")
