"""Login cards: a printed QR and short code that log a player in for one game night."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from characters.models import GameNight


class LoginCard(models.Model):
    """One player's card for one game night. Only a hash of its code is kept: the code is shown
    once, on the printed page. It is worth nothing once revoked or once its night is closed
    (the next night opening closes it)."""

    night = models.ForeignKey(GameNight, on_delete=models.CASCADE, related_name="login_cards")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="login_cards"
    )
    code_hash = models.CharField(max_length=64, unique=True)
    made_at = models.DateTimeField(auto_now_add=True)
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # The sessions this card logged in: revoking the card (or closing its night) ends them.
    session_keys = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["night", "user__username", "-made_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["night", "user"],
                condition=Q(revoked_at__isnull=True),
                name="one_valid_card_per_player_and_night",
            )
        ]

    def __str__(self) -> str:
        return f"card of {self.user} for {self.night}"
