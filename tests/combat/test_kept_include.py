"""``{% kept_include %}`` (combat.templatetags.kept): an include whose pushed output the
answer takes; it keeps only a push's rendering, and only of a template on its own."""

from __future__ import annotations

import pytest
from django.template import Context, Template, TemplateSyntaxError
from django.test import RequestFactory

from combat import render_cache, replies
from tests.factories import UserFactory

NAME = "combat/challenges/prompts.html"


@pytest.mark.parametrize("extra", ["with scene=None", "only"])
def test_it_takes_a_template_alone(extra):
    """A ``with`` or ``only`` would keep what the template does not render on its own."""
    with pytest.raises(TemplateSyntaxError):
        Template(f'{{% load kept %}}{{% kept_include "{NAME}" {extra} %}}')


@pytest.mark.django_db
def test_it_keeps_a_pushs_rendering_for_its_player():
    user = UserFactory()
    page = Template(f'{{% load kept %}}<p>{{% kept_include "{NAME}" %}}</p>')
    with render_cache.RenderCache().active():
        html = page.render(Context({"scene": None, "player": user, **replies.MARKED}))
        kept = replies.kept(("include", NAME, user.pk))
        assert kept is not None and html == f"<p>{kept}</p>"
        assert replies.kept(("include", NAME, user.pk + 1)) is None
        request = RequestFactory().get("/")
        assert replies.included(request, user.pk, NAME) == kept
