"""``PovPrepareTurnTool``: understand the user's action, then run the world's clocks and dice.

A free-text action is classified by the model (normal / cue / signal); a host-provided intent
or a saved choice skips the model. Targets must name an existing event or a delivered
invitation: an arbitrary string can never create a destination.
"""

from __future__ import annotations

import hashlib
from typing import Literal

import msgspec

from story.ports import ChatMessage
from story.tools import bounds as b
from story.tools.common import (
    Diagnostic, InvalidToolInput, PendingTurnUnresolved, StoryContext, StoryModelConfig,
    StoryTool, ToolHooks, Usage,
)
from story.tools.material import ACTION_LIMIT, bound_material
from story.tools.structured import call_structured
from story.world.mechanics import run_mechanics
from story.world.stage import StoryPreparedTurn, build_stage, restore_prepared
from story.world.types import Intent, PendingTurn, WorldSnapshot


class PrepareAction(msgspec.Struct, frozen=True):
    type: Literal["free", "intent", "choice"]
    text: str = ""
    intent: Intent | None = None
    index: int | None = None


class PrepareInput(msgspec.Struct, frozen=True):
    context: StoryContext
    snapshot: WorldSnapshot
    action: PrepareAction
    world_context: str = ""


class ActionClassification(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One field decides: ``target_id`` null stays in the current event (normal), an available
    event's id turns to it (cue), the delivered invitation's id answers it (signal). With the ids as a
    per-request ``enum``, every answer a schema-following model can give is a legal action; a
    separate ``kind`` field could contradict its target (normal with a target, cue without one)."""

    target_id: b.Id | None
    companion_follows: bool | None


def action_key(action: PrepareAction) -> str:
    return hashlib.sha256(msgspec.json.encode(action, order="sorted")).hexdigest()[:32]


def cue_targets(w: WorldSnapshot) -> dict[str, str]:
    out = {b.id: b.title for b in w.backgrounds}
    out.update({u.id: u.title for u in w.undercurrents if u.stage in (2, 3)})
    return out


def signal_target(w: WorldSnapshot) -> str | None:
    d = w.pending_signal_demand
    return d.undercurrent_id if d is not None and d.delivered else None


def action_targets(w: WorldSnapshot) -> list[str]:
    """What a free action can turn to: the delivered invitation first, then the available events."""
    sig = signal_target(w)
    return list(dict.fromkeys([*([sig] if sig else []), *cue_targets(w)]))


def classified_intent(w: WorldSnapshot, c: ActionClassification) -> Intent:
    """The delivered invitation's id answers it (signal), even when the same thread is also reachable."""
    if c.target_id is None:
        return Intent("normal")
    return Intent("signal" if c.target_id == signal_target(w) else "cue", c.target_id, c.companion_follows)


def intent_problems(w: WorldSnapshot, intent: Intent) -> list[str]:
    if intent.kind == "normal":
        return [] if intent.target_id is None else ["a normal action has no target_id"]
    if intent.kind == "cue" and intent.target_id not in cue_targets(w):
        return [f"cue target_id {intent.target_id!r} is not an available event"]
    if intent.kind == "signal" and (intent.target_id is None or intent.target_id != signal_target(w)):
        return [f"signal target_id {intent.target_id!r} is not a delivered invitation"]
    return []


def _classify_messages(w: WorldSnapshot, text: str, lang: str, world_context: str) -> list[ChatMessage]:
    targets = "\n".join(f"- {i}: {t}" for i, t in cue_targets(w).items()) or "(none)"
    sig = signal_target(w)
    invitation = f"{sig}: {w.pending_signal_demand.invitation}" if sig and w.pending_signal_demand else "(none)"
    system = (
        "You classify a role-play user's action. target_id null: the user stays in the current event. "
        "target_id = the id of an available event: the user actively turns to it. "
        "target_id = the delivered invitation's id: the user answers the invitation. "
        "Only ids listed are valid; when unsure answer null. "
        "companion_follows: whether the companions follow a transition, else null. Answer in JSON."
    )
    user = (
        f"Language: {lang}\nCurrent event: {w.foreground.title} ({w.foreground.phase})\n"
        f"Companions: {', '.join(w.foreground.participants) or '(none)'}\n"
        f"Available events:\n{targets}\nDelivered invitation: {invitation}\n"
        f"Story material:\n{world_context}\n\nUser action: {text}"
    )
    return [ChatMessage("system", system), ChatMessage("user", user)]


class PovPrepareTurnTool(StoryTool[PrepareInput, StoryPreparedTurn]):
    name = "pov_prepare_turn"

    def __init__(self, model: StoryModelConfig | None = None, hooks: ToolHooks | None = None) -> None:
        super().__init__(hooks)
        self.model = model

    async def _run(self, inp: PrepareInput) -> StoryPreparedTurn:
        ctx, w, act = inp.context, inp.snapshot, inp.action
        key = action_key(act)
        if w.pending is not None:
            if w.pending.turn_id == ctx.turn_id and w.pending.action_key == key:
                restored = restore_prepared(w)
                return msgspec.structs.replace(restored, diagnostics=[Diagnostic("prepare_restored")])
            raise PendingTurnUnresolved(w.pending.turn_id, ctx.turn_id)
        if w.last_committed_turn_id == ctx.turn_id:
            raise InvalidToolInput(self.name, f"turn {ctx.turn_id!r} is already committed")
        diags: list[Diagnostic] = []
        usage = Usage()
        text = act.text
        if act.type == "choice":
            if act.index is None or not 0 <= act.index < len(w.choices):
                raise InvalidToolInput(self.name, f"choice index {act.index} out of range")
            choice = w.choices[act.index]
            text = choice.text
            sig = signal_target(w)
            intent = Intent("signal", sig) if choice.is_signal and sig else Intent("normal")
        elif act.type == "intent":
            intent = act.intent or Intent("normal")
            problems = intent_problems(w, intent)
            if problems:
                raise InvalidToolInput(self.name, "; ".join(problems))
        elif self.model is None:
            intent = Intent("normal")
        elif not action_targets(w):  # nothing to turn to: only "normal" is possible, no need to ask
            intent = Intent("normal")
            diags.append(Diagnostic("classification_skipped", "no available event or delivered invitation"))
        else:
            material, diags = bound_material(inp.world_context, ACTION_LIMIT, self.name)
            out = await call_structured(
                self.model, ctx, "story.prepare", _classify_messages(w, text, ctx.language, material),
                ActionClassification, lambda c: intent_problems(w, classified_intent(w, c)),
                constraints=b.one_of("target_id", action_targets(w)),
            )
            usage, diags = out.usage, [*diags, *out.diagnostics]
            if out.ok:
                intent = classified_intent(w, out.value)
            else:
                intent = Intent("normal")
                diags.append(Diagnostic("classification_defaulted_normal"))
        m = run_mechanics(w, intent, text)
        pending = PendingTurn(ctx.turn_id, key, intent, text, baseline=w)
        snap = msgspec.structs.replace(m.snapshot, pending=pending)
        return StoryPreparedTurn(
            turn_id=ctx.turn_id, snapshot=snap, intent=m.intent, user_text=text, flags=m.flags,
            stage=build_stage(m.snapshot, m.intent, text, m.surfacing, None), surfacing=m.surfacing,
            dice=m.dice, events=m.events, diagnostics=diags + m.diagnostics, usage=usage,
        )
