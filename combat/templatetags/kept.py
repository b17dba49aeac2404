"""``{% kept_include %}``: an include whose output a push keeps for the tap's answer.

A player's own part includes regions a tap answers with on their own (the challenge prompts:
``combat.challenges.views``). Rendered by a push (the CSRF mark in the token's place,
:data:`combat.replies.MARKED`), the include's output is kept whole as it is rendered
(:func:`combat.replies.keep_include`), so the answer takes it (:func:`combat.replies.included`)
instead of rendering the region again or cutting it out of the part. Anywhere else it is
``{% include %}``.
"""

from __future__ import annotations

from django import template
from django.template.base import Parser, Token
from django.template.loader_tags import IncludeNode, do_include

from combat import replies

register = template.Library()


class KeptIncludeNode(IncludeNode):
    """An ``{% include %}`` of a template name whose pushed output is kept for its player."""

    def render(self, context: template.Context) -> str:
        html = super().render(context)
        name, player = self.template.resolve(context), context.get("player")
        if isinstance(name, str) and player is not None:
            replies.keep_include(name, player.pk, html, context.get("csrf_token"))
        return html


@register.tag
def kept_include(parser: Parser, token: Token) -> KeptIncludeNode:
    """``{% kept_include "template.html" %}``: with the page's own context (no ``with``, no
    ``only``): what it keeps is what the template renders on its own for the same player."""
    node = do_include(parser, token)
    if node.extra_context or node.isolated_context:
        raise template.TemplateSyntaxError(f"{token.contents.split()[0]} takes a template alone")
    return KeptIncludeNode(node.template)
