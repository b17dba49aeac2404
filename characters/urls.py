from django.urls import path

from characters import card_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("characters/<int:pk>/", views.character_sheet, name="character"),
    path("characters/<int:pk>/print/", views.character_print, name="character_print"),
    path("chronicles/<int:pk>/", views.chronicle_desk, name="chronicle"),
    path("chronicles/<int:pk>/nights/open/", views.game_night_open, name="game_night_open"),
    path(
        "chronicles/<int:pk>/nights/refresh/", views.game_night_refresh, name="game_night_refresh"
    ),
    path(
        "chronicles/<int:pk>/nights/<int:number>/report/",
        views.night_report_page,
        name="night_report",
    ),
    path(
        "chronicles/<int:pk>/nights/<int:number>/report.json",
        views.night_report_json,
        name="night_report_json",
    ),
    path("chronicles/<int:pk>/ledger/", views.ledger_record, name="ledger_record"),
    path(
        "chronicles/<int:pk>/ledger/<int:entry_pk>/reverse/",
        views.ledger_reverse,
        name="ledger_reverse",
    ),
    path("card/", card_views.card_login, name="card_login"),
    path("chronicles/<int:pk>/cards/", card_views.chronicle_cards, name="chronicle_cards"),
    path(
        "chronicles/<int:pk>/cards/print/",
        card_views.chronicle_cards_print,
        name="chronicle_cards_print",
    ),
    path(
        "chronicles/<int:pk>/cards/<int:card_pk>/revoke/",
        card_views.card_revoke,
        name="card_revoke",
    ),
]
