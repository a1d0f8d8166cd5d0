from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from app.main import create_app
from tests.integration.conftest import ADMIN, ALICE, Api, hosted, live_replicas
from tests.integration.turns.fakes import World


@pytest.fixture
def world() -> World:
    return World()


@pytest.fixture
async def turn_api(settings, world: World) -> AsyncIterator[Api]:
    app = create_app(settings, model=world.model)
    async with AsyncTestClient(app, timeout=30) as client:
        yield Api(client, settings)


@pytest.fixture
async def turn_replicas(settings, world: World) -> AsyncIterator[list[Api]]:
    """Two app instances on one database, on the test's loop (truly concurrent requests)."""
    async for apps in hosted(live_replicas(settings, world.model)):
        yield apps


async def make_group(api: Api, **settings: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gentle = await api.agent("莉娅", headline="温柔的倾听者", capabilities={"comfort": 0.95, "analysis": 0.2, "deescalation": 0.6, "playful": 0.2})
    planner = await api.agent("周衡", aliases=["Heng"], headline="理性的规划师", capabilities={"comfort": 0.2, "analysis": 0.95, "deescalation": 0.5, "playful": 0.1})
    joker = await api.agent("小跳", headline="活泼的开心果", capabilities={"comfort": 0.3, "analysis": 0.1, "deescalation": 0.2, "playful": 0.95})
    conv = await api.group(gentle["id"], planner["id"], joker["id"], settings=settings or None)
    return conv, [gentle, planner, joker]


async def post_turn(api: Api, conv_id: str, content: str, **extra: Any) -> Any:
    return await api.client.post(f"/v1/conversations/{conv_id}/turns", json={"content": content, **extra}, headers=ALICE)


__all__ = ["ADMIN", "ALICE", "make_group", "post_turn"]
