"""Prompt building: the system template, the anchored context, the repair note.

The system prompt is a template so operators can tune tone per deployment; it must keep the
two variables the generator fills, or suggestions would come out in a guessed language or for
an unnamed character. Task numbers (count, length) live in the user turn so an override
template cannot silently drop them.
"""

from __future__ import annotations

import re

import msgspec

from .config import AutoReplyConfig
from .errors import TemplateError
from .inputs import ContextMessage, SuggestionInput
from .ports import ChatMessage
from .text import language_label, primary_language

LANGUAGE_VAR = "{{getvar::language}}"
CHARACTER_VAR = "{{characterName}}"
REQUIRED_VARS = (LANGUAGE_VAR, CHARACTER_VAR)
_VAR = re.compile(r"\{\{\s*([^{}]+?)\s*\}\}")

DEFAULT_TEMPLATE = """\
You suggest what the user might say next in a role-play chat with {{characterName}} \
(and possibly other characters). You write candidate messages FROM THE USER, never lines \
spoken by {{characterName}} or anyone else.

Rules:
- Write every option in {{getvar::language}}, whatever language earlier messages used.
- Each option is one short message the user could send as is: first person, natural, no \
numbering, no quotes around it, no speaker name prefix.
- Options take clearly different directions that fit this moment, for example: continue the \
current thread; respond to emotion, the relationship or curiosity; or a neutral, pausing, \
clarifying or different direction. Do not force fixed slots.
- The user decides for themselves: an option may attempt or say something, but never announce \
that the user's action succeeded, and never describe how {{characterName}} or other characters \
react.
- Material marked NOT YET HAPPENED is only a possible plan; never treat it as a fact.
- Answer with JSON only: {"options": ["...", "..."]}."""


def _canonical(var: str) -> str:
    """``{{getvar::characterName}}`` is the same variable as ``{{characterName}}``; the language
    must be spelled ``{{getvar::language}}`` (the form the spec requires of every template)."""
    var = var.strip()
    return CHARACTER_VAR if var == "getvar::characterName" else f"{{{{{var}}}}}"


def check_template(template: str) -> None:
    """Raise ``TemplateError`` unless the template uses exactly the variables we fill."""
    found = {_canonical(m) for m in _VAR.findall(template or "")}
    missing = [v for v in REQUIRED_VARS if v not in found]
    unknown = sorted(found - set(REQUIRED_VARS))
    if missing or unknown:
        raise TemplateError(missing, unknown)


def render_system_prompt(template: str, language: str, character_name: str) -> str:
    """Fill both variables in one pass, so a name containing ``{{...}}`` is never re-expanded."""
    check_template(template)
    values = {LANGUAGE_VAR: language_label(language), CHARACTER_VAR: character_name}
    return _VAR.sub(lambda m: values[_canonical(m.group(1))], template)


def window(inp: SuggestionInput, limit: int) -> list[ContextMessage]:
    """The last ``limit`` non-empty messages strictly before the anchor.

    If the caller passed the anchor (by id) or anything after it, those are cut off here: a
    suggestion must answer the anchor as it stood, not a later state of the chat.
    """
    messages = list(inp.context)
    for i, m in enumerate(messages):
        if m.id is not None and m.id == inp.anchor.id:
            messages = messages[:i]
            break
    visible = [m for m in messages if m.content and m.content.strip()]
    return visible[-limit:] if limit > 0 else []


def _hint(value: object) -> str:
    if isinstance(value, str):
        return value.strip()
    return msgspec.json.encode(value, order="sorted").decode()


def build_messages(inp: SuggestionInput, config: AutoReplyConfig, template: str) -> list[ChatMessage]:
    a = inp.anchor
    parts = []
    if a.agent_description.strip():
        parts.append(f"## About {a.agent_name}\n{a.agent_description.strip()}")
    g = inp.guidance
    hints = []
    if g is not None and g.emotion:
        hints.append(f"- user emotion: {_hint(g.emotion)}")
    if g is not None and g.intent:
        hints.append(f"- user intent: {_hint(g.intent)}")
    if hints:
        parts.append("## Reading of the user's last message (hints, not facts)\n" + "\n".join(hints))
    if inp.pending_stage and inp.pending_stage.strip():
        parts.append(
            "## Possible next story beat: NOT YET HAPPENED\n"
            "This is only a plan that has not happened in the story; do not treat it as fact "
            "or as something the user already knows.\n"
            f"<not_yet_happened>\n{inp.pending_stage.strip()}\n</not_yet_happened>"
        )
    ctx = window(inp, config.context_message_count)
    if ctx:
        lines = [f"[{m.speaker} ({'user' if m.role == 'user' else 'character'})]: {m.content.strip()}" for m in ctx]
        parts.append("## Recent conversation (oldest first)\n" + "\n".join(lines))
    if inp.latest_user_input.strip():
        parts.append(f"## The user's latest message\n{inp.latest_user_input.strip()}")
    parts.append(f"## {a.agent_name}'s reply, which the user now answers\n{a.content.strip()}")
    parts.append(task(inp, config))
    return [
        ChatMessage("system", render_system_prompt(template, inp.language, a.agent_name)),
        ChatMessage("user", "\n\n".join(parts)),
    ]


def task(inp: SuggestionInput, config: AutoReplyConfig) -> str:
    """The task, last, in the conversation's language for Chinese (a small model follows an
    instruction in the language it writes far more often). Directions are examples, not slots; a
    small model's usual failure is three copies of the character's reply, so the task says not to."""
    n, limit, name = config.suggestion_count, config.max_suggestion_chars, inp.anchor.agent_name
    if primary_language(inp.language) == "zh":
        return (
            f"## 任务\n写{n}条用户接下来可能发给{name}的消息，每条不超过{limit}个字。每条都是用户自己说的话"
            f"（第一人称），不是{name}的话：不要照抄或改写{name}的回复。{n}条的方向要各不相同，比如一条顺着话题"
            "说下去，一条回应感受或问一个问题，一条换个方向（暂停、澄清或聊别的）。不要宣布用户的行动已经成功，"
            '不要描写角色的反应。只用JSON回答：{"options": [...]}。'
        )
    return (
        f"## Task\nWrite exactly {n} different options for the user's next message, in "
        f"{language_label(inp.language)}, each at most {limit} characters. Each is what the user says or does, "
        f"in the first person, never {name}'s words: do not copy or rephrase {name}'s reply. Each takes its own "
        "direction, for example one carries the thread on, one answers the feeling or asks a question, one "
        "pauses, clarifies or changes the subject. Never announce that the user's action succeeded, never "
        'describe how a character reacts. Answer with JSON only: {"options": [...]}.'
    )
