"""Over HTTP: an answer that speaks for the character is repaired, and the reason is recorded."""

from __future__ import annotations

from tests.integration.conftest import ALICE, Api
from tests.integration.suggestions.conftest import ZH_OPTIONS, AutoReplyScript, suggest_url, suggestion_rows
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import select


async def test_options_that_narrate_the_character_or_announce_success_are_repaired(sapi: Api, world,
                                                                                  script: AutoReplyScript, engine) -> None:
    conv, (gentle, _, _) = await make_group(sapi)
    world.handlers["select"] = select(gentle["id"])
    anchor = (await post_turn(sapi, conv["id"], "我今天好难过")).json()["agentMessages"][0]["id"]
    script.answers = [{"options": ["莉娅笑了，抱住了我。", "我成功说服了她。", "谢谢你陪着我。"]}, ZH_OPTIONS[0], ZH_OPTIONS[1]]
    resp = await sapi.client.post(suggest_url(conv["id"], anchor), headers=ALICE)
    assert resp.status_code == 201, resp.text
    assert resp.json()["options"] == ["谢谢你陪着我。", *ZH_OPTIONS[:2]]  # the good option kept, two lines added
    row = (await suggestion_rows(engine, conv["id"]))[-1]
    assert row.attempts == 2
    first = " ".join(row.problems[0])
    assert "another character reacts" in first and "succeeded" in first
    assert "不要描写角色的反应" in script.prompt(0)  # the rule is in the prompt too (a zh chat: in Chinese)
