"""W8: the loser picks the extra trait it crosses off, on its own phone (or the storyteller
for it); C5: blood for physical traits from the phone, through the ledger."""

from __future__ import annotations

import pytest
from django.urls import reverse

from characters.models import LedgerEntry
from combat.challenges.reads import engine_of, step_token
from combat.challenges.refusals import ChallengeError
from combat.rules.terms import Side
from tests.conftest import client_for
from tests.factories import TraitFactory

pytestmark = pytest.mark.django_db


def _lost_to_a_named_negative(t):
    """Janet names Cody's Arrogant (W8: one more of Cody's traits at risk) and wins."""
    TraitFactory(
        character=t.d.character, category="social", name="Arrogant", count=1, negative=True
    )
    ch = t.start(category="social", bid="Charismatic")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Impressive")
    ch = t.do("name_negative", ch, t.a_user, side="attacker", trait="Arrogant")
    ch = t.throw(ch, "rock", "scissors")
    return t.do("accept", ch, t.d_user, side="defender")


def test_w8_the_loser_picks_the_trait_on_its_phone_and_the_ledger_lands_then(werewolf):
    t = werewolf
    ch = _lost_to_a_named_negative(t)
    assert ch.status == "over" and ch.winner == "attacker"
    assert ch.options["choose"] == ["defender"]
    assert "Cody loses Impressive, a trait of their choice (W8)" in ch.outcome
    said = [h["text"] for h in ch.history]
    assert said[-1] == "Cody chooses a social trait to cross off (W8)"
    assert said[-2].startswith("Janet wins")
    social = t.now(t.d)["traits"]["social"]
    assert social == {"Impressive": 3, "Commanding": 3, "Dignified": 3}  # only the bid so far
    assert "Cody to choose a trait (W8)" in ch.timer_label
    cody = t.phone(t.d_user)
    assert "Cross it off" in cody and "Dignified (3)" in cody
    janet = t.phone(t.a_user)
    assert "Waiting on Cody to choose which trait to cross off (W8)" in janet
    assert "Cross it off" not in janet
    with pytest.raises(ChallengeError, match="You do not play"):  # not for the other side
        t.do("choose_trait", ch, t.a_user, side="defender", trait="Dignified")
    with pytest.raises(ChallengeError, match=r"no current Wise .*\(W8\)"):
        t.do("choose_trait", ch, t.d_user, side="defender", trait="Wise")
    assert t.now(t.d)["traits"]["social"]["Dignified"] == 3  # refused: nothing changed
    url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    post = {"action": "choose", "side": "defender", "trait": "Dignified", "key": "w8-choice-01"}
    phone = client_for(t.d_user)
    assert phone.post(url, {**post, "token": step_token(t.ch(ch))}).status_code == 200
    assert phone.post(url, {**post, "token": "a-stale-token"}).status_code == 200  # replay
    assert t.now(t.d)["traits"]["social"]["Dignified"] == 2  # counted once
    ch = t.ch(ch)
    assert "choose" not in ch.options and ch.deadline is None
    assert ch.history[-1]["text"] == "Cody crosses off Dignified (W8)"
    assert "Waiting on Cody" not in t.phone(t.a_user)
    entry = LedgerEntry.objects.get(source=ch.source, subject="Dignified")
    assert entry.kind == "trait_lost" and entry.category == "social"


def test_w8_the_storyteller_chooses_for_an_absent_player_and_a_void_gives_it_back(werewolf):
    t = werewolf
    ch = _lost_to_a_named_negative(t)
    board = client_for(t.st).get(reverse("scene_tablet", args=[t.scene.pk])).content.decode()
    assert "Choose for Cody if they are away (W8)" in board
    assert "Time is up (Cody to choose a trait (W8)): your call — choose for them" in board
    ch = t.do("choose_trait", ch, t.st, side="defender", trait="Commanding")
    assert "(chosen by the storyteller)" in ch.history[-1]["text"]
    assert t.now(t.d)["traits"]["social"]["Commanding"] == 2
    with pytest.raises(ChallengeError, match="W8"):  # nothing more waits
        t.do("choose_trait", ch, t.d_user, side="defender", trait="Dignified")
    t.do("st", ch, t.st, action="void", text="wrong target")
    assert t.now(t.d)["traits"]["social"] == {"Impressive": 4, "Commanding": 3, "Dignified": 3}


def test_w8_a_wrong_guess_puts_one_of_the_guessers_own_traits_at_risk(werewolf):
    t = werewolf
    ch = t.start(category="social", bid="Charismatic")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Impressive")
    ch = t.do("name_negative", ch, t.a_user, side="attacker", trait="Cowardly")
    ch = t.throw(ch, "rock", "paper")  # Cody wins
    ch = t.do("accept", ch, t.a_user, side="attacker")
    assert ch.options["choose"] == ["attacker"]
    assert "Cross it off" in t.phone(t.a_user)
    t.do("choose_trait", ch, t.a_user, side="attacker", trait="Persuasive")
    assert t.now(t.a)["traits"]["social"] == {
        "Charismatic": 2,
        "Eloquent": 3,
        "Persuasive": 2,
    }


def test_c5_blood_for_physical_traits_from_the_phone(classic):
    t = classic
    ch = t.start(category="physical", bid="Strong")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Tough")
    before = engine_of(t.ch(ch)).total(Side.ATTACKER)
    marcus = t.phone(t.a_user)
    assert "Blood for physical traits (C5: 0 of 1 this challenge, 12 blood left)" in marcus
    url = reverse("challenge_act", args=[t.scene.pk, ch.pk])
    post = {"action": "blood", "side": "attacker", "amount": 1, "key": "blood-tap-01"}
    r = client_for(t.a_user).post(url, {**post, "token": step_token(t.ch(ch))})
    assert r.status_code == 200, r.content.decode()
    ch = t.ch(ch)
    assert engine_of(ch).total(Side.ATTACKER) == before + 1
    assert t.now(t.a)["blood"] == 11
    assert "+1 blood trait (C5)" in t.phone(t.d_user)  # announced at the table
    # Marcus's generation lets him spend 1 a turn: a second one is refused, changing nothing
    with pytest.raises(ChallengeError, match=r"spend 1 blood a turn.*\(C5\)"):
        t.do("blood", ch, t.a_user, side="attacker", amount=1)
    assert t.now(t.a)["blood"] == 11
    ch = t.throw(ch, "rock", "scissors")
    with pytest.raises(ChallengeError, match=r"before the test.*\(C5\)"):
        t.do("blood", ch, t.d_user, side="defender", amount=1)
    assert t.now(t.d)["blood"] == 13
    t.do("st", ch, t.st, action="void", text="replayed")
    assert t.now(t.a)["blood"] == 12  # the void gives the blood back


def test_c5_blood_buys_physical_traits_only(classic):
    t = classic
    ch = t.start(category="social", bid="Intimidating")
    ch = t.do("answer", ch, t.d_user, side="defender", answer="bid", bid="Charismatic")
    assert "Spend blood" not in t.phone(t.a_user)
    with pytest.raises(ChallengeError, match=r"physical traits only.*\(C5\)"):
        t.do("blood", ch, t.a_user, side="attacker", amount=1)
    assert t.now(t.a)["blood"] == 12


def test_c5_blood_traits_last_until_five_game_minutes_after_the_conflicts_last_challenge(
    classic,
):
    from combat import services as scenes

    t = classic

    def fight(bid):
        ch = t.start(category="physical", bid="Brawny")
        return t.do("answer", ch, t.d_user, side="defender", answer="bid", bid=bid)

    def marcus_wins(ch):
        ch = t.throw(ch, "rock", "scissors")
        return t.do("accept", ch, t.d_user, side="defender")

    first = fight("Tough")
    plain = engine_of(t.ch(first)).total(Side.ATTACKER)
    first = t.do("blood", first, t.a_user, side="attacker", amount=1)
    marcus_wins(first)
    scenes.scene_advance_clock(scene=t.refresh().scene, by=t.st, seconds=240)
    second = fight("Wiry")  # four game minutes later: the blood trait still lasts, nothing spent
    assert engine_of(t.ch(second)).total(Side.ATTACKER) == plain + 1
    assert t.now(t.a)["blood"] == 11
    assert "+1 blood trait (C5)" in t.phone(t.d_user)
    assert "1 still lasting" in t.phone(t.a_user)
    marcus_wins(second)  # the conflict's last challenge moves the end on
    scenes.scene_advance_clock(scene=t.refresh().scene, by=t.st, seconds=240)
    third = fight("Stalwart")
    assert engine_of(t.ch(third)).total(Side.ATTACKER) == plain + 1
    marcus_wins(third)
    scenes.scene_advance_clock(scene=t.refresh().scene, by=t.st, seconds=360)
    fourth = fight("Wiry")  # six game minutes after the last: gone
    assert engine_of(t.ch(fourth)).total(Side.ATTACKER) == plain
