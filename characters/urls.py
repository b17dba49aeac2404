from django.urls import path

from characters import views

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
]
