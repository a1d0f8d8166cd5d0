"""Story time and tokens land in turn_stage_metrics (stage ``story``) for the latency queries."""

from __future__ import annotations

from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import TurnStageMetric

from tests.integration.story.conftest import say, story_group


async def test_story_stage_is_recorded_in_turn_metrics(story_api, world, engine) -> None:
    conv, (lia, _, _) = await story_group(story_api, world)
    body = await say(story_api, conv["id"], "我把铜钥匙递给莉娅")
    async with session_factory(engine)() as s:
        rows = list(await s.scalars(select(TurnStageMetric).where(TurnStageMetric.turn_id == body["turnId"],
                                                                  TurnStageMetric.stage == "story")))  # fmt: skip
    assert [r.agent_id for r in rows] == [lia["id"]]
    assert rows[0].ms > 0 and rows[0].conversation_id == conv["id"]
