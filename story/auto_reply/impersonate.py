"""Write for me (impersonate): one draft of the user's next line, in the user's voice.

The suggestion generator's sibling: the same context (the saved recent window, the
conversation's language, the turn's reading of the user), the same checks on each line (script,
a member's ``Name:`` prefix, announcing success, narrating a character, copying the character)
and the same model config (``autoReply``). It differs in three ways: one line, not a JSON list,
so the text can stream as it is written; it may continue what the user has already typed
(``draft``: the line starts with those words, kept verbatim); and it must not repeat one of the
user's own earlier lines either (a small model's favourite answer is the user's last message).

The loop: at most ``MAX_ATTEMPTS`` streamed attempts within ``MAX_ATTEMPTS`` × ``timeoutMs``.
A rejected attempt is reported (``on_discard`` with its problems) and the next is asked with a
note naming them, in the chat's language; one that copied a message is asked with OpenAI's
presence and frequency penalties, so the copy is no longer the likeliest text. A model error is
one failed attempt. Nothing is invented when every attempt fails: ``ImpersonateFailed`` carries
each attempt's problems, for an honest error.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from .config import AutoReplyConfig
from .errors import AutoReplyDisabled, AutoReplyError, InvalidSuggestionInput
from .generator import MAX_ATTEMPTS, SuggestionUsage
from .inputs import ContextMessage, Guidance
from .ports import ChatMessage, ModelRequest
from .text import comparison_key, language_label, primary_language
from .validate import check_options

PURPOSE = "auto_reply.impersonate"  # the autoReply stage's model; its own name in the ledger
MAX_LINE_TOKENS = 200  # one chat line: Qwen-0.5B writes ~26 tokens/s here, a ramble costs seconds
COPY_PENALTY = 1.0
_USER_LABEL = re.compile(r"^[\"'“「『*\s]*(?:user|me|i|用户|我|玩家)[\"'”」』*\s]*[:：]\s*", re.IGNORECASE)
_QUOTES = ("\"\"", "“”", "「」", "『』", "''")


class ImpersonateInput(msgspec.Struct, frozen=True):
    language: str  # BCP-47, from the conversation settings
    members: list[str]  # the companions' names: the user never writes their lines
    context: list[ContextMessage] = []  # the saved recent window, oldest first
    draft: str = ""  # what the user has typed so far; the line starts with it
    guidance: Guidance | None = None
    about: str = ""  # the direct chat's companion, or the group: who the user is talking to


class ImpersonateResult(msgspec.Struct, frozen=True, rename="camel"):
    text: str  # the whole line, the draft included
    attempts: list[list[str]]  # each attempt's problems; the last is [] (accepted)
    usage: SuggestionUsage
    model: str | None = None


class ImpersonateFailed(AutoReplyError):
    code = "impersonate_failed"

    def __init__(self, attempts: list[list[str]], usage: SuggestionUsage, model: str | None) -> None:
        last = attempts[-1] if attempts else []
        super().__init__(f"no usable line after {len(attempts)} attempt(s): {'; '.join(last) or 'no answer'}")
        self.attempts = attempts
        self.usage = usage
        self.model = model


OnAttempt = Callable[[int], Awaitable[None]]
OnDelta = Callable[[int, str], Awaitable[None]]
OnDiscard = Callable[[int, list[str]], Awaitable[None]]


async def _nothing(*_: Any) -> None:
    return None


async def impersonate(
    model: Any,
    inp: ImpersonateInput,
    config: AutoReplyConfig,
    *,
    on_attempt: OnAttempt = _nothing,
    on_delta: OnDelta = _nothing,
    on_discard: OnDiscard = _nothing,
) -> ImpersonateResult:
    """``model``: anything with ``stream(request, on_delta)`` (or only ``complete``)."""
    if not config.enabled:
        raise AutoReplyDisabled()
    if not inp.language.strip():
        raise InvalidSuggestionInput("no conversation language")
    if len(inp.draft) > config.max_suggestion_chars:
        raise InvalidSuggestionInput(f"draft is longer than maxSuggestionChars ({config.max_suggestion_chars})")
    base = build_messages(inp, config)
    attempts: list[list[str]] = []
    usage = SuggestionUsage()
    model_name: str | None = None
    loop = asyncio.get_running_loop()
    deadline = loop.time() + MAX_ATTEMPTS * config.timeout_s
    messages, penalty = base, None
    while len(attempts) < MAX_ATTEMPTS and loop.time() < deadline:
        n = len(attempts) + 1
        await on_attempt(n)
        request = ModelRequest(
            messages=messages, purpose=PURPOSE, temperature=config.temperature,
            max_tokens=min(config.max_tokens, MAX_LINE_TOKENS), timeout_s=config.timeout_s,
            model_config_id=config.model_config_id, presence_penalty=penalty, frequency_penalty=penalty,
        )  # fmt: skip

        async def delta(piece: str, n: int = n) -> None:
            await on_delta(n, piece)

        try:
            async with asyncio.timeout_at(deadline):
                result = await _stream(model, request, delta)
        except Exception as exc:  # CancelledError is a BaseException and propagates
            attempts.append([f"model call failed: {type(exc).__name__}: {exc}"[:300]])
            await on_discard(n, attempts[-1])
            continue
        usage = _add(usage, result)
        model_name = getattr(result, "model", None) or model_name
        line, problems = check_line(str(getattr(result, "text", "") or ""), inp, config)
        if getattr(result, "finish_reason", None) == "length" and problems:
            problems.append(f"output was cut off at maxTokens ({request.max_tokens})")
        attempts.append(problems)
        if not problems:
            return ImpersonateResult(text=line, attempts=attempts, usage=usage, model=model_name)
        await on_discard(n, problems)
        messages = [*base, ChatMessage("assistant", line or "(empty)"), ChatMessage("user", repair_note(problems, inp))]
        penalty = COPY_PENALTY if any(COPIED in p for p in problems) else None
    raise ImpersonateFailed(attempts, usage, model_name)


COPIED = "copies"  # the mark of every copy problem below ("copies the character's message", ...)


def check_line(raw: str, inp: ImpersonateInput, config: AutoReplyConfig) -> tuple[str, list[str]]:
    """The cleaned whole line (draft kept at its start) and what is wrong with it."""
    line = with_draft(inp.draft, clean(raw))
    last_agent = next((m.content for m in reversed(inp.context) if m.role != "user"), "")
    checked = check_options([line], count=1, max_chars=config.max_suggestion_chars, language=inp.language,
                            speaker_names=inp.members, anchor_text=last_agent)  # fmt: skip
    problems = [p.removeprefix("option 1: ") for p in checked.problems]
    for other in _other_lines(line, inp.members):
        problems.append(f'writes a line for "{other}" (write only the user\'s own message)')
    key = comparison_key(line)
    own = [comparison_key(m.content) for m in inp.context if m.role == "user"]
    if key and key in own and key != comparison_key(inp.draft):
        problems.append("copies one of the user's earlier messages (write something new)")
    if key and key == comparison_key(inp.draft):
        problems.append("adds nothing to what the user already typed")
    return line, problems


def clean(text: str) -> str:
    """One message as the user would send it: no ``User:`` label, no quotes around the whole."""
    text = _USER_LABEL.sub("", text.strip(), count=1).strip()
    for pair in _QUOTES:
        if len(text) > 2 and text[0] == pair[0] and text[-1] == pair[-1] and pair[0] not in text[1:-1]:
            text = text[1:-1].strip()
    return text


def with_draft(draft: str, text: str) -> str:
    """The user's typed words stay as typed, at the start: the model's line when it begins with
    them (or repeats them somewhere), else the model's text read as their continuation."""
    draft = draft.strip()
    if not draft:
        return text
    at = text.find(draft)
    if at >= 0:
        return text[at:]
    joiner = "" if _wide(draft[-1]) or not text or text[0] in ",.!?;:，。！？、" else " "
    return f"{draft}{joiner}{text}"


def _wide(ch: str) -> bool:
    """Kana, Han or Hangul: words are not separated by spaces."""
    return "\u3040" <= ch <= "\u9fff" or "\uac00" <= ch <= "\ud7af" or "\uff00" <= ch <= "\uffef"


def _other_lines(line: str, members: list[str]) -> list[str]:
    """Members whose ``Name:`` starts a later line: the model went on to write the chat."""
    found = []
    for row in line.splitlines()[1:]:
        for name in members:
            if name.strip() and re.match(rf"^\s*[\"'“「*]*{re.escape(name.strip())}[\"'”」*]*\s*[:：]", row):
                found.append(name)
    return list(dict.fromkeys(found))


def build_messages(inp: ImpersonateInput, config: AutoReplyConfig) -> list[ChatMessage]:
    zh = primary_language(inp.language) == "zh"
    names = "、".join(inp.members) if zh else ", ".join(inp.members)
    parts: list[str] = []
    if inp.about.strip():
        parts.append(("## 聊天对象\n" if zh else "## Who the user is talking to\n") + inp.about.strip())
    window = [m for m in inp.context if m.content.strip()][-config.context_message_count:]
    if window:
        label = {"user": "用户" if zh else "User"}
        lines = [f"[{label.get(m.role, m.speaker)}]: {m.content.strip()}" for m in window]
        parts.append(("## 最近的对话（从旧到新）\n" if zh else "## Recent conversation (oldest first)\n") + "\n".join(lines))
    g = inp.guidance
    if g is not None and (g.emotion or g.intent):
        hint = msgspec.json.encode({"emotion": g.emotion, "intent": g.intent}).decode()
        parts.append(("## 对用户上一句的理解（仅供参考）\n" if zh else "## Reading of the user's last message (hints)\n") + hint)
    parts.append(_task(inp, config, names, zh))
    system = (
        f"你替用户写下一条要发出的消息。用户正在和{names}聊天。你只写用户自己说的话，第一人称，"
        f"用{language_label(inp.language)}，绝不写{names}的台词，也不描写他们的反应。只输出这一条消息本身。"
        if zh else
        f"You write the user's next message in a chat with {names}. Write only what the user says, in the "
        f"first person, in {language_label(inp.language)}; never lines for {names}, never how they react. "
        "Output that one message and nothing else."
    )  # fmt: skip
    return [ChatMessage("system", system), ChatMessage("user", "\n\n".join(parts))]


def _task(inp: ImpersonateInput, config: AutoReplyConfig, names: str, zh: bool) -> str:
    limit = config.max_suggestion_chars
    draft = inp.draft.strip()
    if zh:
        start = f"用户已经打了开头：「{draft}」。写出完整的一条消息，以这几个字开头并接着写下去。" if draft else ""
        return (f"## 任务\n{start}写用户接下来要发的一条消息，不超过{limit}个字，自然、口语，回应对话里最新的内容。"
                "不要重复用户或别人说过的话，不要加“用户：”之类的前缀，不要加引号。")
    start = f'The user has started typing: "{draft}". Write the whole message, beginning with those words and continuing them. ' if draft else ""
    return (f"## Task\n{start}Write the user's next message, at most {limit} characters, natural and casual, answering "
            "the newest part of the conversation. Do not repeat anything the user or anyone else already said; no "
            '"User:" prefix, no quotes.')


def repair_note(problems: list[str], inp: ImpersonateInput) -> str:
    if primary_language(inp.language) == "zh":
        return "这条不能用：" + "；".join(problems) + "。请重新写一条用户自己的新消息，只输出消息本身，用中文。"
    return ("That line cannot be used: " + "; ".join(problems) + f". Write a new message of the user's own, in "
            f"{language_label(inp.language)}; output only the message.")


async def _stream(model: Any, request: ModelRequest, on_delta: Callable[[str], Awaitable[None]]) -> Any:
    stream = getattr(model, "stream", None)
    if callable(stream):
        return await stream(request, on_delta)
    result = await model.complete(request)
    if getattr(result, "text", ""):
        await on_delta(result.text)
    return result


def _add(total: SuggestionUsage, result: Any) -> SuggestionUsage:
    u = getattr(result, "usage", None)
    if u is None:
        return SuggestionUsage(total.input_tokens, total.output_tokens, total.total_tokens, True)
    i, o = int(getattr(u, "input_tokens", 0) or 0), int(getattr(u, "output_tokens", 0) or 0)
    return SuggestionUsage(total.input_tokens + i, total.output_tokens + o, total.total_tokens + i + o,
                           total.estimated or bool(getattr(u, "estimated", False)))  # fmt: skip
