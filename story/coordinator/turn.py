"""One agent turn with Story on: adopt the previous saved reply, prepare, plan, deal, project.

The app calls ``before_actor`` before the actor runs and ``finalize_turn`` after the actor's
reply is saved, then writes the returned bytes with one compare-and-swap on the revision it
read. The plot only advances on what the saved reply shows: the reply of this turn is
adopted at the start of the *next* turn, re-read from the database by id (or by the host right
after this turn, ``adopt_pending``). With ``deferred`` the settle pass and the plan cycle run in
``settle_beside`` while the actor writes, so the prepare is the one model call in front of it;
``initialize_ahead`` builds a scope's first state before its agent first speaks.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from story.coordinator.compact import STEPS as COMPACT_STEPS, compact, halted
from story.coordinator.envelope import (
    CONTINUE_TEXT_MAX, ActionKind, EvidenceRef, PendingActor, Projection, StateTooLarge, StoryState, action_ref,
    bind_action, content_hash, deserialize_state, serialize_state,
)
from story.coordinator.events import SettleRun, add_evidence, close_event, quarantine_pending, settle_closed, unresolved
from story.coordinator.initializer import PersonaSource, initialize_story
from story.coordinator.material import TurnMaterial, turn_material
from story.coordinator.plan_wait import after_plan, plan_due
from story.coordinator.recovery import HistoryMessage, decide_start, saved_message_ok
from story.ports import ChatMessage, MessageReader
from story.tools.advance_world import AdvanceInput, PovAdvanceWorldTool, WriterOutput
from story.tools.common import Diagnostic, StoryContext, StoryModelConfig, StoryError, Usage
from story.tools.deal_beat import DealInput, NarrativeDealBeatTool
from story.tools.narrative_tools import NarrativePlanCycleTool, NarrativeRebranchTool, NarrativeSettleEventTool, PlanInput
from story.tools.prepare_turn import PovPrepareTurnTool, PrepareAction, PrepareInput
from story.world.stage import PreparedMismatch, project_stage, restore_prepared
from story.world.types import Intent

replace = msgspec.structs.replace
STAGE_HEADER = "[CURRENT STORY STAGE]"

Outcome = Literal["prepared", "read_only", "no_story", "advance_pending"]
CONTINUE_INSTRUCTION = "Continue the current scene from where the last reply stopped."
# Retry caps, counted in turns in a row whose Story failed (``BeforeActorInput.prior_failures``).
# World settlement of the pending reply: the turn fails while it is retried (the seed's recovery
# table); the third failure gives the reply up (its evidence is quarantined, the world goes back
# to the prepared turn's baseline) so the Story moves on. Initialisation: three attempts, then
# one every ``INIT_RETRY_EVERY`` turns, so a broken model is not paid for on every message.
ADVANCE_RETRY_CAP = 3
INIT_RETRY_CAP = 3
INIT_RETRY_EVERY = 5


class BeforeActorInput(msgspec.Struct, frozen=True):
    context: StoryContext  # turn_id: a stable id of this agent turn (e.g. user message id + agent id)
    agent_id: str
    persona: PersonaSource
    saved_state: bytes | None
    user_message_id: str
    user_text: str
    source_position: int  # the user message's per-conversation seq
    history: list[HistoryMessage]  # visible messages before the current user message, oldest first
    seed: int = 731
    # Continue: no new user message. ``user_message_id`` is the last visible user message the
    # reply continues from, ``user_text`` the continue instruction (a synthetic action; blank →
    # ``CONTINUE_INSTRUCTION``), ``source_position`` the conversation's message position, so a
    # run of continues still advances the source although the user message count does not.
    continuation: bool = False
    # Turns in a row whose Story failed before this one (the host's failure count; 0 when unknown).
    prior_failures: int = 0
    # The settle pass and the plan cycle leave the actor's path: the host runs ``settle_beside``
    # while the actor writes and awaits it before ``finalize_turn``. Events closed at adoption or
    # by this input are then still unresolved when this turn deals (the deal holds, as it would
    # for an unknown settlement). A scope's first turn still plans in front (its first beat).
    deferred: bool = False


class BeforeActorResult(msgspec.Struct):
    outcome: Outcome
    guidance: ChatMessage | None = None  # the extra system message for the actor; never trimmed
    candidate: StoryState | None = None  # state to finalize after the actor's reply is saved
    projection: Projection | None = None
    write: bool = False
    diagnostics: list[Diagnostic] = []
    tool_calls: list[str] = []
    usage: Usage = Usage()
    # Continue: the pending reply is anchored to the user message it continues from (its saved
    # content's hash), not to the synthetic instruction, so the next turn can still adopt it.
    anchor_content_hash: str | None = None
    action_kind: ActionKind = "user"
    continue_text: str | None = None  # the Continue instruction this turn honoured
    # Deferred: the settings (adoption's, this turn's) ``settle_beside`` uses; None when done.
    beside: tuple[str, str] | None = None


class AdoptResult(msgspec.Struct):
    payload: bytes | None  # the adopted state (no pending reply left), or None: adopt in the turn
    diagnostics: list[Diagnostic] = []
    tool_calls: list[str] = []
    usage: Usage = Usage()
    message_id: str | None = None


class FinalizeResult(msgspec.Struct, frozen=True):
    status: Literal["waiting_for_acceptance", "failed", "state_too_large"]
    payload: bytes | None
    diagnostics: list[Diagnostic] = []


def stage_message(projection: Projection) -> ChatMessage:
    body = msgspec.json.encode({"stage": projection.stage, "narrative": projection.narrative}).decode()
    return ChatMessage("system", f"{STAGE_HEADER}\n{body}")


def stage_texts(projection: Projection) -> list[str]:
    """The stage's own texts the Actor is shown (the world's and the plot's words, not the user's
    action): a reply that recites one at length quotes its prompt (``app.turns.quality``)."""
    stage, beat = projection.stage, projection.narrative
    goal = [beat.pending.gist, beat.pending.reward] if beat.pending else []
    texts = [stage.event.title, stage.event.summary, *stage.offstage, *stage.clues, stage.invitation or "",
             beat.main_direction, beat.sub_direction, *goal]  # fmt: skip
    return [t for t in dict.fromkeys(texts) if t.strip()]


def finalize_turn(result: BeforeActorResult, actor_message_id: str, user_message_id: str, user_text: str,
                  max_state_bytes: int = 60_000) -> FinalizeResult:
    """Pure: the bytes to CAS-write after the actor's reply was saved (no text is copied: the
    user's action is a reference to ``user_message_id``, whose saved content is ``user_text``).

    Over ``max_state_bytes`` settled history is compacted step by step; if it still does not fit,
    the bytes of a halted state (status ``state_too_large``, no pending reply) are returned, so
    the next turn neither re-adopts this reply nor calls a model again."""
    if not result.write or result.candidate is None or result.projection is None:
        return FinalizeResult("failed", None, [Diagnostic("story_not_writable", result.outcome)])
    anchor = result.anchor_content_hash or content_hash(user_text)
    if result.action_kind == "continue":
        pa = PendingActor(actor_message_id, user_message_id, anchor, result.projection, "continue",
                          continue_text=result.continue_text or CONTINUE_INSTRUCTION)
    else:
        pa = PendingActor(actor_message_id, user_message_id, anchor, result.projection,
                          action=action_ref(user_message_id, user_text))
    state = replace(result.candidate, status="waiting_for_acceptance", pending_actor=pa)
    diagnostics: list[Diagnostic] = []
    for step in range(len(COMPACT_STEPS) + 1):
        try:
            return FinalizeResult("waiting_for_acceptance", serialize_state(state, max_state_bytes), diagnostics)
        except StateTooLarge as exc:
            if step == len(COMPACT_STEPS):
                too_large = Diagnostic("state_too_large", str(exc), {"size": exc.size, "limit": exc.limit})
                try:
                    return FinalizeResult("state_too_large", serialize_state(halted(state), max_state_bytes),
                                          [*diagnostics, too_large])
                except StateTooLarge:
                    return FinalizeResult("failed", None, [*diagnostics, too_large])
            diagnostics.append(Diagnostic("state_compacted", str(exc), {"step": step, "size": exc.size}))
            state = compact(state, step)
    raise AssertionError("unreachable")


class StoryCoordinator:
    def __init__(self, model: StoryModelConfig, reader: MessageReader, init_model: StoryModelConfig | None = None) -> None:
        self.model, self.reader, self.init_model = model, reader, init_model or model
        self.prepare, self.advance = PovPrepareTurnTool(model), PovAdvanceWorldTool(model)
        self.plan, self.deal = NarrativePlanCycleTool(model), NarrativeDealBeatTool()
        self.settle, self.rebranch = NarrativeSettleEventTool(model), NarrativeRebranchTool(model)

    async def before_actor(self, inp: BeforeActorInput) -> BeforeActorResult:
        out = BeforeActorResult("no_story")
        if inp.continuation:
            inp = self._continuation(inp, out)
        state = None
        if inp.saved_state is not None:
            try:
                state = deserialize_state(inp.saved_state, inp.agent_id)
            except (StoryError, msgspec.DecodeError, msgspec.ValidationError) as exc:
                out.diagnostics.append(Diagnostic("story_state_unreadable", str(exc)[:300]))
        if state is not None and state.status == "state_too_large":
            out.diagnostics.append(Diagnostic("state_too_large", "the Story is halted for this scope until it is reset"))
            return out
        decision = decide_start(state, inp.history, inp.agent_id, inp.source_position)
        material = turn_material(inp.persona, inp.history, inp.user_text, inp.context.language)  # adoption never sees the new input
        out.diagnostics += material.diagnostics
        if decision == "adopt" and state is not None:
            state = await self._adopt(state, inp, out, material.past_action)
            if out.outcome == "advance_pending":
                return out
            if state is None:
                decision = "reinitialize"
        if decision in ("fresh", "reinitialize", "read_only"):
            if not self._may_init(inp, out):
                return out
            init = await initialize_story(self.init_model, inp.context, inp.persona, inp.history, inp.user_text, inp.seed)
            out.tool_calls.append("story_init:" + ("ok" if init.world else "failed"))
            out.diagnostics += init.diagnostics
            out.usage = out.usage.plus(init.usage)
            if init.world is None or init.narrative is None:
                return out
            old_q, old_ids = (state.quarantine, state.quarantined_ids) if state is not None else ([], [])
            state = StoryState(inp.agent_id, init.world, init.narrative, source_position=inp.source_position,
                               quarantine=old_q, quarantined_ids=old_ids)
        assert state is not None
        await self._prepare(state, inp, out, material, initialized=decision in ("fresh", "reinitialize", "read_only"))
        out.write = out.outcome == "prepared" and decision != "read_only"
        if decision == "read_only" and out.outcome == "prepared":
            out.outcome = "read_only"
        return out

    @staticmethod
    def _may_init(inp: BeforeActorInput, out: BeforeActorResult) -> bool:
        n = inp.prior_failures
        if n < INIT_RETRY_CAP or (n - INIT_RETRY_CAP) % INIT_RETRY_EVERY == INIT_RETRY_EVERY - 1:
            return True
        out.diagnostics.append(Diagnostic("story_init_backoff", f"{n} failed turns in a row; retried every "
                                          f"{INIT_RETRY_EVERY} turns", {"failures": n}))
        return False

    async def adopt_pending(self, inp: BeforeActorInput, max_state_bytes: int = 60_000) -> AdoptResult:
        """The adoption step alone, right after the turn that saved the pending reply (the app
        runs it in the background): the reply's saved text advances the world now, so the next
        turn only prepares. ``inp.history`` ends with the pending reply; nothing new is read.
        The result is the state the next ``before_actor`` would have adopted, or ``None``."""
        out = BeforeActorResult("no_story")
        try:
            state = deserialize_state(inp.saved_state, inp.agent_id) if inp.saved_state else None
        except (StoryError, msgspec.DecodeError, msgspec.ValidationError) as exc:
            return AdoptResult(None, [Diagnostic("story_state_unreadable", str(exc)[:300])])
        if state is None or decide_start(state, inp.history, inp.agent_id, state.source_position) != "adopt":
            return AdoptResult(None, [Diagnostic("nothing_to_adopt")])
        material = turn_material(inp.persona, inp.history, "", inp.context.language)
        out.diagnostics += material.of("action")
        adopted = await self._adopt(state, inp, out, material.past_action)
        if adopted is None or out.outcome == "advance_pending":
            return AdoptResult(None, out.diagnostics, out.tool_calls, out.usage)
        try:
            payload = serialize_state(adopted, max_state_bytes)
        except StateTooLarge as exc:
            return AdoptResult(None, [*out.diagnostics, Diagnostic("state_too_large", str(exc))], out.tool_calls, out.usage)
        return AdoptResult(payload, out.diagnostics, out.tool_calls, out.usage, adopted.accepted_message_id)

    async def settle_beside(self, inp: BeforeActorInput, result: BeforeActorResult) -> None:
        """The deferred settle pass and plan cycle of a prepared turn (``inp`` as given to
        ``before_actor``), run while the actor writes; folded into ``result`` in one step at the
        end, so a cancelled run leaves the result as it was (the events stay queued)."""
        if result.beside is None or result.candidate is None:
            return
        past, setting = result.beside
        if inp.continuation:
            inp = self._continuation(inp, BeforeActorResult("no_story"))
        side = BeforeActorResult("prepared")
        state = await self._settle(result.candidate, inp, side, past)
        result.candidate = await self._plan_if_needed(state, inp.context, side, setting)
        result.tool_calls += side.tool_calls
        result.diagnostics += side.diagnostics
        result.usage = result.usage.plus(side.usage)
        result.beside = None

    async def initialize_ahead(self, inp: BeforeActorInput, max_state_bytes: int = 60_000) -> AdoptResult:
        """A scope's initialisation (and first plan cycle) before its agent first speaks: the app
        runs it in the background for a group's agents that have no Story yet, so their first
        turn only prepares. No user input is read (``inp.user_text`` is ignored): the world comes
        from the persona and the history so far. ``None`` payload: the turn initialises itself."""
        out = BeforeActorResult("no_story")
        init = await initialize_story(self.init_model, inp.context, inp.persona, inp.history, "", inp.seed)
        calls, usage = ["story_init:" + ("ok" if init.world else "failed")], init.usage
        if init.world is None or init.narrative is None:
            return AdoptResult(None, init.diagnostics, calls, usage)
        state = StoryState(inp.agent_id, init.world, init.narrative, source_position=inp.source_position)
        material = turn_material(inp.persona, inp.history, "", inp.context.language)
        out.diagnostics += material.of("plan")
        state = await self._plan_if_needed(state, inp.context, out, material.past_plan)
        try:
            payload = serialize_state(state, max_state_bytes)
        except StateTooLarge as exc:
            return AdoptResult(None, [*init.diagnostics, Diagnostic("state_too_large", str(exc))], calls, usage)
        return AdoptResult(payload, [*init.diagnostics, *out.diagnostics], [*calls, *out.tool_calls], usage.plus(out.usage))

    @staticmethod
    def _continuation(inp: BeforeActorInput, out: BeforeActorResult) -> BeforeActorInput:
        """A Continue turn: a synthetic action keyed by the source position, anchored to the
        last real user message (whose saved content the next adoption checks)."""
        text = inp.user_text.strip()[:CONTINUE_TEXT_MAX]
        if not text:
            text = CONTINUE_INSTRUCTION
            out.diagnostics.append(Diagnostic("continue_default_instruction"))
        anchor = next((m for m in reversed(inp.history) if m.role == "user" and not m.deleted
                       and m.message_id == inp.user_message_id), None)
        out.action_kind, out.continue_text = "continue", text
        out.anchor_content_hash = content_hash(anchor.content) if anchor is not None else None
        ctx = replace(inp.context, turn_id=f"{inp.context.turn_id}#continue@{inp.source_position}")
        return replace(inp, context=ctx, user_text=text)

    async def _adopt(self, state: StoryState, inp: BeforeActorInput, out: BeforeActorResult, setting: str) -> StoryState | None:
        pa = state.pending_actor
        assert pa is not None
        saved = (await self.reader.read([pa.message_id])).get(pa.message_id)
        if not saved_message_ok(saved, inp.agent_id):
            out.diagnostics.append(Diagnostic("pending_actor_missing", "", {"message_id": pa.message_id}))
            return None
        state = self._with_action_text(state, inp, out)
        if state is None:
            return None
        pa = state.pending_actor
        assert pa is not None
        try:
            prepared = restore_prepared(state.world, saved_stage=pa.projection.stage)
        except PreparedMismatch as exc:
            out.diagnostics.append(Diagnostic("prepared_mismatch", exc.reason))
            return None
        actx = replace(inp.context, turn_id=prepared.turn_id)
        adv = await self.advance.execute(AdvanceInput(actx, prepared, WriterOutput(saved.content), setting))
        out.tool_calls.append(f"pov_advance_world:{adv.outcome}")
        out.diagnostics += adv.diagnostics
        out.usage = out.usage.plus(adv.usage)
        ref = EvidenceRef(saved.message_id, content_hash(saved.content), source_position=state.source_position,
                          action_kind=pa.action_kind, action=pa.action)
        if adv.outcome == "pending":
            if inp.prior_failures + 1 < ADVANCE_RETRY_CAP:
                out.outcome = "advance_pending"
                return state
            reason = f"world settlement of reply {saved.message_id} failed {inp.prior_failures + 1} times"
            out.diagnostics.append(Diagnostic("advance_abandoned", reason, {"message_id": saved.message_id}))
            baseline = state.world.pending.baseline if state.world.pending is not None else state.world
            state = quarantine_pending(state, prepared.snapshot.foreground.id, ref, reason, out.diagnostics[-5:])
            return replace(state, world=baseline, pending_actor=None, status="accepted")
        state = add_evidence(state, prepared.snapshot.foreground.id, ref)
        if prepared.stage.event.phase == "end":
            state = close_event(state, prepared.snapshot.foreground.id, interrupted=False)
        return replace(state, world=adv.snapshot, pending_actor=None, accepted_message_id=saved.message_id, status="accepted")

    @staticmethod
    def _with_action_text(state: StoryState, inp: BeforeActorInput, out: BeforeActorResult) -> StoryState | None:
        """Re-read the pending turn's action from the saved user message (or its Continue text)."""
        pa = state.pending_actor
        assert pa is not None
        if pa.action_kind == "continue" and pa.continue_text is not None:
            return bind_action(state, pa.continue_text)
        if pa.action is None:
            return state  # version 1: the text was saved in the state
        msg = next((m for m in inp.history if m.message_id == pa.action.message_id and not m.deleted), None)
        text = pa.action.resolve(msg.content) if msg is not None else None
        if text is None:
            out.diagnostics.append(Diagnostic("user_action_changed", "", {"message_id": pa.action.message_id}))
            return None
        return bind_action(state, text)

    async def _settle(self, state: StoryState, inp: BeforeActorInput, out: BeforeActorResult, setting: str) -> StoryState:
        run: SettleRun = await settle_closed(state, inp.context, inp.source_position, self.reader, self.settle, self.rebranch, setting)
        out.tool_calls += run.calls
        out.diagnostics += run.diagnostics
        out.usage = out.usage.plus(run.usage)
        return run.state

    async def _plan_if_needed(self, state: StoryState, ctx: StoryContext, out: BeforeActorResult,
                              setting: str) -> StoryState:
        """The plan cycle when the narrative needs one, unless a failed plan's wait says not yet
        (``plan_wait``; ``narrative_plan_cycle:waiting``)."""
        narrative = state.narrative
        if not narrative.need_plan or unresolved(state):
            return state
        due, wait = plan_due(state.plan_wait, ctx.turn_id)
        if not due:
            if wait != state.plan_wait:
                out.tool_calls.append("narrative_plan_cycle:waiting")
                out.diagnostics.append(Diagnostic("plan_waiting", f"{wait.failures} plan cycles in a row failed",
                                                  {"turns_left": wait.turns}))  # fmt: skip
            return replace(state, plan_wait=wait)
        plan = await self.plan.execute(PlanInput(ctx, narrative, setting))
        out.tool_calls.append(f"narrative_plan_cycle:{plan.outcome}")
        out.diagnostics += plan.diagnostics
        out.usage = out.usage.plus(plan.usage)
        return replace(state, narrative=plan.snapshot, plan_wait=after_plan(state.plan_wait, ctx.turn_id, plan.outcome))

    async def _prepare(self, state: StoryState, inp: BeforeActorInput, out: BeforeActorResult, material: TurnMaterial,
                       initialized: bool = False) -> None:
        ctx = inp.context
        action = (PrepareAction("intent", inp.user_text, Intent("normal")) if inp.continuation
                  else PrepareAction("free", inp.user_text))
        prep = await self.prepare.execute(PrepareInput(ctx, state.world, action, material.action))
        out.tool_calls.append("pov_prepare_turn")
        out.diagnostics += prep.diagnostics
        out.usage = out.usage.plus(prep.usage)
        for e in prep.events:  # the new user message interrupts only what came before it
            if e.kind in ("event_interrupted", "event_ended"):
                state = close_event(state, e.id, interrupted=e.kind == "event_interrupted")
        # One settle pass per turn: events ended at adoption, events this input interrupted and
        # earlier unknowns, each attempted once at this source position (deferred: beside the actor).
        if not inp.deferred:
            state = await self._settle(state, inp, out, material.past_plan)
        if not inp.deferred or initialized:
            state = await self._plan_if_needed(state, ctx, out, material.plan)
        narrative = state.narrative
        hold = bool(unresolved(state))
        deal = await self.deal.execute(DealInput(ctx, narrative, prep.stage.event.phase, hold=hold))  # type: ignore[arg-type]
        out.tool_calls.append("narrative_deal_beat")
        out.diagnostics += deal.diagnostics
        prep = project_stage(prep, deal.packet.bias.prefer_background_kind)
        out.projection = Projection(prep.stage, deal.packet)
        out.guidance = stage_message(out.projection)
        out.candidate = replace(state, world=prep.snapshot, narrative=deal.snapshot, source_position=inp.source_position)
        out.outcome = "prepared"
        if inp.deferred and (hold or deal.snapshot.need_plan):
            out.beside = (material.past_plan, material.plan)
