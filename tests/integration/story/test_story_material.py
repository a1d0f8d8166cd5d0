"""A long persona does not crowd out the turn: over HTTP, every Story model call sees the current
input and the last turns, and the persona's shortening is recorded in the reply's metadata.story."""

from __future__ import annotations

from story.tools.material import ACTION_BUDGET, PLAN_BUDGET
from tests.integration.story.conftest import STORY_ON, requests, say
from tests.integration.turns.fakes import select as choose

FIELD = ("Lia keeps the ledger of the north gate, knows every courier by name and never tells the inner "
         "city's secrets. ") * 80
FIELD = FIELD[:8000]  # the per-field limit (max_prompt_chars); five fields: a 40,000-character persona
U1 = "我把铜钥匙递给莉娅，但先不进城。"
U2 = "不用去核对了，先把钥匙还我。"
A1 = "莉娅接过钥匙，指尖停在柄端的旧徽记上。"
A2 = "莉娅停下脚步，把钥匙递回给你。"


async def test_a_40000_character_persona_leaves_the_input_and_last_turns_to_every_story_model(story_api, world):
    lia = await story_api.agent("莉娅", headline="城门守卫", description=FIELD, personalityPrompt=FIELD, tonePrompt=FIELD,
                                defaultPrompt=FIELD, guardrailsPrompt=FIELD, storyBackground="你们站在城门口。")  # fmt: skip
    heng = await story_api.agent("周衡", headline="理性的规划师")
    conv = await story_api.group(lia["id"], heng["id"], settings={"replyLimit": 1, "story": STORY_ON,
                                                                  "selection": {"mode": "llm"}})  # fmt: skip
    world.handlers["select"] = choose(lia["id"])
    world.handlers["actor"] = [A1, A2]

    t1 = await say(story_api, conv["id"], U1)
    story = t1["agentMessages"][0]["metadata"]["story"]
    assert story["outcome"] == "waiting_for_acceptance", story
    for purpose in ("story_init.world", "story.prepare", "story.plan_cycle"):
        prompt = requests(world, purpose)[0].messages[-1].content
        assert f"本轮输入：{U1}" in prompt, purpose  # the material in the chat's language
        assert "角色：莉娅\n设定：\n简介：城门守卫\n描述：Lia keeps" in prompt and "Headline" not in prompt, purpose
    assert len(requests(world, "story.prepare")[0].messages[-1].content) < ACTION_BUDGET + 1500
    shortened = {d["data"]["material"]: d["data"] for d in story["diagnostics"] if d["code"] == "material_persona_shortened"}
    assert set(shortened) == {"init", "action", "plan"}, story["diagnostics"]
    assert shortened["action"]["of"] >= 40_000 and shortened["action"]["budget"] == ACTION_BUDGET
    assert 0 < shortened["action"]["kept"] < shortened["plan"]["kept"] < PLAN_BUDGET
    assert shortened["plan"]["part"] == "definition" and shortened["plan"]["budget"] == PLAN_BUDGET

    t2 = await say(story_api, conv["id"], U2)
    story2 = t2["agentMessages"][0]["metadata"]["story"]
    assert story2["outcome"] == "waiting_for_acceptance", story2
    advance = requests(world, "story.advance")[0].messages[-1].content  # the adoption of A1
    assert U1 in advance and A1 in advance and U2 not in advance
    assert f"本轮输入：{U2}" in requests(world, "story.prepare")[1].messages[-1].content
    assert A1 in requests(world, "story.prepare")[1].messages[-1].content
    assert [d["data"]["material"] for d in story2["diagnostics"] if d["code"] == "material_persona_shortened"] == \
        ["action", "plan"]


async def test_a_reply_that_recites_the_stage_is_regenerated_and_the_one_in_its_own_words_saved(story_api, world):
    """Qwen2.5-0.5B saved a clue of the stage whole as a reply; the stage's texts are prompt wording."""
    from tests.integration.story.conftest import INIT, story_group

    summary = "莉娅正在核验用户递来的那把铜钥匙，城门外排起了长队"
    world.handlers["story_init.world"] = dict(INIT, foreground=dict(INIT["foreground"], summary=summary))
    world.handlers["actor"] = ["你看，莉娅正在核验用户递来的那把铜钥匙。", A1]
    conv, _ = await story_group(story_api, world)
    t1 = await say(story_api, conv["id"], U1)
    (reply,) = t1["agentMessages"]
    assert reply["content"] == A1 and reply["metadata"]["story"]["outcome"] == "waiting_for_acceptance"
    quality = t1["orchestration"]["quality"][reply["agentId"]]
    assert quality["attempts"] == 2 and [p.split(":")[0] for p in quality["regeneratedFor"]] == ["prompt_leak"], quality
    assert summary in requests(world, "actor")[0].messages[0].content
