"""Reply order (natural, list, pooled, manual) and mute, in the scheduling library (pure)."""

import random

from scheduling import SpeakerSelection, decide_speakers
from scheduling.selection.order import list_order, pool, pooled_order

from scheduling_fixtures import TEAM, context, emotion, intent

IDS = [a.id for a in TEAM]  # gentle, planner, joker, calm (display order)
SAD = emotion(primary_emotion="sad", intensity=0.5, needs_comfort=True, social_energy="low")
EVERYONE = intent("address_all", many=True)


def decide(order="natural", recent=(), muted=(), mentions=(), llm=None, user_intent=None, reply_limit=2):
    return decide_speakers(agents=TEAM, context=context(user_emotion=SAD), intent=user_intent or intent(),
                           mentions=list(mentions), llm_selection=llm, reply_limit=reply_limit, muted=set(muted),
                           reply_order=order, recent_speakers=list(recent))  # fmt: skip


def test_list_order_goes_round_after_the_newest_speaker_and_skips_the_muted():
    assert list_order(IDS, [], (), 1) == ["gentle"]
    assert list_order(IDS, ["gentle", "joker"], (), 2) == ["calm", "gentle"]
    assert list_order(IDS, ["planner"], {"joker"}, 2) == ["calm", "gentle"]
    assert list_order(IDS, ["stranger"], (), 1) == ["gentle"]  # a former member does not break the ring


def test_a_list_turn_is_decided_by_the_order_not_the_model():
    d = decide("list", recent=["gentle"], llm=SpeakerSelection(["joker"], "fun"))
    assert d.selected_agent_ids == ["planner"] and d.selected_by == {"planner": "order"}
    assert d.decided_by == "order" and "reply order list" in d.reason
    rounds = []
    recent: list[str] = []
    for _ in range(5):
        pick = decide("list", recent=recent).selected_agent_ids
        rounds += pick
        recent += pick
    assert rounds == ["gentle", "planner", "joker", "calm", "gentle"]


def test_pooled_everyone_once_before_anyone_twice_best_ranked_first():
    assert pool(IDS, ["gentle", "joker"], ()) == ["planner", "calm"]
    assert pool(IDS, ["gentle", "joker", "planner", "calm"], ()) == IDS  # a full round refills it
    assert pool(IDS, ["gentle", "planner", "calm"], {"joker"}) == IDS[:2] + IDS[3:]  # muted: not in the round
    assert pooled_order(IDS, ["gentle", "joker", "planner"], (), ["joker", "gentle", "calm", "planner"], 2) == ["calm", "joker"]
    rng = random.Random(7)
    recent: list[str] = []
    for _ in range(12):  # whatever the ranking, a round of 4 turns has 4 different speakers
        ranked = rng.sample(IDS, len(IDS))
        recent += pooled_order(IDS, recent, (), ranked, 1)
    assert all(sorted(recent[i:i + 4]) == sorted(IDS) for i in range(0, 12, 4))


def test_pooled_follows_the_scorer_inside_the_pool():
    sad = decide("pooled").selected_agent_ids  # the comforter is the scorer's first for a sad user
    assert sad == [decide().selected_agent_ids[0]]
    assert decide("pooled", recent=sad).selected_agent_ids != sad


def test_manual_answers_only_the_named():
    assert decide("manual").selected_agent_ids == [] and decide("manual").decided_by == "order"
    named = decide("manual", mentions=["joker"], user_intent=EVERYONE)
    assert named.selected_agent_ids == ["joker"] and named.selected_by == {"joker": "mention"}


def test_a_muted_member_is_never_chosen_unless_named():
    top = decide().selected_agent_ids[0]
    assert top not in decide(muted=[top]).selected_agent_ids
    for order in ("natural", "list", "pooled"):
        for recent in ([], ["gentle"], ["gentle", "planner", "joker"]):
            d = decide(order, recent=recent, muted=["joker", "calm"], user_intent=EVERYONE, reply_limit=4)
            assert not {"joker", "calm"} & set(d.selected_agent_ids), (order, recent, d.selected_agent_ids)
    llm = decide(muted=["joker"], llm=SpeakerSelection(["joker"], "fun"))
    assert "joker" not in llm.selected_agent_ids and llm.llm_problems and llm.decided_by == "fallback"
    named = decide(muted=["joker"], mentions=["joker"])
    assert named.selected_agent_ids == ["joker"] and "muted" in named.reason
    assert decide(muted=IDS).selected_agent_ids == []  # everyone muted, nobody named: nobody speaks
