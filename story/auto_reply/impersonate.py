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
from .copies import holds_whole, pieced_together, resays, wide
from .helpdesk import helper_voice
from .errors import AutoReplyDisabled, AutoReplyError, InvalidSuggestionInput
from .usage import MAX_ATTEMPTS, SuggestionUsage, add_usage, usage_of
from .inputs import ContextMessage, Guidance
from .ports import ChatMessage, ModelRequest
from .text import comparison_key, language_label, primary_language
from .validate import check_options

PURPOSE = "auto_reply.impersonate"  # the autoReply stage's model; its own name in the ledger
MAX_LINE_TOKENS = 120  # one chat line (160 Chinese characters is about 120 Qwen tokens): Qwen-0.5B writes ~26 tokens/s here, a ramble costs seconds
COPY_PENALTY = 1.0
_USER_LABEL = re.compile(r"^[\"'“「『*\s]*(?:user|me|i|用户|我|玩家)(?:\s*[(（][^)）]{0,20}[)）])?[\"'”」』*\s]*[:：]\s*",
                         re.IGNORECASE)  # also "我 (周衡)：", a label Qwen2.5-0.5B writes
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
        usage = add_usage(usage, usage_of(getattr(result, "usage", None)))
        model_name = getattr(result, "model", None) or model_name
        cut_off = getattr(result, "finish_reason", None) == "length"
        line, problems = check_line(str(getattr(result, "text", "") or ""), inp, config, cut_off=cut_off)
        if cut_off and problems:
            problems.append(f"output was cut off at maxTokens ({request.max_tokens})")
        attempts.append(problems)
        if not problems:
            return ImpersonateResult(text=line, attempts=attempts, usage=usage, model=model_name)
        await on_discard(n, problems)
        messages = [*base, ChatMessage("assistant", line or "(empty)"), ChatMessage("user", repair_note(problems, inp))]
        penalty = COPY_PENALTY if any(mark in p for p in problems for mark in COPIED) else None
    raise ImpersonateFailed(attempts, usage, model_name)


COPIED = ("copies", "re-says", "pieced together")
"""The marks of every copy problem below ("copies the character's message", "re-says the
character's own words"): their retry is sent with the context's tokens penalised. On Qwen2.5-0.5B
an English write-for-me gave the companion's last sentence back on all three attempts when only
exact copies were penalised; with the penalty on a re-say too, most retries were lines of the
user's own."""


def check_line(raw: str, inp: ImpersonateInput, config: AutoReplyConfig, *, cut_off: bool = False) -> tuple[str, list[str]]:
    """The cleaned whole line (draft kept at its start) and what is wrong with it. ``cut_off``: the
    model ran out of tokens, so its last sentence is unfinished and is left out when whole ones
    remain."""
    keep = len(inp.draft.strip())
    line = with_draft(inp.draft, clean(raw))
    looped = drop_repeats(line, keep=keep)
    if cut_off and looped == line:
        looped = whole_sentences(line, keep=keep)
    line = fit(looped, config.max_suggestion_chars, keep=keep)
    last_agent = next((m.content for m in reversed(inp.context) if m.role != "user"), "")
    checked = check_options([line], count=1, max_chars=config.max_suggestion_chars, language=inp.language,
                            speaker_names=inp.members, anchor_text=last_agent)  # fmt: skip
    problems = [p.removeprefix("option 1: ") for p in checked.problems] + voice_of_user_problems(line, inp)
    key = comparison_key(line)
    if key and key == comparison_key(inp.draft):
        problems.append("adds nothing to what the user already typed")
    return line, problems


def voice_of_user_problems(line: str, inp: ImpersonateInput) -> list[str]:
    """What makes a line not the user's own, beyond the suggestion checks: a member's line inside
    it, the last companion line said back, a loop, an assistant's refusal, one of the user's
    earlier lines again (the typed draft excepted)."""
    problems: list[str] = []
    last_agent = next((m.content for m in reversed(inp.context) if m.role != "user"), "")
    for other in _spoken_for(line, inp.members):
        problems.append(f'writes a line for "{other}" (write only the user\'s own message)')
    if last_agent and resays(line, last_agent):
        problems.append("re-says the character's own words (answer them instead)")
    earlier = [m.content for m in inp.context if m.content != last_agent]
    if not inp.draft.strip() and any(comparison_key(e) != comparison_key(line) and resays(line, e) for e in earlier):
        problems.append("re-says an earlier message of the chat (write something new)")
    if _STRUCTURE.search(line):
        problems.append("is a piece of JSON, not a message")
    if repeats_itself(line):
        problems.append("says the same sentence more than once")
    if helper_voice(line):
        problems.append("is an assistant's refusal or disclaimer, not something the user would say")
    if _ADVISING.search(line):
        problems.append("advises the companion in its own voice (the user asks, answers or tells)")
    if _HEADING.search(line):
        problems.append("ends with a colon, a list's heading rather than a message")
    key = comparison_key(line)
    own = [comparison_key(m.content) for m in inp.context if m.role == "user"]
    if key and key in own and key != comparison_key(inp.draft):
        problems.append("copies one of the user's earlier messages (write something new)")
    if not problems:  # the part the model wrote (after a typed draft) against every message of the window
        draft = inp.draft.strip()
        written = line[len(draft):] if draft and line.startswith(draft) else line
        said = [m.content for m in inp.context]
        if holds_whole(written, said) or pieced_together(written, said):
            problems.append("is pieced together from earlier messages of the chat (write something new)")
    return problems


_SENTENCE_END = re.compile(r"[。！？!?…]+[”」』\"')]*|(?<=[a-z0-9\"')])[.]+(?=\s|$)")
MIN_FIT_CHARS = 5
MIN_REPEAT_KEY = 6  # a sentence this short may come twice ("哈哈。哈哈。") without being a loop


def fit(line: str, limit: int, *, keep: int = 0) -> str:
    """A line over ``limit`` keeps its whole first sentences that fit (a chat line says one or two
    things; cutting after a sentence's end is not cutting a sentence). When not even the first
    sentence fits, or what fits is shorter than ``MIN_FIT_CHARS`` or than the typed draft
    (``keep``), the line stays as it is and the length check rejects it."""
    if len(line) <= limit:
        return line
    ends = [m.end() for m in _SENTENCE_END.finditer(line) if m.end() <= limit]
    return _cut(line, ends[-1] if ends else 0, keep)


def drop_repeats(line: str, *, keep: int = 0) -> str:
    """A small model's loop ("我会早点睡。我会早点睡。我会…") ends where a sentence comes again: the
    line is what came before it, when that is a line at all (see ``fit``); else it stays as it is
    and ``repeats_itself`` rejects it."""
    seen: set[str] = set()
    start = 0
    for end in [*(m.end() for m in _SENTENCE_END.finditer(line)), len(line)]:
        key = comparison_key(line[start:end])
        if len(key) >= MIN_REPEAT_KEY and key in seen:
            return _cut(line, start, keep)
        seen.add(key)
        start = end
    return line


def whole_sentences(line: str, *, keep: int = 0) -> str:
    """The line without its unfinished last sentence (the model ran out of tokens mid-way)."""
    ends = [m.end() for m in _SENTENCE_END.finditer(line)]
    return _cut(line, ends[-1], keep) if ends and line[ends[-1]:].strip() else line


def _cut(line: str, end: int, keep: int) -> str:
    return line[:end].strip() if end >= max(MIN_FIT_CHARS, keep + 1) else line


def clean(text: str) -> str:
    """One message as the user would send it: its first line (a small model goes on to write the
    others' lines after it; cut at a line break, never inside a sentence), no ``User:`` label, no
    quotes around the whole."""
    text = _USER_LABEL.sub("", text.strip(), count=1).strip()
    text = next((line.strip() for line in text.splitlines() if line.strip()), "")
    text = _USER_LABEL.sub("", text, count=1).strip()
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
    text = text[_overlap(draft, text):].lstrip() if text else text
    joiner = "" if wide(draft[-1]) or not text or text[0] in ",.!?;:，。！？、" else " "
    return f"{draft}{joiner}{text}"


def _overlap(draft: str, text: str) -> int:
    """How much of ``text``'s start re-says the end of the draft ("其实我" + "我感觉…" would read
    "其实我我感觉…"; "Honestly I" + "I feel…" "Honestly I I feel…"): whole characters for wide
    scripts, whole words otherwise (case-insensitive), the longest such overlap."""
    if wide(draft[-1]):
        return next((n for n in range(min(len(draft), len(text)), 0, -1) if draft.endswith(text[:n])), 0)
    words, said = draft.split(), text.split()
    for n in range(min(len(words), len(said)), 0, -1):
        if [w.casefold() for w in words[-n:]] == [w.casefold() for w in said[:n]]:
            return len(" ".join(text.split(maxsplit=n)[:n]))
    return 0


def repeats_itself(line: str) -> bool:
    """A sentence (or clause) of the line said again: a small model's loop ("我会尽量…。我会尽量…。")."""
    seen: set[str] = set()
    for part in re.split(r"[。！？!?.；;，,\n]+", line):
        key = comparison_key(part)
        if len(key) >= MIN_REPEAT_KEY:
            if key in seen:
                return True
            seen.add(key)
    return False


def _spoken_for(line: str, members: list[str]) -> list[str]:
    """Members labelled as speaking inside the line (``…好的。林溪：我也是``, or after the typed
    draft); a label at the very start is the suggestion checks' ``spoken by`` problem."""
    found = []
    for name in members:
        name = name.strip()
        if name and re.search(rf"(?<=.)[\"'“「*\s]*{re.escape(name)}[\"'”」*]*\s*[:：]", line):
            found.append(name)
    return found


_STRUCTURE = re.compile(r'"\s*:\s*[\[{"]|[\[{]\s*"|^\W*options\W*$', re.IGNORECASE)
"""A fragment of the list's JSON (``options": [``) a small model writes as a line."""

# The companion's part, turned round: a small model asked for the user's line after advice gave
# advice back ("我建议你在一家大型超市寻找工作…"). A user who asks "what should I do" does not
# answer "I suggest you…"; one who shares a plan says "I'll…", "我想…".
_ADVISING = re.compile(r"^\W*(?:我(?:的)?建议(?:你|您|是)|建议(?:你|您)|I(?: would|'d)? (?:suggest|recommend)(?: that)? you\b)",
                       re.IGNORECASE)
_HEADING = re.compile(r"[:：]\s*$")


def build_messages(inp: ImpersonateInput, config: AutoReplyConfig, hint: str = "") -> list[ChatMessage]:
    """The model plays the user, as a person texting friends: the chat with its roles swapped
    (the user's lines are the assistant's turns, the companions' lines come in as ``Name: text``),
    so the next assistant turn is the user's next line. Tried on Qwen2.5-0.5B against "write what
    the user would say next" (a transcript to continue, or roles swapped as "the user"): those
    gave the companion's own sentence back or an assistant's "I'll do my best to help"; a person
    told not to give help or advice answered as the user ("其实我最担心的是这次机会。"). ``hint``: a
    short note in brackets the last user turn ends with (a suggestion's direction)."""
    zh = primary_language(inp.language) == "zh"
    names = "、".join(inp.members) if zh else ", ".join(inp.members)
    limit = config.max_suggestion_chars
    about = f"\n{inp.about.strip()}" if inp.about.strip() else ""
    mood = _mood(inp.guidance)
    if zh:
        system = (f"你是一个普通人，正在手机上和{names}聊天。{about}\n像真人一样用{language_label(inp.language)}简短地回复，"
                  f"一两句话（不超过{limit}个字），说你自己的想法和感受，不要提供帮助或建议，不写{names}的话，"
                  "不加名字、前缀或引号，不重复说过的话。" + (f"\n你此刻的状态（参考）：{mood}" if mood else ""))
    else:
        system = (f"You are an ordinary person texting with {names}.{about}\nReply like a real person, in "
                  f"{language_label(inp.language)}: one or two short sentences (at most {limit} characters) with your own "
                  f"thoughts and feelings. Do not offer help or advice, never write lines for {names}, no name, prefix or "
                  "quotes, nothing already said." + (f"\nHow you feel right now (a hint): {mood}" if mood else ""))
    turns: list[ChatMessage] = [ChatMessage("system", system)]
    window = [m for m in inp.context if m.content.strip()][-config.context_message_count:]
    for m in window:
        if m.role == "user":
            turns.append(ChatMessage("assistant", m.content.strip()))
        else:
            turns.append(ChatMessage("user", f"{m.speaker}: {m.content.strip()}" if len(inp.members) > 1 else m.content.strip()))
    task = "\n".join(t for t in (_task(inp, zh, answering=turns[-1].role == "user"), hint.strip()) if t)
    if task:
        turns.append(ChatMessage("user", task))
    return _merge_users(turns)


def _mood(g: Guidance | None) -> str:
    """The turn's reading as a hint: the emotion and the intent's kind only. Their free-text
    ``reason`` stays out: it quotes the selector's rules ("…善于共情且关系更熟的 Agent"), which
    Qwen2.5-0.5B then wrote into the user's line."""
    if g is None:
        return ""
    emotion = g.emotion.get("primaryEmotion") if isinstance(g.emotion, dict) else g.emotion
    intent = g.intent.get("kind") if isinstance(g.intent, dict) else g.intent
    hint = {k: v for k, v in (("emotion", emotion), ("intent", intent)) if isinstance(v, str) and v.strip()}
    return msgspec.json.encode(hint).decode() if hint else ""


def _task(inp: ImpersonateInput, zh: bool, *, answering: bool) -> str:
    """What the user turn adds: the typed start, or a nudge when the newest line is the user's own
    (or there is none yet); nothing when a companion just spoke (the model simply answers)."""
    draft = inp.draft.strip()
    if draft:
        return f"（用「{draft}」开头回复）" if zh else f'(Start your reply with "{draft}")'
    if answering:
        return ""
    return "（你接着说）" if zh else "(Go on, say something)"


def _merge_users(turns: list[ChatMessage]) -> list[ChatMessage]:
    """Two user turns in a row (a companion's line, then the task) become one: chat templates
    expect the roles to alternate."""
    out: list[ChatMessage] = []
    for t in turns:
        if out and t.role == "user" and out[-1].role == "user":
            out[-1] = ChatMessage("user", f"{out[-1].content}\n\n{t.content}")
        else:
            out.append(t)
    return out


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
