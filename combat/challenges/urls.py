"""Challenges: URL routes."""

from django.urls import URLPattern, URLResolver, path

from combat.challenges import views

urlpatterns: list[URLPattern | URLResolver] = [
    path("scenes/<int:pk>/challenges/", views.challenge_start, name="challenge_start"),
    path("scenes/<int:pk>/challenges/region/", views.challenge_region, name="challenge_region"),
    path("scenes/<int:pk>/challenges/earlier/", views.challenge_earlier, name="challenge_earlier"),
    path("scenes/<int:pk>/challenges/<int:cid>/act/", views.challenge_act, name="challenge_act"),
    path("scenes/<int:pk>/challenges/<int:cid>/mob/", views.challenge_mob, name="challenge_mob"),
    path(
        "scenes/<int:pk>/challenges/<int:cid>/leave/", views.challenge_leave, name="challenge_leave"
    ),
    path("scenes/<int:pk>/regain/", views.challenge_regain, name="challenge_regain"),
    path("scenes/<int:pk>/challenges/<int:cid>/st/", views.challenge_st, name="challenge_st"),
    path("scenes/<int:pk>/challenges/<int:cid>/odds/", views.challenge_odds, name="challenge_odds"),
]
