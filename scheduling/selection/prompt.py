"""The LLM selector prompt, following the seed's ``groupChatAgentSelectionPrompt``.

Who replies depends on intent, emotion, persona, relationship stage and how often each agent
spoke recently; the prompt carries all of them and the seed's principles (comfort → gentle and
close, advice → rational, de-escalation → calm and bounded, playful → lively, frequent speakers
down-weighted, several agents only when the user asks everyone / wants several views / needs
high-intensity relay).
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduling.context import GroupSpeakingContext
from scheduling.intent.model import UserIntent
from scheduling.ports import ChatMessage, ModelRequest
from scheduling.profiles import AgentProfile
from scheduling.selection.validation import SpeakerSelection

SELECTION_PURPOSE = "select"
SELECTION_SCHEMA_NAME = "speaker_selection"
_FIELD_CHARS = 200


def _principles_zh(reply_limit: int, chattiness: str) -> list[str]:
    return ["你是 AI 电子伴侣群聊的发言权调度器。",
            "请根据意图判断、用户情绪、Agent 人设、关系阶段和最近发言频率，选择最适合回复的 Agent。",
            *_rules_zh(reply_limit, chattiness)]


def _rules_zh(reply_limit: int, chattiness: str) -> list[str]:
    lines = [
        f"最多选择 {reply_limit} 个 Agent。",
        "不要为了热闹而选择过多 Agent。只有用户明确询问大家意见、要求分别回答、需要多视角或高情绪强度需要接力陪伴时，才选择多个。",
        "选择原则：",
        "- 情绪低落、孤独、焦虑时，优先选择性格稳定、温柔、善于共情且关系更熟的 Agent。",
        "- 用户需要分析、计划、建议时，优先选择理性、清晰、擅长复盘的 Agent。",
        "- 用户情绪激烈或冲突升级时，优先选择边界感强、克制、能降温的 Agent。",
        "- 用户轻松玩笑或高社交能量时，可以选择更活泼、有趣的 Agent。",
        "- 最近发言太频繁的 Agent 要适当降权，避免一个 Agent 连续抢话。",
        "- 长期关系更深的 Agent 可以优先承接高情绪强度内容，但不能无视人设匹配。",
        "- 用户点名的 Agent 必须入选。",
    ]
    if chattiness == "quiet":
        lines.append("群聊偏好：安静。除非用户问大家或点名多位，只选 1 个。")
    elif chattiness == "lively":
        lines.append("群聊偏好：热闹。合适时可以比平时多选 1 个。")
    lines.append("输出 selectedAgentIds 时必须使用给定 Agent 的 id，并用 reason 一句话说明理由（不超过 160 字）。只输出符合 JSON schema 的 JSON。")
    return lines


def _principles_en(reply_limit: int, chattiness: str) -> list[str]:
    return ["You decide who speaks next in an AI-companion group chat.",
            "Using the intent, the user's emotion, each agent's persona, relationship stage and how often it "
            "spoke recently, choose the agent(s) best suited to reply.",
            *_rules_en(reply_limit, chattiness)]


def selection_rules(language: str, reply_limit: int, chattiness: str) -> list[str]:
    """The seed's selection principles without the role lines (the combined call has its own)."""
    return (_rules_zh if language.lower().startswith("zh") else _rules_en)(reply_limit, chattiness)


def _rules_en(reply_limit: int, chattiness: str) -> list[str]:
    lines = [
        f"Choose at most {reply_limit} agent(s).",
        "Do not pick many agents just to make it lively. Choose several only when the user asks everyone, "
        "asks each to answer, wants several perspectives, or is so emotional that a relay of support helps.",
        "Principles:",
        "- Sad, lonely or anxious user: prefer a stable, gentle, empathetic agent the user is closer to.",
        "- User needs analysis, a plan or advice: prefer a rational, clear agent good at reviewing things.",
        "- User is heated or a conflict escalates: prefer a restrained agent with firm boundaries who can calm things down.",
        "- Light joking or high social energy: a lively, fun agent may be chosen.",
        "- Down-weight agents that spoke a lot recently, so no agent hogs the conversation.",
        "- An agent with a deeper long-term relationship may take high-intensity moments, but not against persona fit.",
        "- Agents the user named must be included.",
    ]
    if chattiness == "quiet":
        lines.append("Group preference: quiet. Choose only 1 unless the user addresses everyone or names several.")
    elif chattiness == "lively":
        lines.append("Group preference: lively. You may choose 1 more than usual when it fits.")
    lines.append("selectedAgentIds must use the given agent ids; explain in reason in one sentence (at most 160 "
                 "characters). Output only JSON "
                 "matching the JSON schema.")
    return lines


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _FIELD_CHARS else text[: _FIELD_CHARS - 1] + "…"


def format_agents(agents: Sequence[AgentProfile]) -> str:
    blocks = []
    for a in agents:
        fields = [("headline", a.headline), ("description", a.description),
                  ("personality", a.personality_prompt), ("tone", a.tone_prompt)]
        body = "; ".join(f"{k}: {_cut(v)}" for k, v in fields if v)
        blocks.append(f"- id={a.id} name={a.name}" + (f" ({body})" if body else ""))
    return "\n".join(blocks)


def format_speaking_context(context: GroupSpeakingContext, agents: Sequence[AgentProfile], *,
                            with_emotion: bool = True) -> str:  # fmt: skip
    """The seed's formatted context: the user's emotion (unless ``with_emotion`` is false: the
    combined call judges it itself), then one line of signals per agent in ``agents``."""
    e = context.user_emotion
    names = {a.id: a.name for a in agents}
    lines = [
        f"userEmotion: primaryEmotion={e.primary_emotion} intensity={e.intensity:.2f} needsComfort={e.needs_comfort} "
        f"needsAdvice={e.needs_advice} needsDeescalation={e.needs_deescalation} socialEnergy={e.social_energy}",
    ] if with_emotion else []
    for c in context.agent_contexts:
        if c.agent_id not in names:
            continue  # not a candidate (muted, or out of a close call's contenders)
        last = "never (in window)" if c.last_spoke_turns_ago is None else f"{c.last_spoke_turns_ago} turn(s) ago"
        lines.append(
            f"- {names.get(c.agent_id, c.agent_id)} (id={c.agent_id}): relationshipStage={c.relationship_stage} "
            f"relationshipScore={c.relationship_score:.2f} directMessages={c.conversation_message_count} "
            f"recentReplies={c.recent_reply_count} lastSpoke={last} freshness={c.freshness_score:.2f}"
            + (f" missedMessages={c.missed_messages} (not there for them)" if c.missed_messages else "")
        )
    return "\n".join(lines)


def build_selection_request(
    *, text: str, agents: Sequence[AgentProfile], context: GroupSpeakingContext, intent: UserIntent,
    reply_limit: int, language: str, recent_transcript: str = "", chattiness: str = "balanced",
    mentioned_ids: Sequence[str] = (),
) -> list[ChatMessage]:
    zh = language.lower().startswith("zh")
    system = "\n".join((_principles_zh if zh else _principles_en)(reply_limit, chattiness))
    intent_line = (f"kind={intent.kind} addressedAgentIds={list(intent.addressed_agent_ids)} "
                   f"wantsMultipleVoices={intent.wants_multiple_voices}")
    sections = [
        ("群聊 Agent" if zh else "Agents", format_agents(agents)),
        ("意图判断" if zh else "Intent", intent_line),
        ("被点名的 Agent" if zh else "Named by the user", ", ".join(mentioned_ids) or ("无" if zh else "none")),
        ("发言权上下文" if zh else "Speaking context", format_speaking_context(context, agents)),
        ("最近群聊" if zh else "Recent group chat", recent_transcript or ("（无）" if zh else "(none)")),
        ("用户本轮消息" if zh else "The user's message this turn", text),
    ]
    user = "\n\n".join(f"{title}{'：' if zh else ':'}\n{body}" for title, body in sections)
    return [ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)]


def selection_model_request(*, timeout_s: float | None = None, **kwargs) -> ModelRequest:
    """``build_selection_request`` as a request; the caller asks for a ``SpeakerSelection`` with
    ``selection_constraints`` (the candidates as an ``enum``)."""
    return ModelRequest(
        messages=build_selection_request(**kwargs),
        purpose=SELECTION_PURPOSE,
        temperature=0.2,
        timeout_s=timeout_s,
    )
