"""met_bns scenarios driven through the services with every role (B4-B11)."""

from __future__ import annotations

import random

import pytest

from combat.models import Combat, Scene
from combat.rounds import bns
from combat.rounds.bns_reads import engine_of
from combat.rounds.errors import RoundError


def _state(combat):
    return engine_of(Combat.objects.get(pk=combat.pk))


def _name(p, who):
    return next(n for n, x in p.items() if str(x.pk) == who)


def _relent(scene, attacker):
    """The target of the attack's challenge relents (C2): the next attack may open."""
    from combat.challenges.answering import challenge_answer
    from combat.models import Challenge

    ch = Challenge.objects.get(attacker=attacker, status__in=["answer", "live"])
    player = ch.defender.character.player
    challenge_answer(scene=scene, challenge=ch, by=player, side="defender", answer="relent")


def test_a_turn_with_a_surprise_action_an_everyman_and_a_celerity_round(docks):
    st, users, p, scene = docks
    with pytest.raises(RoundError, match="Only the storyteller"):
        bns.bns_start(scene=scene, by=users["Ana"], participants=list(p.values()))
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(1))
    with pytest.raises(RoundError, match="Only the storyteller"):
        bns.bns_mediate(combat=combat, by=users["Bo"], agreed=False)
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_celerity(combat=combat, by=users["Ana"], participant=p["Ana"], rounds=1)
    with pytest.raises(RoundError, match="B5"):
        bns.bns_celerity(combat=combat, by=users["Bo"], participant=p["Bo"], rounds=1)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()), started_by=p["Bo"])
    # B7: Bo's surprise action first, outside initiative.
    with pytest.raises(RoundError, match="B7"):
        bns.bns_act(
            combat=combat, by=users["Ana"], participant=p["Ana"], standard="attack", target=p["Bo"]
        )
    bns.bns_act(
        combat=combat, by=users["Bo"], participant=p["Bo"], standard="attack", target=p["Cy"]
    )
    _relent(scene, p["Bo"])
    # B4: Ana 8, then Bo 7 and Cy 6 (ties by Mental, Physical, Social).
    state = _state(combat)
    assert [_name(p, w) for w in state.order] == ["Ana", "Bo", "Cy"]
    with pytest.raises(RoundError, match="not your character"):
        bns.bns_act(combat=combat, by=users["Bo"], participant=p["Ana"], simple="move")
    bns.bns_act(
        combat=combat,
        by=users["Ana"],
        participant=p["Ana"],
        standard="attack",
        simple="move",
        target=p["Cy"],
    )
    _relent(scene, p["Ana"])
    bns.bns_act(
        combat=combat, by=users["Bo"], participant=p["Bo"], simple="draw"
    )  # standard used by B7
    bns.bns_finish(combat=combat, by=users["Cy"], participant=p["Cy"])  # Cy forgoes both: +5 (B8)
    bns.bns_end_round(combat=combat, by=st)
    state = _state(combat)
    assert state.round_label == "celerity 1" and [_name(p, w) for w in state.order] == ["Ana"]
    with pytest.raises(RoundError, match="B5"):
        bns.bns_act(
            combat=combat,
            by=users["Ana"],
            participant=p["Ana"],
            standard="mental_challenge",
            target=p["Cy"],
        )
    bns.bns_act(
        combat=combat, by=users["Ana"], participant=p["Ana"], standard="attack", target=p["Bo"]
    )
    before = Scene.objects.get(pk=scene.pk).game_time
    bns.bns_end_round(combat=combat, by=st)
    state = _state(combat)
    assert state.turn == 2 and state.round_label == "everyman"
    assert Scene.objects.get(pk=scene.pk).game_time == before + 3
    # Cy forwent both actions: +5 this round, so first (B8).
    assert _name(p, state.order[0]) == "Cy"
    assert Combat.objects.get(pk=combat.pk).haste[str(p["Ana"].pk)] == 1  # carried over


def test_a_fair_escape_waits_for_intents_and_succeeds_at_the_end_of_the_round(docks):
    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(2))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()))
    bns.bns_escape_announce(combat=combat, by=users["Ana"], participant=p["Ana"])
    with pytest.raises(RoundError, match="B9"):
        bns.bns_escape_intent(combat=combat, by=users["Ana"], participant=p["Ana"])
    bns.bns_escape_intent(combat=combat, by=users["Cy"], participant=p["Cy"])
    with pytest.raises(RoundError, match="Only the storyteller"):
        bns.bns_escape_settle(combat=combat, by=users["Cy"])
    bns.bns_escape_settle(combat=combat, by=st)
    assert _state(combat).escapes == {str(p["Ana"].pk): "on_hold"}
    bns.bns_finish(combat=combat, by=users["Bo"], participant=p["Bo"])
    bns.bns_act(combat=combat, by=users["Cy"], participant=p["Cy"], simple="move")
    bns.bns_end_round(combat=combat, by=st)
    state = _state(combat)
    assert state.fighter(str(p["Ana"].pk)).out


def test_an_attack_before_the_round_ends_breaks_the_escape(docks):
    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(2))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()))
    bns.bns_escape_announce(combat=combat, by=users["Ana"], participant=p["Ana"])
    bns.bns_escape_intent(combat=combat, by=users["Bo"], participant=p["Bo"])
    bns.bns_escape_settle(combat=combat, by=st)
    bns.bns_act(
        combat=combat, by=users["Bo"], participant=p["Bo"], standard="attack", target=p["Ana"]
    )
    assert _state(combat).escapes == {str(p["Ana"].pk): "failed"}


def test_prone_and_delay(docks):
    """B10: a simple action to drop; B8: a delayer steps back in later."""
    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(2))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()))
    bns.bns_act(combat=combat, by=users["Ana"], participant=p["Ana"], simple="drop_prone")
    with pytest.raises(RoundError, match="B10"):
        bns.bns_act(combat=combat, by=users["Ana"], participant=p["Ana"], standard="move")
    bns.bns_delay(combat=combat, by=users["Bo"], participant=p["Bo"])
    bns.bns_act(combat=combat, by=users["Cy"], participant=p["Cy"], simple="move")
    bns.bns_resume(combat=combat, by=users["Bo"], participant=p["Bo"])
    bns.bns_act(
        combat=combat, by=users["Bo"], participant=p["Bo"], standard="attack", target=p["Ana"]
    )
    assert _state(combat).fighter(str(p["Ana"].pk)).prone


def test_an_attack_on_its_initiative_opens_a_bns_challenge_for_both_phones(docks):
    """B1-B3 through B6: the attack opens a met_bns challenge (attack, physical) tested with
    the pool the attacker named, for the target to answer as any challenge; an attack while
    the attacker's last challenge is still open is refused and changes nothing; the storyteller
    may act for a player's character in the round, and so opens its challenge."""
    from characters.models import Ability
    from combat.models import Challenge, SceneLogEntry

    st, users, p, scene = docks
    Ability.objects.create(character=p["Ana"].character, name="Brawl", rating=3)
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(1))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_celerity(combat=combat, by=users["Ana"], participant=p["Ana"], rounds=1)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()), started_by=None)
    state = Combat.objects.get(pk=combat.pk).state
    with pytest.raises(RoundError, match=r"Ana has no attribute Dexterity on the sheet \(B1\)"):
        bns.bns_act(
            combat=combat,
            by=users["Ana"],
            participant=p["Ana"],
            standard="attack",
            target=p["Cy"],
            pool={"attribute": "Dexterity"},
        )
    assert Combat.objects.get(pk=combat.pk).state == state  # her turn is not spent
    assert not Challenge.objects.exists()
    bns.bns_act(
        combat=combat,
        by=users["Ana"],
        participant=p["Ana"],
        standard="attack",
        target=p["Cy"],
        pool={"attribute": "Physical", "skill": "Brawl", "weapon": None},
    )
    ch = Challenge.objects.get(attacker=p["Ana"])
    assert (ch.defender_id, ch.category, ch.status) == (p["Cy"].pk, "physical", "answer")
    assert ch.options["attack"] is True
    assert ch.options["attacker"]["attribute"] == "Physical"
    assert ch.options["attacker"]["skill"] == "Brawl"
    assert SceneLogEntry.objects.filter(
        scene=scene, text__contains=f"Ana: Attack on Cy — challenge #{ch.pk} opened"
    ).exists()
    bns.bns_act(combat=combat, by=users["Bo"], participant=p["Bo"], simple="move")
    bns.bns_finish(combat=combat, by=users["Bo"], participant=p["Bo"])
    bns.bns_finish(combat=combat, by=users["Cy"], participant=p["Cy"])
    bns.bns_end_round(combat=combat, by=st)
    assert _state(combat).round_label == "celerity 1"

    before = (Scene.objects.get(pk=scene.pk).seq, Combat.objects.get(pk=combat.pk).state)
    with pytest.raises(RoundError, match="already in an open challenge"):
        bns.bns_act(combat=combat, by=st, participant=p["Ana"], standard="attack", target=p["Bo"])
    assert (Scene.objects.get(pk=scene.pk).seq, Combat.objects.get(pk=combat.pk).state) == before
    assert Challenge.objects.filter(attacker=p["Ana"]).count() == 1

    _relent(scene, p["Ana"])
    bns.bns_act(combat=combat, by=st, participant=p["Ana"], standard="attack", target=p["Bo"])
    second = Challenge.objects.filter(attacker=p["Ana"]).latest("pk")
    assert (second.defender_id, second.created_by_id, second.status) == (
        p["Bo"].pk,
        st.pk,
        "answer",
    )


@pytest.mark.parametrize(("ranged_far", "pool"), [(False, 4), (True, 8)])
def test_a_prone_defender_in_the_round_takes_b10_into_the_challenge(docks, ranged_far, pool):
    """B10: a character the round knows is prone defends at -2 against a physical attack
    within three steps, +2 against a physical ranged one from further: the challenge the
    round opens takes it from the round, whatever the answer ticks."""
    from combat.challenges.answering import challenge_answer
    from combat.challenges.reads import engine_of
    from combat.models import Challenge

    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(1))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()))
    bns.bns_finish(combat=combat, by=users["Ana"], participant=p["Ana"])
    bns.bns_finish(combat=combat, by=users["Bo"], participant=p["Bo"])
    bns.bns_act(combat=combat, by=users["Cy"], participant=p["Cy"], simple="drop_prone")
    bns.bns_end_round(combat=combat, by=st)
    assert _state(combat).fighter(str(p["Cy"].pk)).prone
    bns.bns_act(
        combat=combat,
        by=users["Ana"],
        participant=p["Ana"],
        standard="attack",
        target=p["Cy"],
        pool={"attribute": "Physical"},
        ranged_far=ranged_far,
    )
    ch = Challenge.objects.get(attacker=p["Ana"], defender=p["Cy"])
    assert ch.options["round_prone"] is True
    ch = challenge_answer(
        scene=scene,
        challenge=ch,
        by=users["Cy"],
        side="defender",
        answer="bid",
        attribute="Physical",
    )
    assert engine_of(Challenge.objects.get(pk=ch.pk)).defender.pool == pool  # Physical 6 ∓ 2


def test_a_standing_defender_in_the_round_is_not_prone_in_the_challenge(docks):
    """B10: the round says the defender stands: a ticked "I am prone" does not count."""
    from combat.challenges.answering import challenge_answer
    from combat.challenges.reads import engine_of
    from combat.models import Challenge

    st, users, p, scene = docks
    combat = bns.bns_start(scene=scene, by=st, participants=list(p.values()), rng=random.Random(1))
    bns.bns_mediate(combat=combat, by=st, agreed=False)
    bns.bns_assess(combat=combat, by=st, participants=list(p.values()))
    bns.bns_act(
        combat=combat,
        by=users["Ana"],
        participant=p["Ana"],
        standard="attack",
        target=p["Cy"],
        pool={"attribute": "Physical"},
    )
    ch = Challenge.objects.get(attacker=p["Ana"], defender=p["Cy"])
    ch = challenge_answer(
        scene=scene,
        challenge=ch,
        by=users["Cy"],
        side="defender",
        answer="bid",
        attribute="Physical",
        prone=True,
    )
    assert engine_of(Challenge.objects.get(pk=ch.pk)).defender.pool == 6
