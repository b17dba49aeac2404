"""Scene pages: the storyteller's overview and tablet, joining by code, the player's phone."""

from django.urls import path

from combat import views

urlpatterns = [
    path("scenes/", views.scene_overview, name="scene_overview"),
    path("scenes/open/", views.scene_open, name="scene_open"),
    path("scenes/<int:pk>/", views.scene_tablet, name="scene_tablet"),
    path("scenes/<int:pk>/phone/", views.scene_phone, name="scene_phone"),
    path("scenes/<int:pk>/clock/", views.scene_clock, name="scene_clock"),
    path("scenes/<int:pk>/situation/", views.scene_situation, name="scene_situation"),
    path("scenes/<int:pk>/ruleset/", views.scene_ruleset, name="scene_ruleset"),
    path("scenes/<int:pk>/npcs/", views.scene_npcs, name="scene_npcs"),
    path("scenes/<int:pk>/close/", views.scene_close, name="scene_close"),
    path(
        "scenes/<int:pk>/participants/<int:participant_pk>/remove/",
        views.scene_remove,
        name="scene_remove",
    ),
    path("scenes/<int:pk>/log.json", views.scene_log_json, name="scene_log_json"),
    path("scenes/<int:pk>/log.txt", views.scene_log_txt, name="scene_log_txt"),
    path("join/", views.scene_join, name="scene_join"),
    path("join/<str:code>/", views.scene_join, name="scene_join_code"),
]
