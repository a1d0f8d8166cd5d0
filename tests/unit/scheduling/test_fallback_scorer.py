import msgspec

from scheduling import DEFAULT_WEIGHTS, FEATURE_NAMES, AgentCapabilities, AgentProfile, fallback_emotion, score_candidates
from scheduling.selection.capabilities import KEYWORD_BESIDE_TAGS, agent_capabilities

from scheduling_fixtures import CALM, GENTLE, JOKER, PLANNER, TEAM, agent_turns, context, emotion, tagged


def ranking(user_emotion, agents=TEAM, direct=None, messages=(), mentions=()):
    ctx = context(agents, direct, messages, user_emotion)
    return [c.agent_id for c in score_candidates(agents, ctx, list(mentions), DEFAULT_WEIGHTS)]


def test_features_have_the_exact_names_analytics_reads():
    scored = score_candidates(TEAM, context(), [], DEFAULT_WEIGHTS)
    assert all(tuple(c.features) == FEATURE_NAMES for c in scored)
    assert FEATURE_NAMES == ("relationship_score", "freshness_score", "recent_reply_count", "spoke_last_turn",
                             "comfort_match", "advice_match", "deescalation_match", "playful_match", "mentioned")


def test_sad_user_gets_the_gentle_agent_first():
    assert ranking(fallback_emotion("今天好难过，想哭"))[0] == "gentle"
    assert ranking(fallback_emotion("I'm so sad and lonely"))[0] == "gentle"


def test_user_asking_for_advice_gets_the_rational_agent_first():
    assert ranking(fallback_emotion("我该怎么办，帮我分析一下"))[0] == "planner"
    assert ranking(fallback_emotion("What should I do? I need advice"))[0] == "planner"


def test_angry_user_gets_the_calm_bounded_agent_first():
    assert ranking(fallback_emotion("气死我了，又吵架了"))[0] == "calm"
    assert ranking(fallback_emotion("I'm so angry, we had a fight"))[0] == "calm"


def test_playful_user_gets_the_lively_agent_first():
    assert ranking(fallback_emotion("哈哈哈笑死我了"))[0] == "joker"


def test_closer_relationship_breaks_an_otherwise_even_match():
    sad = fallback_emotion("好难过")
    twin = msgspec.structs.replace(GENTLE, id="twin", name="小柔", aliases=(), display_order=5)
    assert ranking(sad, [GENTLE, twin], direct={"twin": 80})[0] == "twin"


def test_recently_active_agent_is_down_weighted():
    sad = fallback_emotion("好难过")
    twin = msgspec.structs.replace(GENTLE, id="twin", name="小柔", aliases=(), display_order=5)
    assert ranking(sad, [GENTLE, twin], messages=agent_turns("gentle", "gentle"))[0] == "twin"
    ctx = context([GENTLE, twin], None, agent_turns("gentle", "gentle"), sad)
    chatty = next(c for c in score_candidates([GENTLE, twin], ctx, [], DEFAULT_WEIGHTS) if c.agent_id == "gentle")
    assert chatty.features["recent_reply_count"] == 2.0 and chatty.features["spoke_last_turn"] == 1.0


def test_equal_scores_break_by_display_order():
    first = AgentProfile(id="zz", name="Zed", display_order=0)
    second = AgentProfile(id="aa", name="Amy", display_order=1)
    scored = score_candidates([second, first], context([first, second]), [], DEFAULT_WEIGHTS)
    assert [c.agent_id for c in scored] == ["zz", "aa"] and scored[0].score == scored[1].score
    assert [c.rank for c in scored] == [1, 2]


def test_seed_weights_reproduce_the_seed_score_for_a_comfort_match():
    sad = emotion(primary_emotion="sad", needs_comfort=True)
    ctx = context([GENTLE], {"gentle": 30}, [], sad)
    [scored] = score_candidates([GENTLE], ctx, [], DEFAULT_WEIGHTS)
    assert scored.score == round(0.78 * 1.6 + 1.0 * 1.8 + 2.4, 9)


def test_structured_capabilities_override_persona_keywords():
    sad = emotion(primary_emotion="sad", needs_comfort=True)
    cold_gentle = tagged(GENTLE, comfort=0.0)
    warm_planner = tagged(PLANNER, comfort=1.0)
    assert ranking(sad, [cold_gentle, warm_planner])[0] == "planner"


def test_need_times_capability_gives_partial_matches():
    advice = emotion(needs_advice=True)
    half = tagged(PLANNER, analysis=0.5)
    [scored] = score_candidates([half], context([half], user_emotion=advice), [], DEFAULT_WEIGHTS)
    assert scored.features["advice_match"] == 0.5


def test_english_persona_keywords_count_as_capabilities():
    listener = AgentProfile(id="l", name="Lee", personality_prompt="A warm, empathetic listener")
    analyst = AgentProfile(id="a", name="Ada", personality_prompt="Rational and analytical, loves a good plan")
    assert ranking(emotion(needs_comfort=True), [analyst, listener])[0] == "l"
    assert ranking(emotion(needs_advice=True), [listener, analyst])[0] == "a"


def test_jokes_are_not_offered_to_a_user_who_needs_comfort():
    upset_but_playful = emotion(primary_emotion="playful", needs_comfort=True)
    ctx = context([JOKER], user_emotion=upset_but_playful)
    assert score_candidates([JOKER], ctx, [], DEFAULT_WEIGHTS)[0].features["playful_match"] == 0.0


def test_mentioned_feature_is_set_for_mentioned_agents():
    scored = score_candidates(TEAM, context(), ["calm"], DEFAULT_WEIGHTS)
    assert {c.agent_id: c.features["mentioned"] for c in scored} == {"gentle": 0, "planner": 0, "joker": 0, "calm": 1}
    assert scored[0].agent_id == CALM.id


def test_a_keyword_beside_tags_counts_less_than_a_member_tagged_for_it():
    """The Qwen group: the planner, tagged analysis 0.95, is "a calm analyst"; the mediator is
    tagged de-escalation 0.95. An angry user needs the mediator, not the word "calm"."""
    angry = emotion(primary_emotion="angry", needs_deescalation=True)
    analyst = AgentProfile(id="planner", name="Heng", headline="A calm analyst", display_order=0,
                           capabilities=AgentCapabilities(analysis=0.95))
    mediator = AgentProfile(id="mediator", name="Ning", headline="The peacemaker", display_order=1,
                            capabilities=AgentCapabilities(deescalation=0.95))
    assert ranking(angry, [analyst, mediator])[0] == "mediator"
    assert agent_capabilities(analyst)["deescalation"] == KEYWORD_BESIDE_TAGS  # the keyword still counts, at half
    assert agent_capabilities(AgentProfile(id="u", name="U", headline="A calm analyst"))["deescalation"] == 1.0
