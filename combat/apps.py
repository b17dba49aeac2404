from django.apps import AppConfig


class CombatConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "combat"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out

        from combat.live import close_session_sockets

        user_logged_out.connect(close_session_sockets, dispatch_uid="combat.close_session_sockets")

        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save, pre_save

        from combat.live import close_stale_sockets, note_account_change

        # A new password, a deactivation or a deleted account closes the user's other sockets.
        user = get_user_model()
        pre_save.connect(note_account_change, sender=user, dispatch_uid="combat.account_change")
        post_save.connect(close_stale_sockets, sender=user, dispatch_uid="combat.account_saved")
        post_delete.connect(close_stale_sockets, sender=user, dispatch_uid="combat.account_gone")

        from combat.live import note_people_changed
        from combat.models import Participant

        # A change that writes participants sends the players concerned their whole part.
        post_save.connect(note_people_changed, sender=Participant, dispatch_uid="combat.people")
        post_delete.connect(note_people_changed, sender=Participant, dispatch_uid="combat.gone")

        from characters.signals import night_closed, sheets_changed
        from combat.live import on_sheets_changed
        from combat.services import scenes_close_with_night

        night_closed.connect(scenes_close_with_night, dispatch_uid="combat.scenes_close_with_night")
        sheets_changed.connect(on_sheets_changed, dispatch_uid="combat.sheets_changed")

        from combat.rounds import handback

        handback.connect()  # a chase started by an escape hands a catch back to its round

        from combat import region_reads

        region_reads.connect()  # what the features' regions read before a render
