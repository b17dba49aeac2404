"""What the scene tests of both kinds (challenges, rounds) share."""

from __future__ import annotations

import re
from types import ModuleType

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]*)"')


def without_tokens(html: str) -> str:
    """``html`` with each form's CSRF token emptied (every request's is its own)."""
    return TOKEN.sub('name="csrfmiddlewaretoken" value=""', html)


def renders_of(monkeypatch, views: ModuleType) -> list[str]:
    """The templates ``views`` renders itself from now on (none when its answers take the
    pushes')."""
    seen: list[str] = []
    real = views.render

    def counted(request, template, *args, **kwargs):
        seen.append(template)
        return real(request, template, *args, **kwargs)

    monkeypatch.setattr(views, "render", counted)
    return seen
