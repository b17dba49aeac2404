"""Combat rounds: URL routes (every one a POST from the tablet or a phone)."""

from django.urls import URLPattern, URLResolver, path

from combat.rounds import views

_ACTIONS = [
    ("start", views.round_start),
    ("initiative", views.round_initiative),
    ("roll-missing", views.round_roll_missing),
    ("begin", views.round_begin),
    ("declare", views.round_declare),
    ("skip", views.round_skip),
    ("resolve", views.round_resolve),
    ("abort", views.round_abort),
    ("committed", views.round_committed),
    ("remind", views.round_remind),
    ("out", views.round_out),
    ("pursue", views.round_pursue),
    ("effect", views.round_effect),
    ("pause", views.round_pause),
    ("book-keeping", views.round_book_keeping),
    ("next", views.round_next),
    ("end", views.round_end),
    ("bns-mediate", views.round_bns_mediate),
    ("bns-assess", views.round_bns_assess),
    ("bns-act", views.round_bns_act),
    ("bns-finish", views.round_bns_finish),
    ("bns-delay", views.round_bns_delay),
    ("bns-resume", views.round_bns_resume),
    ("bns-escape", views.round_bns_escape),
    ("bns-intent", views.round_bns_intent),
    ("bns-escape-settle", views.round_bns_escape_settle),
    ("bns-celerity", views.round_bns_celerity),
    ("bns-end-round", views.round_bns_end_round),
    ("met-celerity", views.round_met_celerity),
    ("met-take", views.round_met_take),
    ("met-mob", views.round_met_mob),
    ("met-next", views.round_met_next),
]

urlpatterns: list[URLPattern | URLResolver] = [
    path(f"scenes/<int:pk>/combat/{slug}/", view, name=f"round_{slug.replace('-', '_')}")
    for slug, view in _ACTIONS
]
