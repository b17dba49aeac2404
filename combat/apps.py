from django.apps import AppConfig


class CombatConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "combat"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        from combat.live import close_session_sockets

        user_logged_out.connect(close_session_sockets, dispatch_uid="combat.close_session_sockets")

        from characters.signals import night_closed
        from combat.services import scenes_close_with_night

        night_closed.connect(scenes_close_with_night, dispatch_uid="combat.scenes_close_with_night")

        from combat.rounds import handback

        handback.connect()  # a chase started by an escape hands a catch back to its round
