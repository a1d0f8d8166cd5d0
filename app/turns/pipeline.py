"""One group (or direct) turn as typed steps. See DESIGN.md "One group turn".

    context → (certain speakers' actors start) → understand (intent ∥ emotion)
            → selection (fallback pick known at once: its actors start, held) → selector
            → confirm / cancel / start actors → each reply saved and announced as it passes
            → (every chosen reply dropped for its text: the next-ranked member stands in, once)
            → cross reply → result saved, lock released, ``turn.completed``
            → plugins' ``turn_finished`` in the background (suggestions, Story adoption)

The pipeline only orchestrates: decisions come from ``scheduling``, persistence from
``saving``/``records``/``repository``, model calls go through the model port, features join
through ``TurnPlugin``. Events go to ``emit`` as they happen.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.fence import LeaseLost
from app.db.outage import as_unavailable
from app.llm.ledger import CallLedger, first_call_signal, use_ledger
from app.llm.port import Usage
from app.llm.templates import PromptTemplates
from app.llm.usage import add_usage
from app.messages.service import to_json as message_json
from app.settings import Settings
from app.turns import records, repository
from app.turns.cancel import CANCELLED, RunningTurns, TurnCancelled, VisibleDrafts, unless_stopped
from app.turns.combined import combined_applies, read_combined
from app.turns.context import TurnContext, load_context
from app.turns.cross_step import run_cross
from app.turns.drafts import DraftChannel
from app.turns.plugins import ActorPrep, Emit, StageMetric, TurnInfo, TurnPlugin, await_beside
from app.turns.quality import AllRepliesDropped, all_unusable, repeats_sibling
from app.turns.judge import judge_reply, regeneration_note
from app.turns.actor_prompt import ActorPrompt, actor_prompt, add_lore
from app.turns.replies import Reply, generate_checked
from app.turns.repository import StartedTurn
from app.turns.result import MessageMetadata, Speculation, TurnResult, turn_cost, usage_dict
from app.turns.saving import Preps, merge_turn_result, record_dropped, save_reply
from app.turns.selection import (
    Selection, choose, decide, outcome, prepare_selection, run_selector, selector_may_disagree, speculative_ids,
)
from app.turns.stages import StageRun, error_record
from app.turns.understanding import offline_understanding, understand
from app.turns.weights import WeightsStore
from scheduling import SelectionDecision, SelectionOutcome, certain_speakers, fallback_emotion, fallback_intent, find_mentions
from scheduling.selection.stand_in import stand_in

log = logging.getLogger("app.turns")

FIRST_CALL_WAIT_S = 0.05
"""How long the understanding calls wait for a certain speaker's first model call to go out."""


async def _no_emit(_: str, __: dict[str, Any]) -> None:
    return None


class TurnOutcome(msgspec.Struct):
    result: dict[str, Any]
    after: asyncio.Future[dict[str, Any]] | None = None  # plugins' late parts (suggestions)


class Job:
    """One agent's primary reply, from its plugins' preparation to its saved message."""

    def __init__(self, agent_id: str, channel: DraftChannel, *, speculative: bool) -> None:
        self.agent_id, self.channel, self.speculative = agent_id, channel, speculative
        self.confirmed = asyncio.Event()
        self.calling = asyncio.Event()  # its first model call started (or it ended without one)
        self.speculation: Speculation = "none"
        self.task: asyncio.Task[None] | None = None


class TurnRun(msgspec.Struct, kw_only=True):
    """Everything a running turn accumulates (what the old untyped ``state`` dict held)."""

    started_at: float
    messages: list[Any] = []
    replies: list[Reply] = []
    metrics: list[StageMetric] = []
    timings: dict[str, float] = {}
    usage: Usage = Usage()
    orchestration: dict[str, Any] = {}
    claimed_texts: list[str] = []  # this turn's primary replies that passed, claimed before their save
    jobs: dict[str, Job] = {}
    decision: SelectionDecision | None = None
    meta_orchestration: dict[str, Any] = {}
    save_lock: asyncio.Lock = msgspec.field(default_factory=asyncio.Lock)  # one reply saved at a time
    saves: list[asyncio.Future[None]] = []  # a save, once begun, completes: a stop or timeout waits for it

    def since_start(self) -> float:
        return _ms(self.started_at)

    def mark(self, key: str) -> None:
        self.timings.setdefault(key, self.since_start())

    def add_usage(self, usage: Usage) -> None:
        self.usage = add_usage(self.usage, usage)


class TurnPipeline:
    def __init__(
        self,
        *,
        sessions: async_sessionmaker[AsyncSession],
        model: Any,
        templates: PromptTemplates,
        settings: Settings,
        weights: WeightsStore,
        plugins: Sequence[TurnPlugin] = (),
    ) -> None:
        self.plugins = list(plugins)
        self.running = RunningTurns()  # this process's turns, each stoppable (``POST …/cancel``)
        self.sessions = sessions
        self.model = model
        self.templates = templates
        self.settings = settings
        self.weights = weights

    async def conversation_saved(self, owner_id: str, conversation_id: str) -> None:
        """A conversation was created or its settings or members changed (committed)."""
        for plugin in self.plugins:
            await plugin.conversation_saved(owner_id, conversation_id)

    async def user_message_stored(self, session: AsyncSession, conversation_id: str) -> None:
        """Inside the transaction storing a new user message (with or without a turn)."""
        for plugin in self.plugins:
            await plugin.user_message_stored(session, conversation_id)

    async def message_added(self, conversation_id: str) -> None:
        """A new user message was stored (with or without a turn): e.g. old suggestions stop."""
        for plugin in self.plugins:
            await plugin.turn_starting(conversation_id)

    async def history_rewound(self, session: AsyncSession, conversation_id: str, *, to_message_id: str, to_seq: int,
                              by: str) -> dict[str, Any]:  # fmt: skip
        """Inside a rewind's transaction: each feature takes back what the hidden messages made."""
        report: dict[str, Any] = {}
        for plugin in self.plugins:
            report |= await plugin.history_rewound(session, conversation_id, to_message_id=to_message_id,
                                                   to_seq=to_seq, by=by)  # fmt: skip
        return report

    # -- the turn --------------------------------------------------------------------------

    async def run(self, started: StartedTurn, emit: Emit = _no_emit, *, continue_agent_id: str | None = None,
                  stop: asyncio.Event | None = None) -> TurnOutcome:  # fmt: skip
        """A turn; without a user message (``started.user_message`` None) a Continue, by
        ``continue_agent_id`` or the scorer's pick. Setting ``stop`` ends it ``cancelled``."""
        turn, conv = started.turn, started.conversation
        run = TurnRun(started_at=time.perf_counter())
        ctx: TurnContext | None = None
        drafts = VisibleDrafts(emit)
        emit = drafts.emit

        async def steps() -> None:
            nonlocal ctx
            ctx = await load_context(self.sessions, started, self.settings.recent_window, continue_agent_id)
            run.timings["context"] = run.since_start()
            await self._steps(ctx, run, emit)

        user_message = message_json(started.user_message) if started.user_message is not None else None
        await emit("turn.started", {"turnId": turn.id, "userMessage": user_message,
                                    "continuation": started.user_message is None, "trigger": turn.trigger})  # fmt: skip
        ledger = CallLedger()
        try:
            with use_ledger(ledger):
                async with asyncio.timeout(self.settings.turn_timeout_s):
                    await unless_stopped(steps(), stop)
            status, error = "completed", None
        except TurnCancelled:  # the user stopped it: what was saved stays
            log.info("turn %s cancelled", turn.id)
            status, error = "cancelled", CANCELLED
        except TimeoutError:
            status, error = "failed", {"code": "turn_timeout", "message": f"turn exceeded {self.settings.turn_timeout_s}s"}
        except LeaseLost as exc:  # another process holds the turn now: this one records nothing more
            log.warning("turn %s stopped: %s", turn.id, exc)
            status, error = "failed", error_record(exc)
        except AllRepliesDropped as exc:  # an outcome of the quality checks, not a crash
            log.warning("turn %s failed: %s", turn.id, exc)
            status, error = "failed", exc.record()
        except Exception as exc:  # noqa: BLE001 - recorded on the turn; replies already saved stay
            log.exception("turn %s failed", turn.id)
            status, error = "failed", error_record(as_unavailable(exc) or exc)
        finally:
            await _cancel_jobs(run)
            await asyncio.gather(*run.saves, return_exceptions=True)
        if status == "cancelled":
            await drafts.discard_open(turn.id)
        run.timings["total"] = run.since_start()
        orch = {**run.orchestration, "timings": run.timings, "usage": usage_dict(run.usage),
                "cost": turn_cost(ledger, run.started_at, run.timings, ctx)}  # fmt: skip
        result = TurnResult(
            turn_id=turn.id, status=status, conversation_id=conv.id, user_message=user_message,
            agent_messages=[message_json(m) for m in run.messages], orchestration=orch, error=error,
            trigger=turn.trigger,
        ).to_json()  # fmt: skip
        try:
            await repository.finish_turn(
                self.sessions, turn.id, status=status, result=result, error=error, intent=orch.get("intent"),
                emotion=orch.get("emotion"), timings=run.timings, usage=usage_dict(run.usage),
            )  # fmt: skip
        except LeaseLost as exc:  # taken over while finishing: the turn row says turn_abandoned
            status, error = "failed", error_record(exc)
            result = {**result, "status": status, "error": error}
        except Exception as exc:
            if (unavailable := as_unavailable(exc)) is None:
                raise
            # The database went away: the stream still hears how the turn ended; the row is ended
            # by the dead-turn rule (its lease expires) once the database is back.
            log.warning("turn %s: could not record its end: %s", turn.id, exc)
            status, error = "failed", error_record(unavailable)
            result = {**result, "status": status, "error": error}
        late = status == "completed" and ctx is not None and bool(self.plugins)
        # ``more``: the turn's late parts (suggestions) follow, then ``turn.closed`` (the controller).
        ending = {"completed": "turn.completed", "cancelled": "turn.cancelled"}.get(status, "turn.failed")
        await emit(ending, {**result, "more": late})
        after = asyncio.ensure_future(self._after(ctx, run, ledger, orch, emit)) if late and ctx else None
        return TurnOutcome(result, after)

    async def _after(self, ctx: TurnContext, run: TurnRun, ledger: CallLedger, orch: dict[str, Any],
                     emit: Emit) -> dict[str, Any]:  # fmt: skip
        """Plugins' late work, after the lock is released; a failure here never touches the turn.
        Their model calls (suggestions) join the turn's ``orchestration.cost``."""
        info, messages = ctx.info, list(run.messages)
        extra: dict[str, Any] = {}
        with use_ledger(ledger):
            for plugin in self.plugins:
                try:
                    extra.update(await plugin.turn_finished(info, messages, emit) or {})
                except Exception:  # noqa: BLE001
                    log.exception("turn_finished of %s failed for turn %s", type(plugin).__name__, info.turn_id)
        extra["orchestration"] = {**orch, "cost": turn_cost(ledger, run.started_at, run.timings, ctx, late=True)}
        await merge_turn_result(self.sessions, info.turn_id, extra)
        return extra

    async def _steps(self, ctx: TurnContext, run: TurnRun, emit: Emit) -> None:
        info = ctx.info
        if info.continuation:  # one reply, no selector and no cross reply
            info.config = msgspec.structs.replace(info.config, reply_limit=1)
            mentions = [info.continue_agent_id] if info.continue_agent_id and not ctx.direct else []
        else:
            mentions = [] if ctx.direct else find_mentions(info.user_text, info.agents)
        cfg = ctx.config
        for agent_id in certain_speakers(info.agents, mentions, reply_limit=cfg.reply_limit, direct=ctx.direct):
            self._start(ctx, run, emit, agent_id, speculative=False)  # no selector can overrule these
        weights = self.weights.current()
        speculated = self._speculate(ctx, run, emit, mentions, weights)
        await _first_words_first(run)

        reading = None
        if combined_applies(ctx):  # one call for intent, emotion and the speaker choice
            reading = await read_combined(self.model, ctx, mentions, weights, self.settings.recent_window)
            intent_run, emotion_run = reading.intent, reading.emotion
            run.add_usage(reading.call.usage)
        elif info.continuation:
            intent_run, emotion_run = offline_understanding(info.user_text, info.agents)
        else:
            intent_run, emotion_run = await understand(self.model, info.user_text, info.agents, ctx.transcript,
                                                       cfg.language, direct=ctx.direct,
                                                       emotion_source=cfg.emotion_source)  # fmt: skip
        intent, emotion = info.intent, info.emotion = intent_run.value, emotion_run.value
        run.timings.update(intent=intent_run.ms, emotion=emotion_run.ms)
        run.add_usage(intent_run.usage)
        run.add_usage(emotion_run.usage)
        orch = run.orchestration
        orch["mode"] = "combined" if reading is not None else "staged"
        orch["intent"] = {**msgspec.to_builtins(intent), "source": intent_run.source, "run": intent_run.record()}
        orch["emotion"] = {**msgspec.to_builtins(emotion), "source": emotion_run.source, "run": emotion_run.record()}
        await emit("turn.emotion", {"turnId": info.turn_id, "emotion": orch["emotion"], "intent": orch["intent"]})

        if reading is not None:
            sel, select_run = reading.selection, reading.select
        else:
            sel = prepare_selection(ctx, intent, emotion, mentions, weights, self.settings.recent_window)
            for agent_id in sel.plan.settled:  # speak whatever the selector says: out now, not after it
                await self._keep(ctx, run, emit, agent_id, speculated)
            select_run = await run_selector(self.model, ctx, sel, intent)
        run.timings["select"] = 0.0 if reading is not None else select_run.ms
        run.add_usage(select_run.usage)
        decision = choose(ctx, sel, intent, emotion, weights, select_run.value)
        run.decision = decision
        chosen_by = outcome(ctx, sel, decision)  # mode, path, scorer margin and pick, the model's agreement
        orch["selection"] = {**msgspec.to_builtins(decision), **msgspec.to_builtins(chosen_by),
                             "llm": select_run.record(), "mentions": mentions}  # fmt: skip
        orch["speakingContext"] = msgspec.to_builtins(sel.context)
        orch["speculation"] = {"started": speculated,
                               "hits": [a for a in speculated if a in decision.selected_agent_ids],
                               "misses": [a for a in speculated if a not in decision.selected_agent_ids]}  # fmt: skip
        run.meta_orchestration = {k: orch[k] for k in ("intent", "selection", "speakingContext")}
        await emit("turn.selection", {"turnId": info.turn_id, "selection": orch["selection"]})
        await self._confirm(ctx, run, emit, decision, speculated)
        stage_runs = (reading.call,) if reading is not None else (intent_run, emotion_run, select_run)
        await self._write_decision(ctx, run, decision, sel, chosen_by, stage_runs, emotion_run.source)

        t = time.perf_counter()
        jobs = [j.task for j in run.jobs.values() if j.task is not None]
        if jobs:
            await asyncio.gather(*jobs)
        primaries = [r for r in run.replies if r.kind == "primary"]
        if primaries and all_unusable(primaries) and not mentions and not ctx.direct and not info.continuation:
            await self._stand_in(ctx, run, emit, decision, primaries)
            primaries = [r for r in run.replies if r.kind == "primary"]
        run.timings["actor"] = _ms(t)
        kept = [r for r in primaries if not r.dropped]

        t = time.perf_counter()
        if not ctx.direct and not info.continuation and kept and self.settings.cross_reply_rounds > 0:
            await run_cross(self, ctx, run, emit, kept, reading.ahead if reading is not None else None)
        run.timings["cross_reply"] = _ms(t)
        orch["quality"] = {
            r.agent_id + (":cross" if r.kind == "cross" else ""): _quality(r) for r in run.replies
        }  # fmt: skip
        if primaries and not kept:
            raise AllRepliesDropped([(r.agent_id, r.kind, r.problems) for r in primaries])

    async def _stand_in(self, ctx: TurnContext, run: TurnRun, emit: Emit, decision: SelectionDecision,
                        dropped: list[Reply]) -> None:  # fmt: skip
        """Every chosen reply was dropped as unusable: the best-ranked member not yet tried answers
        instead, once (``scheduling.selection.stand_in``), recorded as ``orchestration.standIn``. Not
        for a member the user named (the caller's rule): the user asked for that one."""
        agent_id = stand_in(decision.candidates, tried=set(run.jobs), resting=ctx.resting)
        if agent_id is None:
            return
        # in the turn's result, and in the metadata of the messages saved from here (the stand-in's)
        run.orchestration["standIn"] = run.meta_orchestration["standIn"] = {
            "agentId": agent_id, "after": [r.agent_id for r in dropped]}
        job = self._start(ctx, run, emit, agent_id, speculative=False)
        job.confirmed.set()
        await job.task  # type: ignore[misc]

    def _speculate(self, ctx: TurnContext, run: TurnRun, emit: Emit, mentions: list[str], weights: Any) -> list[str]:
        """When the LLM selector will run, the fallback scorer's pick on the offline reading of
        the message starts at once (its Story prepare included), its drafts held until the
        selection confirms it. Known in microseconds, so the actor overlaps the understanding
        and selection calls instead of following them."""
        info = ctx.info
        if info.continuation or ctx.direct or not self.settings.turn_speculation:
            return []
        intent, emotion = fallback_intent(info.user_text, info.agents), fallback_emotion(info.user_text)
        guess = prepare_selection(ctx, intent, emotion, mentions, weights, self.settings.recent_window)
        if not selector_may_disagree(self.model, guess, combined=combined_applies(ctx)):
            return []
        pick = decide(ctx, guess.context, intent, emotion, mentions, weights, None)  # the scorer alone
        # combined is the mode that saves calls: it bets on the scorer's pick alone
        extra = 0 if combined_applies(ctx) else self.settings.turn_speculation_extra
        speculated = speculative_ids(pick, set(run.jobs), extra)
        for agent_id in speculated:
            self._start(ctx, run, emit, agent_id, speculative=True)
        return speculated

    async def _confirm(self, ctx: TurnContext, run: TurnRun, emit: Emit, decision: SelectionDecision,
                       speculated: list[str]) -> None:  # fmt: skip
        """Keep what the decision agrees with, cancel the rest, start who is missing."""
        selected = decision.selected_agent_ids
        for agent_id, job in list(run.jobs.items()):
            if agent_id not in selected:
                job.task.cancel()  # a miss: its drafts were held, the user saw nothing
                del run.jobs[agent_id]
        for agent_id in selected:
            await self._keep(ctx, run, emit, agent_id, speculated)

    async def _keep(self, ctx: TurnContext, run: TurnRun, emit: Emit, agent_id: str, speculated: list[str]) -> None:
        """``agent_id`` replies: a speculative start is a hit and its held drafts go out; without a
        start its reply starts now. Its draft may then be saved."""
        job = run.jobs.get(agent_id)
        if job is None:
            job = self._start(ctx, run, emit, agent_id, speculative=False)
            job.speculation = "miss" if speculated else "none"
        elif job.speculative and job.speculation != "hit":
            job.speculation = "hit"
            await job.channel.release()
        job.confirmed.set()

    def _start(self, ctx: TurnContext, run: TurnRun, emit: Emit, agent_id: str, *, speculative: bool) -> Job:
        def first_delta() -> None:
            run.mark("firstDelta")

        job = Job(agent_id, DraftChannel(emit, ctx.info.turn_id, agent_id, held=speculative, on_first=first_delta),
                  speculative=speculative)  # fmt: skip
        job.task = asyncio.ensure_future(self._signalled(ctx, run, emit, job))
        run.jobs[agent_id] = job
        return job

    async def _signalled(self, ctx: TurnContext, run: TurnRun, emit: Emit, job: Job) -> None:
        """``_primary``, with ``job.calling`` set when its first model call starts."""
        try:
            with first_call_signal(job.calling):
                await self._primary(ctx, run, emit, job)
        finally:
            job.calling.set()

    async def _primary(self, ctx: TurnContext, run: TurnRun, emit: Emit, job: Job) -> None:
        info, agent = ctx.info, ctx.agents.rows[job.agent_id]
        preps: Preps = [(p, await p.before_actor(info, job.agent_id)) for p in self.plugins]
        refused = [p.refuse for _, p in preps if p.refuse]
        if refused:  # no actor call; dropped with the reason, after the selection like any reply
            await job.confirmed.wait()
            dropped = Reply(agent_id=job.agent_id, text="", dropped=True, problems=refused, attempts=0)
            await self.finish_reply(ctx, run, emit, dropped, preps, "actor", speculation=job.speculation)
            return
        material = "\n\n".join(p.stage_material for _, p in preps if p.stage_material) or None
        prompt = actor_prompt(self.templates, agent, language=info.language, recent=info.recent_for(agent.id), names=ctx.names(),
                              user_text=None if info.continuation else info.user_text, direct=ctx.direct,
                              stage_material=material, stage_texts=tuple(t for _, p in preps for t in p.stage_texts))  # fmt: skip
        reply = await self.generate_reply(ctx, agent, prompt, job.channel, run.claimed_texts)
        await job.confirmed.wait()  # saved once the selection is known (and, if speculative, agrees)
        if not reply.dropped and repeats_sibling(reply.text, run.claimed_texts):
            # Replies run concurrently: a near-copy of one claimed meanwhile gets one more try.
            again = await self.generate_reply(ctx, agent, prompt.retry(["duplicate"]), job.channel, run.claimed_texts)
            again.regenerated_for = [*reply.regenerated_for, "duplicate: same as another reply this turn"]
            reply = again
            if not reply.dropped and repeats_sibling(reply.text, run.claimed_texts):
                await _drop_copy(job.channel, reply)
        if not reply.dropped:
            # Claimed with no await since the check: a reply finishing beside it is checked against it.
            run.claimed_texts.append(reply.text)
        if not reply.dropped:
            await await_beside(preps)
        await self.finish_reply(ctx, run, emit, reply, preps, "actor", speculation=job.speculation)

    async def generate_reply(self, ctx: TurnContext, agent: Any, prompt: ActorPrompt, channel: DraftChannel,
                        earlier: list[str]) -> Reply:  # fmt: skip
        """Every reply of a turn (primary, cross, Continue) is written here, with the lore its prompt triggers."""
        prompt = add_lore(prompt, ctx.lore, agent_id=agent.id, token_budget=ctx.config.lore.token_budget)
        try:
            reply = await generate_checked(self.model, prompt, agent, max_chars=self.settings.limits.max_message_chars,
                                           earlier_replies=earlier, channel=channel)  # fmt: skip
            if reply.dropped or not self.settings.quality_check:
                return reply
            return await self._judged(ctx, agent, prompt, reply, channel, earlier)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a model failure drops this reply, recorded
            record = error_record(exc)  # the message says which failure (HTTP status, cut stream, timeout)
            problems = [f"model_error: {record['code']}: {record['message'][:200]}"]
            if channel.current is not None:
                await channel.current.discard(problems)
            return Reply(agent_id=agent.id, text="", dropped=True, problems=problems)

    async def _judged(self, ctx: TurnContext, agent: Any, prompt: ActorPrompt, reply: Reply, channel: DraftChannel,
                      earlier: list[str]) -> Reply:  # fmt: skip
        """The LLM quality check (``turns.qualityCheck``): a failed verdict regenerates once with
        its problems named, a second failure drops the reply. The judge being down passes."""
        info = ctx.info

        async def judge(text: str) -> Any:
            return await judge_reply(self.model, self.templates, agent, language=info.language,
                                     transcript=ctx.transcript, user_text=info.user_text, reply_text=text)  # fmt: skip

        first = await judge(reply.text)
        reply.judge_runs = [first]
        if first.value.passed:
            return reply
        problems = regeneration_note(first.value)
        if channel.current is not None:
            await channel.current.discard(problems)
        again = await generate_checked(self.model, prompt.retry(problems), agent,
                                       max_chars=self.settings.limits.max_message_chars, earlier_replies=earlier,
                                       channel=channel)  # fmt: skip
        again.regenerated_for = [*reply.regenerated_for, *problems, *again.regenerated_for]
        again.attempts += reply.attempts
        again.usage = add_usage(reply.usage, again.usage)
        again.judge_runs = [first]
        if again.dropped:
            return again
        second = await judge(again.text)
        again.judge_runs.append(second)
        if not second.value.passed:
            again.dropped, again.problems = True, regeneration_note(second.value)
            if channel.current is not None:
                await channel.current.discard(again.problems)
        return again

    def actor_model_of(self, ctx: TurnContext, agent_id: str) -> str | None:
        """The model config a member's replies are written with: its own, else the actor stage's."""
        own = getattr(ctx.agents.rows.get(agent_id), "model_config_id", None)
        llm = self.settings.llm
        return own or (llm.stages.get("actor") if llm is not None else None)

    async def finish_reply(self, ctx: TurnContext, run: TurnRun, emit: Emit, reply: Reply, preps: Preps,
                            stage: str | None, *, speculation: Speculation = "none", extra_orch: dict[str, Any] | None = None) -> None:  # fmt: skip
        info = ctx.info
        run.replies.append(reply)
        run.add_usage(reply.usage)
        outcome = "error" if reply.dropped else "ok"
        model_config_id = self.actor_model_of(ctx, reply.agent_id)
        metrics = [StageMetric.of(stage, reply.ms, reply.usage, reply.agent_id, outcome,
                                  model_config_id=model_config_id)] if stage else []  # fmt: skip
        for judged in reply.judge_runs:
            run.add_usage(judged.usage)
            metrics.append(StageMetric.of("quality", judged.ms, judged.usage, reply.agent_id, judged.source))
        if reply.dropped:
            for plugin, prep in preps:
                await plugin.reply_dropped(info, reply.agent_id, prep)
            await record_dropped(self.sessions, info, reply, metrics)
            run.metrics += metrics
            return
        decision = run.decision
        selected_by = decision.selected_by.get(reply.agent_id, "fallback") if decision and reply.kind == "primary" else "llm"
        orch = {**run.meta_orchestration, **(extra_orch or {}),
                "quality": {reply.agent_id + (":cross" if reply.kind == "cross" else ""): _quality(reply)}}  # fmt: skip
        meta = MessageMetadata.for_reply(reply, selected_by=selected_by, speculation=speculation, orchestration=orch,
                                         timings=dict(run.timings), model_config_id=model_config_id)  # fmt: skip
        async def save() -> None:
            async with run.save_lock:  # seq order is announcement order
                message = await save_reply(self.sessions, info, reply, meta, preps, metrics)
                run.messages.append(message)
                run.metrics += metrics
                run.mark("firstMessage")
                await emit("message.created", {"turnId": info.turn_id, "draftId": reply.draft_id,
                                               "message": message_json(message)})  # fmt: skip

        saving = asyncio.ensure_future(save())
        run.saves.append(saving)
        await asyncio.shield(saving)  # a reply that passed is saved whole, even if the turn stops now

    async def _write_decision(self, ctx: TurnContext, run: TurnRun, decision: SelectionDecision, sel: Selection,
                              chosen_by: SelectionOutcome, runs: tuple[StageRun, ...], emotion_source: str) -> None:  # fmt: skip
        """Decision rows and the understanding/selection metrics, right after the selection."""
        info = ctx.info
        metrics = [StageMetric.of(r.stage, r.ms, r.usage, None, r.source) for r in runs]
        rows = records.decision_rows(
            turn_id=info.turn_id, conversation_id=info.conversation_id, kind=info.conversation_kind, decision=decision,
            context=sel.context, emotion=info.emotion, emotion_source=emotion_source,
            display_order={p.id: p.display_order for p in info.agents}, direct=ctx.direct, outcome=chosen_by,
        )  # fmt: skip
        async with self.sessions() as session:
            await records.write_records(session, decisions=rows, quality=[],
                                        metrics=[m.row(info.turn_id, info.conversation_id) for m in metrics])  # fmt: skip
            await session.commit()
        run.metrics += metrics


async def _first_words_first(run: TurnRun) -> None:
    """The certain speakers' first model calls (their Story prepare, or the reply itself) go out
    before the understanding calls, at most ``FIRST_CALL_WAIT_S`` later. Sent together, a reply's
    first token came back in one batch with the intent and emotion answers and queued behind them
    (10 ms of a 200 ms simulator call); a model server with fewer slots than requests serves them
    in arrival order."""
    waits = [j.calling.wait() for j in run.jobs.values() if not j.speculative]
    if waits:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(FIRST_CALL_WAIT_S):
                await asyncio.gather(*waits)


async def _cancel_jobs(run: TurnRun) -> None:
    pending = [j.task for j in run.jobs.values() if j.task is not None and not j.task.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def _quality(reply: Reply) -> dict[str, Any]:
    out = {"passed": not reply.dropped, "attempts": reply.attempts, "regeneratedFor": reply.regenerated_for,
           "problems": reply.problems if reply.dropped else []}  # fmt: skip
    if reply.judge_runs:
        out["judge"] = [{**r.record(), "verdict": msgspec.to_builtins(r.value)} for r in reply.judge_runs]
    return out


async def _drop_copy(channel: DraftChannel, reply: Reply) -> None:
    """The one more try said another reply of this turn again: dropped, its draft taken back."""
    reply.dropped, reply.problems = True, ["duplicate: same as another reply this turn"]
    if channel.current is not None:
        await channel.current.discard(reply.problems)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)


__all__ = ["ActorPrep", "TurnOutcome", "TurnPipeline"]
