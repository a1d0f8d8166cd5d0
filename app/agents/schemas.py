"""Agent API shapes."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from app.api.schemas import ApiInput, ApiStruct

Unit = Annotated[float, Meta(ge=0.0, le=1.0)]
Name = Annotated[str, Meta(min_length=1, max_length=64)]
Prompt = str  # bounded by Limits.max_prompt_chars in the service (a named setting)
Alias = Annotated[str, Meta(min_length=1, max_length=64)]
Aliases = Annotated[list[Alias], Meta(max_length=16)]
ModelConfigId = Annotated[str, Meta(min_length=1, max_length=64)]  # one of the app's [llm.models]


class Capabilities(ApiInput):
    """How well an agent does each kind of reply (0..1). Overrides the persona-keyword guess."""

    comfort: Unit = 0.0
    analysis: Unit = 0.0
    deescalation: Unit = 0.0
    playful: Unit = 0.0


class AgentCreate(ApiInput):
    name: Name
    headline: Prompt = ""
    description: Prompt = ""
    story_background: Prompt = ""
    personality_prompt: Prompt = ""
    tone_prompt: Prompt = ""
    guardrails_prompt: Prompt = ""
    default_prompt: Prompt = ""
    image_key: Annotated[str, Meta(max_length=256)] | None = None
    aliases: Aliases = msgspec.field(default_factory=list)
    capabilities: Capabilities | None = None
    model_config_id: ModelConfigId | None = None  # the model its replies are written with; None: the actor stage's


class AgentUpdate(ApiInput):
    name: Name | UnsetType = UNSET
    headline: Prompt | UnsetType = UNSET
    description: Prompt | UnsetType = UNSET
    story_background: Prompt | UnsetType = UNSET
    personality_prompt: Prompt | UnsetType = UNSET
    tone_prompt: Prompt | UnsetType = UNSET
    guardrails_prompt: Prompt | UnsetType = UNSET
    default_prompt: Prompt | UnsetType = UNSET
    image_key: Annotated[str, Meta(max_length=256)] | None | UnsetType = UNSET
    aliases: Aliases | UnsetType = UNSET
    capabilities: Capabilities | None | UnsetType = UNSET
    model_config_id: ModelConfigId | None | UnsetType = UNSET


class AgentOut(ApiStruct):
    id: str
    name: str
    headline: str
    description: str
    story_background: str
    personality_prompt: str
    tone_prompt: str
    guardrails_prompt: str
    default_prompt: str
    image_key: str | None
    aliases: list[str]
    capabilities: dict[str, float] | None
    model_config_id: str | None
    created_at: datetime
    updated_at: datetime
