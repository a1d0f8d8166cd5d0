"""Agent replies: the actor prompt, one regeneration on a failed quality check, cross replies.

The actor prompt is the agent's persona (guardrails included) + the recent group transcript with
speaker names + the user's message + an instruction to speak only as this agent. ``stage_material``
is the seam where the Story coordinator adds its stage packet.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec

from app.db.models import Agent
from app.llm.port import ChatMessage, ModelRequest, ModelResult, Usage
from app.llm.templates import PromptTemplates
from app.llm.usage import add_usage
from app.turns.quality import reply_problems, strip_own_label

ACTOR_MAX_TOKENS = 400


class Reply(msgspec.Struct, kw_only=True):
    agent_id: str
    text: str
    kind: str = "primary"  # primary | cross
    respond_to_agent_id: str | None = None
    cross_reason: str | None = None
    cross_round: int | None = None
    model: str = ""
    usage: Usage = Usage()
    ms: float = 0.0
    attempts: int = 1
    problems: list[str] = []
    regenerated_for: list[str] = []
    dropped: bool = False


def persona_block(agent: Agent) -> str:
    parts = [
        ("Headline", agent.headline), ("Description", agent.description), ("Background", agent.story_background),
        ("Personality", agent.personality_prompt), ("Tone", agent.tone_prompt), ("Instructions", agent.default_prompt),
        ("Guardrails (always follow)", agent.guardrails_prompt),
    ]  # fmt: skip
    return "\n".join(f"{title}: {text.strip()}" for title, text in parts if text and text.strip())


def actor_request(
    templates: PromptTemplates,
    agent: Agent,
    *,
    language: str,
    transcript: str,
    user_text: str,
    others: list[str],
    purpose: str = "actor",
    template: str = "actor",
    extra: str = "",
    stage_material: str | None = None,
) -> ModelRequest:
    system = templates.render(template, language=language, characterName=agent.name, personality=persona_block(agent))
    if stage_material:
        system += "\n\n" + stage_material
    rules = (
        f"Speak only as {agent.name}, in {language}. Do not write lines for the user"
        + (f" or for {', '.join(others)}" if others else "")
        + ", and do not prefix your reply with a name."
    )
    user = f"Recent group chat:\n{transcript or '(none)'}\n\nThe user just said:\n{user_text}\n\n{extra}{rules}"
    return ModelRequest(
        messages=[ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)],
        purpose=purpose,
        max_tokens=ACTOR_MAX_TOKENS,
    )


async def generate_checked(
    model: Any,
    request: ModelRequest,
    agent: Agent,
    *,
    language: str,
    max_chars: int,
    other_names: list[str],
    earlier_replies: list[str],
) -> Reply:
    """Generate, check, regenerate once with the problems named, then drop if still failing."""
    started = time.perf_counter()
    usage = Usage()
    problems: list[str] = []
    result: ModelResult | None = None
    text = ""
    first: list[str] = []
    for attempt in (1, 2):
        current = request
        if attempt == 2:
            first = problems
            note = "Your previous draft was rejected: " + "; ".join(problems) + ". Write a new reply that fixes this."
            current = msgspec.structs.replace(
                request, messages=[*request.messages, ChatMessage(role="user", content=note)]
            )
        result = await model.complete(current)
        usage = add_usage(usage, result.usage)
        text = strip_own_label(result.text or "", [agent.name, *(agent.aliases or [])])
        problems = reply_problems(
            text, language=language, max_chars=max_chars, other_names=other_names, earlier_replies=earlier_replies
        )
        if not problems:
            return Reply(agent_id=agent.id, text=text, model=result.model, usage=usage, attempts=attempt,
                         regenerated_for=first, ms=(time.perf_counter() - started) * 1000)  # fmt: skip
    return Reply(agent_id=agent.id, text=text, model=result.model if result else "", usage=usage, attempts=2,
                 problems=problems, regenerated_for=first, dropped=True, ms=(time.perf_counter() - started) * 1000)  # fmt: skip
