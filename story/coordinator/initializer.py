"""The initializer: the first world and narrative, built by a model from the agent's persona.

Material is cut as the seed's source compiler does (definition 12,000 chars, opening 3,000,
last 18 messages at 3,000 each, plus the current input; ``story.coordinator.material``), and a
shortened persona is said in the result's diagnostics. It plans no goals: goals are
planned later as intentions, so nothing in the future can be written down as a fact here.
The agent is a protected owner and may not own a hidden thread or a seed.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from story.coordinator.material import (  # noqa: F401 - the caps are part of this module's interface
    DEFINITION_CHARS, HISTORY_MESSAGES, MESSAGE_CHARS, OPENING_CHARS, compose_material,
)
from story.auto_reply.text import is_chinese
from story.coordinator.init_text import first_of_each, text_problems, usable
from story.coordinator.recovery import HistoryMessage
from story.narrative.rebranch import LineDraft
from story.narrative.state import init_narrative_snapshot
from story.narrative.types import EmotionState, Line, NarrativeSnapshot
from story.ports import ChatMessage
from story.tools import bounds as b
from story.tools.bounds import Clue, Id, Name, Summary, Title
from story.tools.common import Diagnostic, StoryContext, StoryModelConfig, Usage
from story.tools.fresh_ids import fresh_ids
from story.tools.structured import call_structured
from story.world.state import WorldInvalid, create_world_snapshot, norm_name
from story.world.types import Background, Foreground, Seed, Undercurrent, WorldPolicy, WorldSnapshot


class PersonaSource(msgspec.Struct, frozen=True):
    name: str
    definition: str
    opening: str = ""


class InitBackground(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: Id
    title: Title
    summary: Summary
    kind: Literal["conflict", "progress"]
    countdown: int


class InitThread(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: Id
    owner: Name
    title: Title
    clue: Clue
    invitation: Clue


class InitEvent(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    id: Id
    title: Title
    summary: Summary


class InitProposal(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    foreground: InitEvent
    backgrounds: list[InitBackground]
    undercurrents: list[InitThread]
    seeds: list[InitThread]
    main: LineDraft
    sub: LineDraft
    emotion_label: b.Label


SEEDS_MAX = 3
COUNTDOWN_MIN, COUNTDOWN_MAX = 1, 6


def init_constraints(policy: WorldPolicy) -> b.Constraints:
    """The world's capacities as list bounds, so a schema-following answer fits the policy."""
    return b.merge(
        b.at_most("backgrounds", policy.backgrounds_max), b.at_most("undercurrents", policy.undercurrents_max),
        b.at_most("seeds", SEEDS_MAX),
        {"backgrounds[].countdown": {"minimum": COUNTDOWN_MIN, "maximum": COUNTDOWN_MAX}},
    )  # fmt: skip


class InitResult(msgspec.Struct, frozen=True):
    world: WorldSnapshot | None
    narrative: NarrativeSnapshot | None
    diagnostics: list[Diagnostic] = []
    usage: Usage = Usage()


def compile_source(persona: PersonaSource, history: list[HistoryMessage], current_input: str) -> str:
    """The initializer's material: the caps per part, no total budget."""
    return compose_material(persona, history, current_input).text


def init_problems(p: InitProposal, protected: str, policy: WorldPolicy) -> list[str]:
    problems = [f"{t.id!r} is owned by the protected character {protected!r}"
                for t in [*p.undercurrents, *p.seeds] if norm_name(t.owner) == norm_name(protected)]
    if len(p.backgrounds) > policy.backgrounds_max:
        problems.append(f"at most {policy.backgrounds_max} backgrounds")
    if len(p.undercurrents) > policy.undercurrents_max:
        problems.append(f"at most {policy.undercurrents_max} undercurrents")
    problems += [f"background {g.id!r} countdown must be 1..6" for g in p.backgrounds
                 if not COUNTDOWN_MIN <= g.countdown <= COUNTDOWN_MAX]
    return problems


def proposal_texts(p: InitProposal) -> list[tuple[str, str]]:
    """(field path, text) of every text the Actor may be shown or a later stage builds on."""
    out = [("foreground.title", p.foreground.title), ("foreground.summary", p.foreground.summary)]
    out += [(f"backgrounds[{i}].{f}", getattr(g, f)) for i, g in enumerate(p.backgrounds) for f in ("title", "summary")]
    for name, items in (("undercurrents", p.undercurrents), ("seeds", p.seeds)):
        out += [(f"{name}[{i}].{f}", getattr(t, f)) for i, t in enumerate(items) for f in ("title", "clue", "invitation")]
    out += [(f"{name}.{f}", getattr(line, f)) for name, line in (("main", p.main), ("sub", p.sub))
            for f in ("theme", "direction", "experience")]  # fmt: skip
    return out


def with_fresh_ids(p: InitProposal, protected: str, material: str) -> InitProposal:
    """Every id distinct (see ``fresh_ids``): nothing in a first world refers to another id. A
    thread or seed owned by the protected character is not taken (no schema can exclude a name),
    nor a background, thread or seed whose text copies the material's labels or loops (``usable``),
    nor a thread whose clue or invitation an earlier one has (``first_of_each``)."""
    mine = lambda t: norm_name(t.owner) == norm_name(protected)  # noqa: E731
    seen: set[str] = set()
    own = lambda t: (t.clue, t.invitation)  # noqa: E731
    told = lambda t: (t.title, t.clue, t.invitation)  # noqa: E731
    threads = lambda items: first_of_each(usable([t for t in items if not mine(t)], told, material), own, seen)  # noqa: E731
    p = msgspec.structs.replace(p, backgrounds=usable(p.backgrounds, lambda g: (g.title, g.summary), material),
                                undercurrents=threads(p.undercurrents), seeds=threads(p.seeds))  # fmt: skip
    ids = iter(fresh_ids([p.foreground.id, *(g.id for g in p.backgrounds), *(t.id for t in p.undercurrents),
                          *(t.id for t in p.seeds)], ()))  # fmt: skip
    rename = lambda items: [msgspec.structs.replace(x, id=next(ids)) for x in items]  # noqa: E731
    foreground = msgspec.structs.replace(p.foreground, id=next(ids))
    return msgspec.structs.replace(p, foreground=foreground, backgrounds=rename(p.backgrounds),
                                   undercurrents=rename(p.undercurrents), seeds=rename(p.seeds))  # fmt: skip


SYSTEM = (
    "You set up an interactive story around the character {name}. From the material, describe: the current "
    "foreground event (what is happening now), up to {bg} offstage backgrounds with countdowns 1-6, up to {uc} hidden "
    "undercurrents and up to {seeds} seeds for later, each owned by an existing person or group of the material (never "
    "by {name}), and a main and a sub line. Only established facts may be stated as facts; future developments are "
    "intentions, never things that already happened. Ids: short unique slugs (at most {ids} characters). Keep texts "
    "short: titles and owners at most {title} characters, summaries {summary}, clues and invitations {clue}; a line's "
    "theme {theme}, direction {direction}, experience {experience}; the emotion label one word. Write all text in "
    "{lang}. Answer in JSON."
)

SYSTEM_ZH = (
    "你要围绕角色{name}搭起一个互动故事。根据材料写出：此刻正在发生的前景事件（foreground），最多{bg}个场外背景"
    "（backgrounds，倒计时 countdown 为 1-6），最多{uc}条隐藏暗流（undercurrents）和最多{seeds}颗以后再用的种子"
    "（seeds），每条都属于材料里已有的人或群体（owner，不能是{name}），再写一条主线（main）和一条副线（sub）。"
    "只有已经确定的事才能当作事实写；以后的发展只是打算，不是已经发生的事。材料里还没有对话时，此刻的事件就是"
    "{name}和用户刚开始聊天。用你自己的话写：不要照抄材料里的设定、标签或用户的原话，每句话只写一次。"
    "id 用简短且不重复的英文短词（最多{ids}个字符）。文字要短：标题和 owner 最多{title}字，summary 最多{summary}字，"
    "clue 和 invitation 最多{clue}字；主副线的 theme 最多{theme}字，direction 最多{direction}字，experience 最多"
    "{experience}字；情绪标签（emotion_label）用一个词。全部文字用简体中文。只回答 JSON。"
)
"""The initializer's instructions for a Chinese conversation, in Chinese (as the actor's are): in
English, Qwen2.5-0.5B copied the material's headings and the persona's labels into its worlds."""


async def initialize_story(model: StoryModelConfig, ctx: StoryContext, persona: PersonaSource,
                           history: list[HistoryMessage], current_input: str, seed: int = 731) -> InitResult:
    """``world``/``narrative`` are None when the model was unavailable or invalid twice."""
    policy = WorldPolicy(protected_owners=[persona.name])
    system = (SYSTEM_ZH if is_chinese(ctx.language) else SYSTEM).format(
        name=persona.name, lang=ctx.language, bg=policy.backgrounds_max, uc=policy.undercurrents_max, seeds=SEEDS_MAX,
        ids=b.ID_CHARS, title=b.TITLE_CHARS, summary=b.SUMMARY_CHARS, clue=b.CLUE_CHARS, theme=b.THEME_CHARS,
        direction=b.DIRECTION_CHARS, experience=b.EXPERIENCE_CHARS,
    )  # fmt: skip
    source = compose_material(persona, history, current_input, language=ctx.language)
    msgs = [ChatMessage("system", system), ChatMessage("user", source.text)]
    def check(v: InitProposal) -> list[str]:
        taken = with_fresh_ids(v, persona.name, source.text)
        return [*init_problems(taken, persona.name, policy), *text_problems(proposal_texts(taken), source.text)]

    out = await call_structured(model, ctx, "story_init.world", msgs, InitProposal, check,
                                constraints=init_constraints(policy))  # fmt: skip
    if not out.ok:
        return InitResult(None, None, [*source.diagnostics, *out.diagnostics, Diagnostic("story_init_failed")], out.usage)
    p: InitProposal = with_fresh_ids(out.value, persona.name, source.text)
    notes = [*source.diagnostics, *out.diagnostics, *_left_out(out.value, p)]
    try:
        world = create_world_snapshot(
            Foreground(p.foreground.id, p.foreground.title, p.foreground.summary, participants=[persona.name]),
            backgrounds=[Background(g.id, g.title, g.summary, g.kind, g.countdown) for g in p.backgrounds],
            undercurrents=[Undercurrent(t.id, t.owner, t.title, t.clue, t.invitation) for t in p.undercurrents],
            seeds=[Seed(t.id, t.owner, t.title, t.clue, t.invitation) for t in p.seeds],
            policy=policy, seed=seed,
        )
    except WorldInvalid as exc:
        return InitResult(None, None, [*notes, Diagnostic("story_init_failed", str(exc))], out.usage)
    narrative = init_narrative_snapshot(Line(p.main.theme, p.main.direction, p.main.experience),
                                        Line(p.sub.theme, p.sub.direction, p.sub.experience))
    narrative = msgspec.structs.replace(narrative, emotion=EmotionState(label=p.emotion_label or "curious"))
    return InitResult(world, narrative, notes, out.usage)


def _left_out(asked: InitProposal, taken: InitProposal) -> list[Diagnostic]:
    """How many backgrounds, undercurrents and seeds of the answer the world did not take."""
    counts = {part: len(getattr(asked, part)) - len(getattr(taken, part)) for part in ("backgrounds", "undercurrents", "seeds")}
    if not any(counts.values()):
        return []
    said = ", ".join(f"{n} {part}" for part, n in counts.items() if n)
    return [Diagnostic("story_init_parts_left_out", f"the first world left out {said} (owned by the protected character, "
                       "a copy of another thread, or text that copies the material or loops)", counts)]
