"""The actor prompt as a conversation, the way chat models are trained and roleplay frontends send it.

- **system**: the persona and the rules, written in the conversation's language (Chinese
  conversations get Chinese prompts: ``actor_zh``), then the Story's stage material, then the lore
  entries the window triggered (``add_lore``: one titled block, "设定" / "World info", the
  entries' contents one per line), then a note for a Continue or a cross reply;
- **history**: the speaking companion's own earlier lines as ``assistant`` turns, everything else
  (the user, the other members) as ``user`` turns labelled with the speaker's name (``周衡：…``;
  unlabelled in a direct chat, where only the user speaks); consecutive lines of others form one
  turn, so roles alternate as strict chat templates require;
- the message being answered last, as the user's line.

No quoted transcript and no scaffolding phrase ("The user just said:") a model could copy into its
answer. ``ActorPrompt.checks`` carries what the reply checks compare against: the user's message,
the window, the prompt's own fixed wording and the persona.

A retry (``ActorPrompt.retry``) is the same request (for a repeat of the window or an echo of the
user: only the line answered, since a small model copies what the history holds) with one short
correction added to the system message, in the conversation's language, naming what to do
differently (never the rejected text or the problem's details, which a model would translate and
say), at a warmer temperature; for a copy (of the user or of the window) with the context's tokens
penalised (``presence_penalty``, ``frequency_penalty``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from app.db.models import Agent
from app.llm.port import ChatMessage, ModelRequest
from app.llm.templates import PromptTemplates
from app.turns.language import language_instruction
from scheduling.lore import LoreEntry, LoreUse, select_lore
from scheduling.profiles import GroupMessage
from story.auto_reply.text import is_chinese

ACTOR_MAX_TOKENS = 400
SHORT_RETRY = frozenset({"repeats_earlier", "echoes_user"})  # problems whose retry leaves the history out
"""After an echo too: Qwen2.5-0.5B's retries of 12 Story turns' prompts, twice each, after an echo
kept 6/24 with the history (the rest said earlier lines again or wrote other members' lines) and
16/24 with only the line answered (both with the correction and the penalties)."""
RETRY_TEMPERATURE = 0.9
COPY_RETRY = frozenset({"echoes_user", "repeats_earlier"})  # problems whose retry penalises the context's tokens
COPY_RETRY_PENALTY = 1.0
"""``presence_penalty`` and ``frequency_penalty`` of a copying reply's retry. A small model (Qwen2.5
0.5B) answered "我今天看到一个超好笑的视频，笑死我了" with the line itself, twice, whatever the
correction said; with the tokens it would copy penalised, the likeliest text is no longer the copy."""


class Words(msgspec.Struct, frozen=True):
    """The fixed wording of the actor prompt in one language."""

    user: str
    colon: str
    titles: tuple[str, str, str, str, str, str, str]
    group_scene: str
    direct_scene: str
    continue_note: str
    continue_cue: str
    cross_note: str
    retry_lead: str
    lore_title: str
    fixes: Mapping[str, str]
    generic_fix: str


ZH = Words(
    user="用户", colon="：",
    titles=("简介", "描述", "背景", "性格", "语气", "说明", "必须遵守"),
    group_scene="你在一个群聊里，和用户还有{others}一起聊天。",
    direct_scene="你在和用户一对一私聊。",
    continue_note="用户这次没有说话。请接着刚才的话题自然地说下去，不要重复已经说过的内容。",
    continue_cue="（继续）",
    cross_note="现在用一两句话回应{target}刚才说的话。",
    retry_lead="这次换一种说法：",
    lore_title="设定（你知道的背景，按需自然地用，不要照抄）：",
    fixes={
        "echoes_user": "别重复用户的原话，用你自己的话回应", "repeats_earlier": "别重复群里已经说过的话",
        "prompt_leak": "只说聊天的内容", "speaks_as_other": "只写你自己的一段话，不写别人的台词和名字",
        "speaking_for_others": "只写你自己的一段话，不写别人的台词和名字",
        "duplicate": "说点和其他伙伴不一样的", "near_duplicate": "说点和其他伙伴不一样的",
        "degenerate_repetition": "写通顺的句子，别重复同一个字或词", "no_words": "写一句完整的话",
        "empty": "写一句完整的话", "too_long": "写短一点，一到三句", "out_of_character": "保持你的人设和语气",
        "off_topic": "回应用户刚才说的事", "unsafe": "内容要友善、安全", "repetitive": "别重复已经说过的话",
        "wrong_language": "只用中文",
        "speaks_as_user": "那是用户的经历，不是你的：直接对用户说，别说成自己的事", "assistant_voice": "你是朋友，不是助手，像朋友一样聊天",
        "reads_as_list": "像朋友聊天那样说一两句，不要列清单", "narrates_others": "直接跟用户说话，别讲其他伙伴怎么样",
        "addresses_itself": "别叫自己的名字，直接对用户说",
        "addresses_members": "这句是回给用户的：直接对用户说，别点其他伙伴的名",
        "glad_about_distress": "用户现在不好受：别说高兴，先体谅他的感受",
        "sorry_about_joy": "用户现在很开心：别说抱歉或遗憾，跟他一起开心",
    },
    generic_fix="写一句更自然的回复",
)  # fmt: skip

EN = Words(
    user="User", colon=": ",
    titles=("Headline", "Description", "Background", "Personality", "Tone", "Instructions", "Always follow"),
    group_scene="You are in a group chat with the user and {others}.",
    direct_scene="You are chatting one-on-one with the user.",
    continue_note="The user said nothing this time. Carry on naturally from where the chat stopped, without "
                  "repeating anything already said.",
    continue_cue="(go on)",
    cross_note="Now answer what {target} just said, in one or two sentences.",
    retry_lead="This time, do it differently: ",
    lore_title="World info (background you know; use it naturally when it fits, never quote it):",
    fixes={
        "echoes_user": "answer in your own words instead of repeating the user",
        "repeats_earlier": "say something not already said in the chat", "prompt_leak": "talk only about the chat",
        "speaks_as_other": "write only your own words, no lines or names of others",
        "speaking_for_others": "write only your own words, no lines or names of others",
        "duplicate": "say something different from the other companions",
        "near_duplicate": "say something different from the other companions",
        "degenerate_repetition": "write plain sentences without repeating a word", "no_words": "write a full sentence",
        "empty": "write a full sentence", "too_long": "keep it to one to three sentences",
        "out_of_character": "stay in your character and tone", "off_topic": "answer what the user just said",
        "unsafe": "keep it kind and safe", "repetitive": "don't repeat what was already said",
        "wrong_language": "use only the conversation's language",
        "speaks_as_user": "that happened to the user, not to you: talk to them about it",
        "assistant_voice": "you are a friend, not an assistant: talk like one",
        "reads_as_list": "say it in a sentence or two, as a friend would, not as a list",
        "narrates_others": "talk to the user; don't describe the other companions",
        "addresses_itself": "don't call yourself by name; talk to the user",
        "addresses_members": "this answers the user: talk to them, not to the other companions by name",
        "glad_about_distress": "they are having a hard time: don't say you're glad, show you care",
        "sorry_about_joy": "they are happy: don't say you're sorry, share the joy",
    },
    generic_fix="write a more natural reply",
)  # fmt: skip


def words_for(language: str) -> Words:
    return ZH if is_chinese(language) else EN


class ReplyChecks(msgspec.Struct, frozen=True, kw_only=True):
    """What a reply is checked against besides itself (see ``quality.reply_problems``)."""

    language: str
    own_names: tuple[str, ...] = ()
    other_names: tuple[str, ...] = ()
    user_text: str = ""
    window: tuple[str, ...] = ()
    scaffolding: tuple[str, ...] = ()
    persona: str = ""
    stage: tuple[str, ...] = ()  # the stage material's rules and texts (a Story stage's event, clues, …)
    to_user: bool = True  # False: a cross reply, which answers another member


class ActorPrompt(msgspec.Struct, frozen=True, kw_only=True):
    request: ModelRequest
    checks: ReplyChecks
    answered: str | None = None  # the line answered, as the last user turn shows it (None: a Continue)
    notes: tuple[str, ...] = ()  # the Continue or cross-reply note ending the system message (lore goes before it)
    lore: tuple[LoreUse, ...] = ()  # the lore entries in the system message (``add_lore``)

    def lore_record(self) -> list[dict[str, object]]:
        """The entries used, for the reply's metadata (``lore``)."""
        return [{"id": u.entry.id, "keys": list(u.keys), "priority": u.entry.priority} for u in self.lore]

    def retry(self, problems: Sequence[str]) -> ActorPrompt:
        request = self.request
        if self.answered is not None and any(p.split(":", 1)[0].strip() in SHORT_RETRY for p in problems):
            # A small model copies what its context holds: its own earlier lines most of all. The
            # retry then sends only the line answered (the checks still see the whole window).
            system = [m for m in request.messages[:1] if m.role == "system"]
            request = msgspec.structs.replace(request, messages=[*system, ChatMessage(role="user", content=self.answered)])
        return msgspec.structs.replace(self, request=retry_request(request, problems, self.checks.language))


def persona_block(agent: Agent, language: str = "en") -> str:
    titles = words_for(language).titles
    texts = (agent.headline, agent.description, agent.story_background, agent.personality_prompt, agent.tone_prompt,
             agent.default_prompt, agent.guardrails_prompt)  # fmt: skip
    colon = words_for(language).colon
    return "\n".join(f"{title}{colon}{text.strip()}" for title, text in zip(titles, texts) if text and text.strip())


def actor_prompt(
    templates: PromptTemplates,
    agent: Agent,
    *,
    language: str,
    recent: Sequence[GroupMessage],
    names: Mapping[str, str],
    user_text: str | None,
    direct: bool = False,
    purpose: str = "actor",
    cross_target: tuple[str, str] | None = None,
    this_turn: Sequence[tuple[str, str]] = (),
    stage_material: str | None = None,
    stage_texts: tuple[str, ...] = (),
) -> ActorPrompt:
    """``recent``: the window before the message answered, any order (sorted by ``seq``);
    ``names``: agent id → name of every member; ``user_text`` None for a Continue (the window then
    ends with what is continued); ``this_turn``: (agent id, text) of replies already saved this
    turn; ``cross_target``: (agent id, name) a cross reply answers; ``stage_material`` extra system
    text (a Story stage), ``stage_texts`` its rules and the texts it shows (for the reply checks)."""
    words = words_for(language)
    others = [name for agent_id, name in names.items() if agent_id != agent.id]
    scene = words.direct_scene if direct else words.group_scene.format(others="、".join(others) if words is ZH
                                                                           else ", ".join(others))  # fmt: skip
    template = templates.localized("cross_reply" if cross_target else "actor", language)
    persona = persona_block(agent, language)
    variables = {"language": language, "characterName": agent.name, "scene": scene,
                 "languageLine": language_instruction(language)}  # fmt: skip
    rules = templates.render(template, **variables)  # the wording alone, for the leak check
    system = templates.render(template, personality=persona, **variables)
    notes = [words.continue_note if user_text is None else "",
             words.cross_note.format(target=cross_target[1]) if cross_target else ""]  # fmt: skip
    notes = [n for n in notes if n]
    system = "\n\n".join(part for part in (system, stage_material, *notes) if part)

    def line(m_agent: str | None, text: str) -> str:
        label = words.user if m_agent is None else names.get(m_agent, m_agent)
        return text if direct else f"{label}{words.colon}{text}"

    lines: list[tuple[str | None, str]] = [(m.agent_id if m.role == "agent" else None, m.content)
                                           for m in sorted(recent, key=lambda m: m.seq)]  # fmt: skip
    if user_text is not None:
        lines.append((None, user_text))
    lines += list(this_turn)
    messages = [ChatMessage(role="system", content=system)]
    for speaker, text in lines:
        role = "assistant" if speaker == agent.id else "user"
        content = text.strip() if role == "assistant" else line(speaker, text.strip())
        if messages[-1].role == role and role == "user":
            messages[-1] = ChatMessage(role="user", content=messages[-1].content + "\n" + content)
        else:
            messages.append(ChatMessage(role=role, content=content))
    if messages[-1].role != "user":
        messages.append(ChatMessage(role="user", content=words.continue_cue))
    window = tuple(m.content for m in recent) + tuple(text for _, text in this_turn)
    checks = ReplyChecks(
        language=language, own_names=(agent.name, *(agent.aliases or [])), other_names=tuple(others),
        user_text=user_text or "", window=window, persona=persona, stage=stage_texts, to_user=cross_target is None,
        scaffolding=(rules, scene, *notes, words.retry_lead, words.lore_title, *words.fixes.values(), words.continue_cue),
    )  # fmt: skip
    request = ModelRequest(messages=messages, purpose=purpose, max_tokens=ACTOR_MAX_TOKENS,
                           model_config_id=agent.model_config_id)  # a member's own model, else the stage's  # fmt: skip
    answered = line(lines[-1][0], lines[-1][1].strip()) if user_text is not None and lines else None
    return ActorPrompt(request=request, checks=checks, answered=answered, notes=tuple(notes))


def add_lore(prompt: ActorPrompt, entries: Sequence[LoreEntry], *, agent_id: str, token_budget: int) -> ActorPrompt:
    """The prompt with the lore entries its own window triggers for ``agent_id`` (what the prompt
    shows: the window, this turn's replies and the line answered; ``scheduling.lore``), as one
    titled block before the closing note. No entry triggered: the prompt unchanged."""
    checks = prompt.checks
    used = tuple(select_lore(entries, [*checks.window, checks.user_text], agent_id, token_budget))
    messages = list(prompt.request.messages)
    if not used or not messages or messages[0].role != "system":
        return prompt
    words = words_for(checks.language)
    block = "\n".join([words.lore_title, *(u.entry.content for u in used)])
    tail = "".join("\n\n" + note for note in prompt.notes)
    head = messages[0].content[: len(messages[0].content) - len(tail)] if tail else messages[0].content
    messages[0] = ChatMessage(role="system", content=head + "\n\n" + block + tail)
    return msgspec.structs.replace(prompt, request=msgspec.structs.replace(prompt.request, messages=messages), lore=used)


def retry_request(request: ModelRequest, problems: Sequence[str], language: str) -> ModelRequest:
    """The same conversation, one short correction at the end of the system message, warmer.
    For a reply in the wrong language or script the required language comes first, in that language."""
    words = words_for(language)
    codes = list(dict.fromkeys(p.split(":", 1)[0].strip() for p in problems))
    fixes = list(dict.fromkeys(words.fixes.get(code, words.generic_fix) for code in codes if code != "wrong_script"))
    sep = "；" if words is ZH else "; "
    correction = words.retry_lead + sep.join(fixes) + ("。" if words is ZH else ".") if fixes else ""
    head = [language_instruction(language)] if "wrong_script" in codes else []
    messages = list(request.messages)
    if messages and messages[0].role == "system":
        # One system message, at the start: some chat templates (llama.cpp's among them) accept no other.
        first = "\n\n".join([*head, messages[0].content, *([correction] if correction else [])])
        messages[0] = ChatMessage(role="system", content=first)
    else:
        messages.insert(0, ChatMessage(role="system", content="\n\n".join([*head, correction])))
    temperature = max(request.temperature or 0.0, RETRY_TEMPERATURE)
    penalty = COPY_RETRY_PENALTY if COPY_RETRY.intersection(codes) else None
    return msgspec.structs.replace(request, messages=messages, temperature=temperature,
                                   presence_penalty=penalty or request.presence_penalty,
                                   frequency_penalty=penalty or request.frequency_penalty)  # fmt: skip
