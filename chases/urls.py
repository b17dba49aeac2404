"""Chases: URL routes (every one a POST from the tablet or a phone)."""

from django.urls import URLPattern, URLResolver, path

from chases import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("scenes/<int:pk>/chase/start/", views.chase_start, name="chase_start"),
    path("chases/<int:pk>/round/", views.chase_round, name="chase_round"),
    path("chases/<int:pk>/maneuver/", views.chase_maneuver, name="chase_maneuver"),
    path("chases/<int:pk>/obstacle/", views.chase_obstacle, name="chase_obstacle"),
    path(
        "chases/<int:pk>/obstacle/choice/",
        views.chase_obstacle_choice,
        name="chase_obstacle_choice",
    ),
    path("chases/<int:pk>/obstacle/roll/", views.chase_obstacle_roll, name="chase_obstacle_roll"),
    path("chases/<int:pk>/course/", views.chase_course, name="chase_course"),
    path("chases/<int:pk>/attack/", views.chase_attack, name="chase_attack"),
    path("chases/<int:pk>/call-off/", views.chase_call_off, name="chase_call_off"),
]
