"""Venue routes: login cards and the health check."""

from django.urls import path

from venue import views

urlpatterns = [
    path("healthz", views.healthz, name="healthz"),
    path("card/", views.card_login, name="card_login"),
    path("chronicles/<int:pk>/cards/", views.chronicle_cards, name="chronicle_cards"),
    path(
        "chronicles/<int:pk>/cards/print/",
        views.chronicle_cards_print,
        name="chronicle_cards_print",
    ),
    path("chronicles/<int:pk>/cards/<int:card_pk>/revoke/", views.card_revoke, name="card_revoke"),
]
