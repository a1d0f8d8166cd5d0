"""Issue 11: structured-output repairs and stage fallbacks reach ``GET /metrics``."""

from __future__ import annotations

from tests.integration.conftest import ADMIN, Api
from tests.integration.turns.conftest import make_group, post_turn
from tests.integration.turns.fakes import World, select


async def test_repairs_and_fallbacks_are_counted(turn_api: Api, world: World) -> None:
    from app.metrics import MODEL_REPAIRS

    before = MODEL_REPAIRS.labels("select")._value.get()  # noqa: SLF001
    conv, _ = await make_group(turn_api, selection={"mode": "llm"})  # the selector is asked
    world.handlers["select"] = select("not-a-member")  # invalid twice: one repair, then the fallback scorer
    await post_turn(turn_api, conv["id"], "我今天好难过")
    assert MODEL_REPAIRS.labels("select")._value.get() == before + 1  # noqa: SLF001
    text = (await turn_api.client.get("/metrics", headers=ADMIN)).text
    assert "companion_model_struct_failures_total" in text and "companion_stage_outcomes_total" in text
