"""``settings.emotionSource``: ``model`` (the seed's emotion stage) or ``offline`` (the offline
detector's reading, no model call), recorded as such in the turn, the decision rows and the stage
metrics. SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select as sa_select

from app.db.engine import session_factory
from app.db.models import SpeakerDecision, TurnStageMetric
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World

ANGRY = "室友又把我的东西弄坏了，气死我了！"


async def _turn(api: Api, conv_id: str, text: str) -> dict[str, Any]:
    resp = await post_turn(api, conv_id, text)
    assert resp.status_code == 201, resp.text
    return resp.json()


async def test_offline_emotion_asks_no_model_and_says_so(turn_api: Api, world: World, engine: Any) -> None:
    conv, _ = await make_group(turn_api, emotionSource="offline", selection={"mode": "scorer"})
    body = await _turn(turn_api, conv["id"], ANGRY)  # the world's model would say "sad"
    assert "emotion" not in world.calls and "intent" in world.calls
    emotion = body["orchestration"]["emotion"]
    assert (emotion["source"], emotion["primaryEmotion"], emotion["needsDeescalation"]) == ("offline", "angry", True)
    async with session_factory(engine)() as s:
        rows = list(await s.scalars(sa_select(SpeakerDecision).where(SpeakerDecision.turn_id == body["turnId"])))
        metrics = {m.stage: m.outcome for m in await s.scalars(
            sa_select(TurnStageMetric).where(TurnStageMetric.turn_id == body["turnId"]))}  # fmt: skip
    assert {r.emotion_source for r in rows} == {"offline"} and {r.primary_emotion for r in rows} == {"angry"}
    assert metrics["emotion"] == "skipped"


async def test_the_model_reads_the_emotion_by_default(turn_api: Api, world: World) -> None:
    conv, _ = await make_group(turn_api, selection={"mode": "scorer"})
    body = await _turn(turn_api, conv["id"], ANGRY)
    assert world.calls.count("emotion") == 1
    emotion = body["orchestration"]["emotion"]
    assert (emotion["source"], emotion["primaryEmotion"]) == ("llm", "sad")


async def test_an_unknown_emotion_source_is_a_422(turn_api: Api) -> None:
    conv, _ = await make_group(turn_api)
    resp = await turn_api.client.patch(f"/v1/conversations/{conv['id']}", json={"settings": {"emotionSource": "vibes"}},
                                       headers=ALICE)  # fmt: skip
    assert resp.status_code == 422, resp.text
    assert "emotionSource" in resp.text
