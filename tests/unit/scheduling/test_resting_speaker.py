"""Auto mode's rule in the scheduling library: who spoke last is not chosen again at once, unless
nobody else may speak (pure)."""

from scheduling import decide_speakers

from scheduling_fixtures import TEAM, context, emotion, intent

IDS = [a.id for a in TEAM]
SAD = emotion(primary_emotion="sad", intensity=0.5, needs_comfort=True, social_energy="low")


def decide(order="natural", resting=(), muted=(), recent=()):
    return decide_speakers(agents=TEAM, context=context(user_emotion=SAD), intent=intent(), mentions=[],
                           reply_limit=1, muted=set(muted), reply_order=order, recent_speakers=list(recent),
                           resting=resting)  # fmt: skip


def test_the_last_speaker_rests_in_every_reply_order():
    top = decide().selected_agent_ids[0]
    for order in ("natural", "list", "pooled"):
        d = decide(order, resting=[top], recent=[top])
        assert d.selected_agent_ids and top not in d.selected_agent_ids, (order, d.selected_agent_ids)
        assert "spoke last" in d.reason


def test_a_member_alone_speaks_again():
    alone = IDS[0]
    others = IDS[1:]
    d = decide(resting=[alone], muted=others)
    assert d.selected_agent_ids == [alone]
    assert "spoke last" not in d.reason


def test_resting_never_brings_back_a_muted_member():
    d = decide(resting=[IDS[0]], muted=IDS[1:3])
    assert d.selected_agent_ids == [IDS[3]]
