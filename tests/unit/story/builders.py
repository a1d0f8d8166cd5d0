"""Small builders for world and narrative snapshots used across the Story tests."""

from __future__ import annotations

from story.narrative.state import init_narrative_snapshot
from story.narrative.types import Goal, Line, NarrativeSnapshot
from story.tools.common import StoryContext, StoryModelConfig
from story.world.state import create_world_snapshot
from story.world.types import Background, Foreground, Seed, Undercurrent, WorldPolicy, WorldSnapshot


def ctx(turn: str = "t1") -> StoryContext:
    return StoryContext(request_id=f"req-{turn}", turn_id=turn, language="en")


def cfg(model) -> StoryModelConfig:
    return StoryModelConfig(model=model, model_config_id="story-cfg", timeout_s=5.0)


def world(**kw) -> WorldSnapshot:
    defaults = dict(
        backgrounds=[Background("bg-patrol", "The patrol returns", "Boots on the road", "conflict", 3)],
        undercurrents=[Undercurrent("uc-guild", "Ash Guild", "The guild hunts the key", "a hooded watcher",
                                    "A courier asks you to meet at the well")],
        seeds=[Seed("seed-caravan", "Salt caravan", "Caravan brings news", "dust on the horizon", "Join the caravan")],
        protected_owners=["Lia"], seed=731,
    )
    defaults.update(kw)
    return create_world_snapshot(Foreground("ev-key", "Lia checks the copper key", participants=["Lia"]), **defaults)


def narrative(goals: list[Goal] | None = None, **kw) -> NarrativeSnapshot:
    n = init_narrative_snapshot(Line("The old archive", "find what the key opens"),
                                Line("Trust with Lia", "earn Lia's cooperation"))
    if goals is not None:
        from msgspec.structs import replace
        n = replace(n, cycle=replace(n.cycle, pending=goals, total=len(goals)), need_plan=False)
    return n


def goal(gid: str, serves: str = "main", angle: str = "reveal", priority: int = 3, prereq: list[str] | None = None,
         reward: str = "", core: bool = False) -> Goal:
    return Goal(gid, serves, angle, f"gist of {gid}", reward, core, False, priority, prereq or [])


__all__ = ["ctx", "cfg", "world", "narrative", "goal", "WorldPolicy"]
