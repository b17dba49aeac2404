"""``{% kept_url "name" arg … [as var] %}``: ``{% url %}`` for the challenge partials, reversed
once per process, not on every render.

A challenge's region reverses the same few URLs (a card's act, mob and odds URLs, the scene's
start URL) for every audience on every change; ``reverse`` costs tens of microseconds, a good
part of a card's rendering. A URL is a function of its name, its arguments, the URLconf and
the script prefix: kept under exactly these, it is never another request's.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from django import template
from django.urls import get_script_prefix, get_urlconf, reverse

register = template.Library()

SIZE = 4096  # URLs (a challenge's three, a scene's few)


@lru_cache(maxsize=SIZE)
def _reverse(prefix: str, urlconf: Any, name: str, args: tuple[Any, ...]) -> str:
    return reverse(name, urlconf=urlconf, args=args)


@register.simple_tag
def kept_url(name: str, *args: Any) -> str:
    """The URL ``{% url name *args %}`` gives, as it gave it before in this process."""
    return _reverse(get_script_prefix(), get_urlconf(), name, args)
