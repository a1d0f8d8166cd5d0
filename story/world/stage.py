"""The Writer's view of a prepared turn, and restoring a saved prepared turn without re-rolling.

The stage is all the actor ever sees of the world: the current event and phase, the user's
action to honour, chosen offstage influences, at most ``surface_budget`` undercurrent clues and
a pending invitation. Hidden threads, seeds, ids of hidden things and counters stay out.
"""

from __future__ import annotations

import msgspec
from msgspec import UNSET, UnsetType

from story.auto_reply.text import is_chinese
from story.tools.common import Diagnostic, StoryError, Usage
from story.world.mechanics import DiceRoll, WorldEvent, run_mechanics
from story.world.types import BackgroundKind, Intent, WorldSnapshot

OFFSTAGE_LIMIT = 2

WRITER_STAGE_INSTRUCTIONS = """\
[STORY STAGE RULES]
The system message [CURRENT STORY STAGE] describes the scene you are writing. Follow it:
- Continue the current event in its phase: "start" opens it, "develop" complicates it, "end" resolves it.
- Honour the user's action as stated: it has already happened, so write what your character does or says in
  answer, without repeating the user's words; never decide, speak or act for the user beyond it.
- Offstage influences may enter only as sounds, reports, messages or visible consequences.
- Clues are hints: show them as atmosphere or small signs, never explain the hidden cause.
- If an invitation is given, let it actually reach the user in the scene; the user may refuse it.
- A narrative goal is a direction to try, not a fact that already happened.
- Never mention the stage, goals, rules or any system mechanics in your reply.
"""

WRITER_STAGE_INSTRUCTIONS_ZH = """\
[STORY STAGE RULES]
系统消息 [CURRENT STORY STAGE] 描述你正在写的场景，照着它写：
- 接着当前事件的阶段写："start" 是开场，"develop" 是推进和变化，"end" 是收尾。
- 用户的动作（honour_actions）已经发生：写你的角色接下来做什么、说什么，不要复述用户的话；也不要替用户决定、说话或行动。
- 场外影响（offstage）只能以声音、传闻、消息或看得见的后果出现。
- 线索（clues）只是暗示：写成气氛或小细节，不要解释背后的原因。
- 如果有邀请（invitation），让它在场景里真正递到用户面前；用户可以拒绝。
- 叙事目标是要尝试的方向，不是已经发生的事。
- 回复里不要提到舞台、目标、规则或任何系统机制。
"""


def writer_stage_instructions(language: str) -> str:
    """The Writer's stage rules in the conversation's language (Chinese as the actor prompt's is, else English):
    a small model copies a language it is not writing in into its reply."""
    return WRITER_STAGE_INSTRUCTIONS_ZH if is_chinese(language) else WRITER_STAGE_INSTRUCTIONS


class StageEvent(msgspec.Struct, frozen=True):
    id: str
    title: str
    summary: str
    phase: str


class StoryStage(msgspec.Struct, frozen=True):
    event: StageEvent
    honour_actions: list[str]
    offstage: list[str]
    clues: list[str]
    invitation: str | None = None
    companions_follow: bool | None = None


class StoryPreparedTurn(msgspec.Struct, frozen=True):
    turn_id: str
    snapshot: WorldSnapshot  # carries ``pending`` with the baseline
    intent: Intent
    user_text: str
    flags: list[str]
    stage: StoryStage
    surfacing: list[str]
    dice: list[DiceRoll]
    events: list[WorldEvent]
    diagnostics: list[Diagnostic] = []
    usage: Usage = Usage()
    bias: BackgroundKind | None = None


class PreparedMismatch(StoryError):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"saved prepared turn does not replay: {reason}")


def _offstage(w: WorldSnapshot, bias: BackgroundKind | None) -> list[str]:
    cands: list[tuple[str, str]] = [
        ("conflict" if i.kind == "obstacle" else "progress", i.text) for i in w.pending_injections
    ]
    cands += [(b.kind, f"Approaching: {b.title}") for b in w.backgrounds if b.countdown <= 1]
    if bias is not None:
        cands.sort(key=lambda c: c[0] != bias)  # stable: bias only reorders equals
    return [text for _, text in cands[:OFFSTAGE_LIMIT]]


def build_stage(w: WorldSnapshot, intent: Intent, user_text: str, surfacing: list[str],
                bias: BackgroundKind | None) -> StoryStage:
    fg = w.foreground
    by_id = {u.id: u for u in w.undercurrents}
    clues = [by_id[i].clue for i in surfacing[: w.policy.surface_budget] if i in by_id]
    demand = w.pending_signal_demand
    return StoryStage(
        event=StageEvent(fg.id, fg.title, fg.summary, fg.phase),
        honour_actions=[user_text] if user_text else [],
        offstage=_offstage(w, bias),
        clues=clues,
        invitation=demand.invitation if demand and not demand.delivered else None,
        companions_follow=intent.companion_follows,
    )


def project_stage(prepared: StoryPreparedTurn, bias: BackgroundKind | None = None) -> StoryPreparedTurn:
    """Re-project with a conflict/progress preference; the bias is recorded for restore."""
    pending = prepared.snapshot.pending
    snap = prepared.snapshot if pending is None else msgspec.structs.replace(
        prepared.snapshot, pending=msgspec.structs.replace(pending, bias=bias))
    stage = build_stage(prepared.snapshot, prepared.intent, prepared.user_text, prepared.surfacing, bias)
    return msgspec.structs.replace(prepared, snapshot=snap, stage=stage, bias=bias)


def restore_prepared(snapshot: WorldSnapshot, bias: BackgroundKind | None | UnsetType = UNSET,
                     saved_stage: StoryStage | None = None) -> StoryPreparedTurn:
    """Rebuild the prepared turn from its baseline; never draws new randomness.

    ``bias`` only asserts: when given (``None`` included, meaning "no preference was projected")
    it must equal the bias the prepared turn recorded, else ``PreparedMismatch``; it never
    re-chooses. Left out, nothing about the bias is asserted and the recorded one is used.
    The mechanics are replayed from the recorded baseline and must reproduce the saved
    snapshot (and stage, if given) exactly, so an edited saved state cannot pass as prepared.
    """
    pending = snapshot.pending
    if pending is None:
        raise PreparedMismatch("snapshot has no pending prepared turn")
    if bias is not UNSET and bias != pending.bias:
        raise PreparedMismatch(f"bias {bias!r} differs from recorded {pending.bias!r}")
    m = run_mechanics(pending.baseline, pending.intent, pending.user_text)
    if msgspec.structs.replace(m.snapshot, pending=pending) != snapshot:
        raise PreparedMismatch("replayed world differs from the saved prepared world")
    stage = build_stage(m.snapshot, m.intent, pending.user_text, m.surfacing, pending.bias)
    if saved_stage is not None and saved_stage != stage:
        raise PreparedMismatch("saved stage differs from the replayed stage")
    return StoryPreparedTurn(
        turn_id=pending.turn_id, snapshot=snapshot, intent=m.intent, user_text=pending.user_text,
        flags=m.flags, stage=stage, surfacing=m.surfacing, dice=m.dice, events=m.events,
        diagnostics=m.diagnostics, bias=pending.bias,
    )
