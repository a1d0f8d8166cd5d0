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
from app.llm.port import ChatMessage, ModelRequest, ModelResult, Usage, stream_or_complete
from app.llm.templates import PromptTemplates
from app.llm.usage import add_usage
from app.turns.drafts import DraftChannel
from app.turns.language import language_instruction
from app.turns.quality import WRONG_SCRIPT, problem_code, reply_problems, strip_own_label

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
    judge_runs: list[Any] = []  # StageRun[QualityVerdict] of the LLM quality check, when on
    draft_id: str | None = None  # the streamed draft this reply was saved from
    first_token_ms: float | None = None


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
    channel: DraftChannel | None = None,
) -> Reply:
    """Generate, check, regenerate once with the problems named, then drop if still failing.

    With a ``channel`` each attempt is streamed as a draft (``message.delta``) and a draft that
    fails its checks is taken back (``message.discarded``). ``problems`` of a dropped reply are
    those of the regenerated draft; ``regenerated_for`` those of the first."""
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
            current = regeneration_request(request, problems, language)
        draft = channel.new() if channel is not None else None
        result = await (stream_or_complete(model, current, draft.delta) if draft is not None else model.complete(current))
        usage = add_usage(usage, result.usage)
        text = strip_own_label(result.text or "", [agent.name, *(agent.aliases or [])])
        problems = reply_problems(
            text, language=language, max_chars=max_chars, other_names=other_names, earlier_replies=earlier_replies
        )
        if not problems:
            return Reply(agent_id=agent.id, text=text, model=result.model, usage=usage, attempts=attempt,
                         regenerated_for=first, ms=(time.perf_counter() - started) * 1000,
                         draft_id=draft.id if draft else None,
                         first_token_ms=getattr(result, "first_token_ms", None))  # fmt: skip
        if draft is not None:
            await draft.discard(problems)
    return Reply(agent_id=agent.id, text=text, model=result.model if result else "", usage=usage, attempts=2,
                 problems=problems, regenerated_for=first, dropped=True, ms=(time.perf_counter() - started) * 1000)  # fmt: skip


def regeneration_request(request: ModelRequest, problems: list[str], language: str) -> ModelRequest:
    """The retry after a failed check: the problems named at the end; for a reply in the wrong
    language/script, the required language restated first, as a system message in that language."""
    note = "Your previous draft was rejected: " + "; ".join(problems) + ". Write a new reply that fixes this."
    messages = [*request.messages, ChatMessage(role="user", content=note)]
    if any(problem_code(p) == WRONG_SCRIPT for p in problems):
        # Merged into the leading system message: some chat templates (llama.cpp's among them)
        # accept only one system message, at the start.
        first = messages[0] if messages and messages[0].role == "system" else None
        line = language_instruction(language)
        head = ChatMessage(role="system", content=line + ("\n\n" + first.content if first else ""))
        messages = [head, *(messages[1:] if first else messages)]
    return msgspec.structs.replace(request, messages=messages)
