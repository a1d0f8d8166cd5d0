"""Story integration fixtures: the real app and database, with a function fake that also
answers the Story purposes (initializer, prepare, plan, advance, settle)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from litestar.testing import AsyncTestClient
from sqlalchemy import select

from app.db.engine import session_factory
from app.db.models import StoryState
from app.main import create_app
from story.coordinator.envelope import StoryState as Envelope, deserialize_state
from tests.integration.conftest import ALICE, Api
from tests.integration.turns.fakes import World, select as choose

STORY_ON = {"enabled": True, "modelConfigId": "default"}
INIT = {
    "foreground": {"id": "ev-key", "title": "莉娅核验铜钥匙", "summary": "城门口"},
    "backgrounds": [{"id": "bg-patrol", "title": "巡逻队归来", "summary": "脚步声", "kind": "conflict", "countdown": 3}],
    "undercurrents": [{"id": "uc-guild", "owner": "灰烬公会", "title": "追查钥匙", "clue": "戴兜帽的人", "invitation": "井边见"}],
    "seeds": [{"id": "seed-c", "owner": "盐商队", "title": "消息", "clue": "远处的尘土", "invitation": "同行"}],
    "main": {"theme": "旧档案馆", "direction": "查明钥匙对应的旧城设施", "experience": "悬疑"},
    "sub": {"theme": "信任", "direction": "建立与莉娅的合作", "experience": "温暖"},
    "emotion_label": "curious",
}
PLAN = {"goals": [{"id": f"g{i}", "serves": "sub" if i == 4 else "main", "angle": "reveal", "gist": f"目标 {i}",
                   "reward": "", "core": i == 0, "priority": 5 - i, "prerequisites": []} for i in range(5)]}
NORMAL = {"target_id": None, "companion_follows": None}
CUE_PATROL = {"target_id": "bg-patrol", "companion_follows": True}
ADV = {"invitation_delivered": False, "shown_injection_ids": [], "offstage_results": [], "new_backgrounds": [],
       "new_seeds": [], "next_foreground": None, "choices": []}
STORY_PURPOSES = ("story_init.world", "story.prepare", "story.plan_cycle", "story.advance", "story.settle", "story.rebranch")


def story_world(**handlers: Any) -> World:
    base = {"story_init.world": INIT, "story.prepare": NORMAL, "story.plan_cycle": PLAN, "story.advance": ADV}
    return World(**{**base, **handlers})


@pytest.fixture
def world() -> World:
    return story_world()


@contextlib.asynccontextmanager
async def story_client(settings, world: World, *, initialize_ahead: bool = False) -> AsyncIterator[Api]:
    # Scripted Story answers are handed out in call order: a speculative actor for another agent
    # would take one (its prepare is discarded with it), and so would the background
    # initialisation of the agents that did not speak. Both have their own tests.
    app = create_app(msgspec.structs.replace(settings, turn_speculation=False, story_initialize_ahead=initialize_ahead),
                     model=world.model)  # fmt: skip
    async with AsyncTestClient(app, timeout=30) as client:
        yield Api(client, settings)


@pytest.fixture
async def story_api(settings, world: World) -> AsyncIterator[Api]:
    async with story_client(settings, world) as api:
        yield api


async def story_group(api: Api, world: World, *, story: dict[str, Any] | None = None, reply_limit: int = 1,
                      user: dict[str, str] = ALICE) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Three agents; the LLM selector (``selection.mode`` llm: asked on every turn) picks the first
    (莉娅) unless a test changes ``world``."""
    lia = await api.agent("莉娅", headline="城门守卫", description="莉娅负责城门登记，不得泄露内城秘密。",
                          storyBackground="你们站在城门口。",
                          capabilities={"comfort": 0.95, "analysis": 0.2, "deescalation": 0.6, "playful": 0.2})
    heng = await api.agent("周衡", headline="理性的规划师",
                           capabilities={"comfort": 0.2, "analysis": 0.95, "deescalation": 0.5, "playful": 0.1})
    tiao = await api.agent("小跳", headline="活泼的开心果",
                           capabilities={"comfort": 0.3, "analysis": 0.1, "deescalation": 0.2, "playful": 0.95})
    settings = {"replyLimit": reply_limit, "story": story if story is not None else STORY_ON,
                "selection": {"mode": "llm"}}
    conv = await api.group(lia["id"], heng["id"], tiao["id"], settings=settings, user=user)
    world.handlers["select"] = choose(lia["id"])
    return conv, [lia, heng, tiao]


async def say(api: Api, conv_id: str, content: str, user: dict[str, str] = ALICE) -> dict[str, Any]:
    resp = await api.client.post(f"/v1/conversations/{conv_id}/turns", json={"content": content}, headers=user)
    assert resp.status_code == 201, resp.text
    body = resp.json()
    assert body["status"] == "completed", body
    return body


async def state_row(engine, conv_id: str, agent_id: str) -> StoryState | None:
    async with session_factory(engine)() as s:
        return await s.scalar(select(StoryState).where(StoryState.conversation_id == conv_id,
                                                       StoryState.agent_id == agent_id))


async def saved_state(engine, conv_id: str, agent_id: str) -> Envelope:
    row = await state_row(engine, conv_id, agent_id)
    assert row is not None and row.envelope is not None
    return deserialize_state(row.envelope, agent_id)


def requests(world: World, purpose: str) -> list[Any]:
    return [r for r in world.model.history if r.purpose == purpose]


def story_calls(world: World) -> list[str]:
    return [c for c in world.calls if c.startswith(("story.", "story_init"))]
