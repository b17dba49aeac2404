"""C14: attacks across categories (firearms) and what a ranged target may answer with."""

from __future__ import annotations

from combat.rules.errors import RuleError
from combat.rules.terms import Category

SHOOTING_CATEGORIES = {Category.PHYSICAL, Category.MENTAL}
RANGED_RETEST_ABILITY = "dodge"


def shooting_category(chosen: Category | str) -> Category:
    """C14: a shooter bids mental or physical traits (not both); the challenge is announced
    in the category the defender answers with."""
    category = Category(chosen)
    if category not in SHOOTING_CATEGORIES:
        raise RuleError("C14", "A shooter uses mental or physical traits.")
    return category


def may_counterattack(*, ranged_attack: bool, defender_has_ranged_weapon: bool) -> bool:
    """C14: against a ranged attack an unarmed defender may not counterattack."""
    return not ranged_attack or defender_has_ranged_weapon


def ranged_retest_allowed(ability: str, *, ranged_attack: bool) -> bool:
    """C14: against a ranged attack Dodge is usually the only ability that retests."""
    return not ranged_attack or ability.lower() == RANGED_RETEST_ABILITY
