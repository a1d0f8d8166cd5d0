"""One group (or direct) turn, end to end. See DESIGN.md "One group turn".

The pipeline only orchestrates: decisions come from ``scheduling``, persistence from
``repository``/``records``, model calls go through the model port. Events are pushed to ``emit``
as they happen (the SSE stream), and the final result is stored on the turn row.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.db.models import Message
from app.llm.port import Usage
from app.llm.templates import PromptTemplates
from app.llm.usage import add_usage
from app.messages.service import to_json as message_json
from app.messages.store import insert_message
from app.settings import Settings
from app.turns import loader, records, repository
from app.turns.hooks import ActorPrep, TurnInfo, hooks_with
from app.turns.cross import NO_PLAN, CrossReplyDecision, CrossReplyPlan, plan_constraints, plan_request, plan_validator
from app.turns.quality import AllRepliesDropped
from app.turns.replies import Reply, actor_request, generate_checked
from app.turns.repository import StartedTurn
from app.turns.stages import StageRun, error_record, model_configured, struct_stage
from app.turns.understanding import understand
from app.turns.weights import WeightsStore
from scheduling import (
    SpeakerSelection, build_speaking_context, decide_speakers, find_mentions, format_transcript, llm_selection_needed,
    selection_constraints, selection_model_request, validate_selection,
)  # fmt: skip

log = logging.getLogger("app.turns")
Emit = Callable[[str, dict[str, Any]], Awaitable[None]]
WIRE_API = "chat_completions"


async def _no_emit(_: str, __: dict[str, Any]) -> None:
    return None


class TurnPipeline:
    def __init__(
        self,
        *,
        sessions: async_sessionmaker[AsyncSession],
        model: Any,
        templates: PromptTemplates,
        settings: Settings,
        weights: WeightsStore,
        hooks: list[Any] | None = None,
    ) -> None:
        self.hooks = list(hooks or [])
        self.sessions = sessions
        self.model = model
        self.templates = templates
        self.settings = settings
        self.weights = weights

    async def run(self, started: StartedTurn, emit: Emit = _no_emit) -> dict[str, Any]:
        turn, conv = started.turn, started.conversation
        t0 = time.perf_counter()
        state: dict[str, Any] = {"messages": [], "timings": {}, "usage": Usage(), "orchestration": {}, "extra": {}}
        await emit("turn.started", {"turnId": turn.id, "userMessage": message_json((started.user_message))})
        try:
            async with asyncio.timeout(self.settings.turn_timeout_s):
                await self._run(started, state, emit)
            status, error = "completed", None
        except TimeoutError:
            status, error = "failed", {"code": "turn_timeout", "message": f"turn exceeded {self.settings.turn_timeout_s}s"}
        except AllRepliesDropped as exc:  # an outcome of the quality checks, not a crash
            log.warning("turn %s failed: %s", turn.id, exc)
            status, error = "failed", exc.record()
        except Exception as exc:  # noqa: BLE001 - recorded on the turn, replies already saved stay
            log.exception("turn %s failed", turn.id)
            status, error = "failed", error_record(exc)
        state["timings"]["total"] = _ms(t0)
        result = {
            "turnId": turn.id, "status": status, "conversationId": conv.id,
            "userMessage": message_json((started.user_message)),
            "agentMessages": [message_json((m)) for m in state["messages"]],
            "orchestration": {**state["orchestration"], "timings": state["timings"],
                              "usage": records.usage_dict(state["usage"])},
            "error": error,
            **state["extra"],
        }  # fmt: skip
        await repository.finish_turn(
            self.sessions, turn.id, status=status, result=result, error=error,
            intent=state["orchestration"].get("intent"), emotion=state["orchestration"].get("emotion"),
            timings=state["timings"], usage=records.usage_dict(state["usage"]),
        )  # fmt: skip
        await emit("turn.completed" if status == "completed" else "turn.failed", result)
        return result

    async def _run(self, started: StartedTurn, state: dict[str, Any], emit: Emit) -> None:
        turn, conv, user_msg = started.turn, started.conversation, started.user_message
        cs = conv.settings
        language, reply_limit, chattiness = cs["language"], cs["replyLimit"], cs["chattiness"]
        direct = conv.kind == "direct"
        timings, orch = state["timings"], state["orchestration"]

        t = time.perf_counter()
        async with self.sessions() as session:
            agents = await loader.load_agents(session, conv.id)
            ids = [p.id for p in agents.profiles]
            stats = await loader.direct_stats(session, turn.owner_id, ids)
            recent = await loader.recent_messages(session, conv.id, self.settings.recent_window, before_seq=user_msg.seq)
        transcript = format_transcript(recent, agents.profiles, limit=self.settings.recent_window)
        timings["context"] = _ms(t)

        intent_run, emotion_run = await understand(
            self.model, user_msg.content, agents.profiles, transcript, language, direct=direct
        )
        intent, emotion = intent_run.value, emotion_run.value
        timings.update(intent=intent_run.ms, emotion=emotion_run.ms)
        state["usage"] = add_usage(add_usage(state["usage"], intent_run.usage), emotion_run.usage)
        orch["intent"] = {**msgspec.to_builtins(intent), "source": intent_run.source, "run": intent_run.record()}
        orch["emotion"] = {**msgspec.to_builtins(emotion), "source": emotion_run.source, "run": emotion_run.record()}
        await emit("turn.emotion", {"turnId": turn.id, "emotion": orch["emotion"], "intent": orch["intent"]})

        mentions = [] if direct else find_mentions(user_msg.content, agents.profiles)
        context = build_speaking_context(
            agents.profiles, stats, recent, emotion, window=self.settings.recent_window, current_user_seq=user_msg.seq
        )
        select_run = await self._select(direct, agents.profiles, context, intent, emotion, mentions, transcript,
                                        user_msg.content, language, reply_limit, chattiness)  # fmt: skip
        timings["select"] = select_run.ms
        state["usage"] = add_usage(state["usage"], select_run.usage)
        llm_choice: SpeakerSelection | None = select_run.value
        weights = self.weights.current()
        decision = decide_speakers(
            agents=agents.profiles, context=context, intent=intent, mentions=mentions, weights=weights,
            llm_selection=llm_choice, reply_limit=reply_limit, chattiness=chattiness, emotion=emotion,
        )  # fmt: skip
        if direct:
            decision.selected_agent_ids = ids[:1]
            decision.selected_by = {ids[0]: "direct"}
            decision.reason = "direct conversation"
            for c in decision.candidates:
                c.selected, c.selected_by = True, "direct"
        orch["selection"] = {**msgspec.to_builtins(decision), "llm": select_run.record(), "mentions": mentions}
        orch["speakingContext"] = msgspec.to_builtins(context)
        await emit("turn.selection", {"turnId": turn.id, "selection": orch["selection"]})
        info = TurnInfo(
            turn_id=turn.id, owner_id=turn.owner_id, conversation_id=conv.id, conversation_kind=conv.kind,
            settings=cs, language=language, user_message_id=user_msg.id, user_message_seq=user_msg.seq,
            user_text=user_msg.content, agents=agents.profiles, agent_rows=agents.rows, recent=recent,
            emotion=emotion, intent=intent,
        )  # fmt: skip
        preps = await self._before_actor(info, decision.selected_agent_ids)

        t = time.perf_counter()
        replies = await self._primary_replies(decision.selected_agent_ids, agents, language, transcript,
                                              user_msg.content, preps)  # fmt: skip
        timings["actor"] = _ms(t)
        kept = [r for r in replies if not r.dropped]
        metrics = [_metric(turn, "actor", r.ms, r.usage, r.agent_id, "error" if r.dropped else "ok") for r in replies]

        cross_plan, cross_replies, plan_runs = NO_PLAN, [], []
        t = time.perf_counter()
        if not direct and kept and self.settings.cross_reply_rounds > 0:
            cross_plan, cross_replies, plan_runs = await self._cross(agents, kept, language, transcript, user_msg.content)
            for run in plan_runs:
                state["usage"] = add_usage(state["usage"], run.usage)
                metrics.append(_metric(turn, "cross_reply", run.ms, run.usage, None, run.source))
        timings["cross_reply"] = _ms(t)
        all_replies = replies + cross_replies
        for r in all_replies:
            state["usage"] = add_usage(state["usage"], r.usage)
        orch["crossReplyPlan"] = {**msgspec.to_builtins(cross_plan), "runs": [r.record() for r in plan_runs]}
        orch["quality"] = {
            r.agent_id + (":cross" if r.kind == "cross" else ""): {
                "passed": not r.dropped, "attempts": r.attempts, "regeneratedFor": r.regenerated_for,
                "problems": r.problems if r.dropped else [],
            }
            for r in all_replies
        }  # fmt: skip

        meta_orch = {k: orch[k] for k in ("intent", "selection", "speakingContext", "crossReplyPlan", "quality")}
        for reply in [r for r in all_replies if not r.dropped]:
            selected_by = decision.selected_by.get(reply.agent_id, "llm" if reply.kind == "cross" else "fallback")
            meta = records.message_metadata(reply, selected_by=selected_by, wire_api=WIRE_API,
                                            orchestration=meta_orch, timings=dict(timings))  # fmt: skip
            message = await self._save_reply(conv.id, turn.id, reply, meta)
            if reply.kind == "primary" and reply.agent_id in preps:
                message = await self._after_reply(info, reply.agent_id, preps.pop(reply.agent_id), message, metrics)
            state["messages"].append(message)
            await emit("message.created", {"turnId": turn.id, "message": message_json((message))})
        for agent_id, prep in preps.items():  # replies that were dropped: hooks learn there is no message
            await self._after_reply(info, agent_id, prep, None, metrics)

        metrics += [
            _metric(turn, "intent", intent_run.ms, intent_run.usage, None, intent_run.source),
            _metric(turn, "emotion", emotion_run.ms, emotion_run.usage, None, emotion_run.source),
            _metric(turn, "select", select_run.ms, select_run.usage, None, select_run.source),
        ]
        rows = records.decision_rows(
            turn_id=turn.id, conversation_id=conv.id, kind=conv.kind, decision=decision, context=context,
            emotion=emotion, emotion_source=emotion_run.source,
            display_order={p.id: p.display_order for p in agents.profiles}, direct=direct,
        )  # fmt: skip
        async with self.sessions() as session:
            await records.write_records(
                session, decisions=rows, metrics=[{**m, "conversation_id": conv.id} for m in metrics],
                quality=records.quality_rows(turn.id, conv.id, all_replies),
            )  # fmt: skip
            await session.commit()
        if replies and not kept:  # decisions and metrics are written first: the failure is analysable
            raise AllRepliesDropped([(r.agent_id, r.kind, r.problems) for r in replies])
        for hook in hooks_with(self.hooks, "turn_finished"):
            extra = await hook.turn_finished(info, list(state["messages"]), emit)
            if extra:
                state["extra"].update(extra)

    async def _before_actor(self, info: TurnInfo, agent_ids: list[str]) -> dict[str, ActorPrep]:
        preps: dict[str, ActorPrep] = {}
        hooks = hooks_with(self.hooks, "before_actor")
        if not hooks:
            return preps

        async def one(agent_id: str) -> None:
            for hook in hooks:
                preps[agent_id] = await hook.before_actor(info, agent_id)

        await asyncio.gather(*(one(a) for a in agent_ids))
        return preps

    async def _after_reply(
        self, info: TurnInfo, agent_id: str, prep: ActorPrep, message: Message | None, metrics: list[dict[str, Any]]
    ) -> Message | None:
        """Hooks may return ``_metrics`` (stage metric rows for this turn) besides metadata keys."""
        extra: dict[str, Any] = {}
        for hook in hooks_with(self.hooks, "after_reply"):
            extra.update(await hook.after_reply(info, agent_id, prep, message) or {})
        for row in extra.pop("_metrics", []):
            metrics.append({"turn_id": info.turn_id, **row})
        if message is None or not extra:
            return message
        async with self.sessions() as session:
            row = await session.get(Message, message.id)
            row.metadata_json = {**row.metadata_json, **extra}
            await session.commit()
            return row

    async def _select(self, direct, profiles, context, intent, emotion, mentions, transcript, text, language,
                      reply_limit, chattiness) -> StageRun[SpeakerSelection | None]:  # fmt: skip
        ids = [p.id for p in profiles]
        needed = not direct and llm_selection_needed(
            intent, emotion, mentions, reply_limit=reply_limit, candidate_count=len(ids), chattiness=chattiness
        )
        if not needed:
            return StageRun(stage="select", value=None, source="skipped", ms=0.0)
        request = selection_model_request(
            text=text, agents=profiles, context=context, intent=intent, reply_limit=reply_limit, language=language,
            recent_transcript=transcript, chattiness=chattiness, mentioned_ids=mentions,
        )  # fmt: skip
        return await struct_stage(
            "select", self.model, request, SpeakerSelection, lambda: None,
            validate=lambda s: validate_selection(s, ids, max(1, reply_limit)),
            constraints=selection_constraints(ids, max(1, reply_limit)),
        )  # fmt: skip

    async def _primary_replies(self, selected, agents, language, transcript, text, preps) -> list[Reply]:
        names = {p.id: p.name for p in agents.profiles}

        async def one(agent_id: str, earlier: list[str]) -> Reply:
            agent = agents.rows[agent_id]
            others = [n for a, n in names.items() if a != agent_id]
            prep = preps.get(agent_id)
            request = actor_request(self.templates, agent, language=language, transcript=transcript, user_text=text,
                                    others=others, stage_material=prep.stage_material if prep else None)  # fmt: skip
            try:
                return await generate_checked(self.model, request, agent, language=language,
                                              max_chars=self.settings.limits.max_message_chars,
                                              other_names=others, earlier_replies=earlier)  # fmt: skip
            except Exception as exc:  # noqa: BLE001 - a model failure drops this reply, recorded
                rec = error_record(exc)
                return Reply(agent_id=agent_id, text="", dropped=True, problems=[f"model_error: {rec['code']}"])

        drafts = list(await asyncio.gather(*(one(a, []) for a in selected)))
        kept_texts: list[str] = []
        for i, draft in enumerate(drafts):  # near-duplicates can only be seen once all drafts exist
            if not draft.dropped and kept_texts:
                again = await one(draft.agent_id, kept_texts) if _duplicates(draft.text, kept_texts) else None
                if again is not None:
                    again.regenerated_for = [*draft.regenerated_for, "duplicate: same as another reply this turn"]
                    drafts[i] = draft = again
            if not draft.dropped:
                kept_texts.append(draft.text)
        return drafts

    async def _cross(self, agents, kept: list[Reply], language, transcript, text):
        names = {p.id: p.name for p in agents.profiles}
        member_ids = list(names)
        replies_out: list[Reply] = []
        runs: list[StageRun] = []
        plan: CrossReplyPlan = NO_PLAN
        said = list(kept)
        for round_no in range(1, self.settings.cross_reply_rounds + 1):
            if not model_configured(self.model, "cross_reply"):
                break
            request = plan_request(language=language, transcript=transcript,
                                   replies=[(r.agent_id, names[r.agent_id], r.text) for r in said],
                                   members=list(names.items()))  # fmt: skip
            replied = [r.agent_id for r in said]
            run = await struct_stage("cross_reply", self.model, request, CrossReplyDecision, lambda: NO_PLAN,
                                     validate=plan_validator(member_ids, replied), post=CrossReplyDecision.plan,
                                     constraints=plan_constraints(member_ids, replied))  # fmt: skip
            runs.append(run)
            plan = run.value
            if not plan.should_reply:
                break
            agent = agents.rows[plan.from_agent_id]
            target = next(r for r in said if r.agent_id == plan.to_agent_id)
            others = [n for a, n in names.items() if a != agent.id]
            extra = (f"{names[target.agent_id]} just replied: \"{target.text}\"\n"
                     f"Respond briefly (one or two sentences) to {names[target.agent_id]}.\n")  # fmt: skip
            request = actor_request(self.templates, agent, language=language, transcript=transcript, user_text=text,
                                    others=others, purpose="cross_reply", template="cross_reply", extra=extra)  # fmt: skip
            try:
                reply = await generate_checked(self.model, request, agent, language=language,
                                               max_chars=self.settings.limits.max_message_chars, other_names=others,
                                               earlier_replies=[r.text for r in said])  # fmt: skip
            except Exception as exc:  # noqa: BLE001
                reply = Reply(agent_id=agent.id, text="", dropped=True,
                              problems=[f"model_error: {error_record(exc)['code']}"])  # fmt: skip
            reply.kind, reply.respond_to_agent_id = "cross", target.agent_id
            reply.cross_reason, reply.cross_round = plan.reason, round_no
            replies_out.append(reply)
            if reply.dropped:
                break
            said.append(reply)
        return plan, replies_out, runs

    async def _save_reply(self, conversation_id: str, turn_id: str, reply: Reply, meta: dict[str, Any]) -> Message:
        async with self.sessions() as session:
            message = await insert_message(
                session, conversation_id, role="agent", content=reply.text, agent_id=reply.agent_id, turn_id=turn_id,
                reply_kind=reply.kind, respond_to_agent_id=reply.respond_to_agent_id, metadata=meta,
            )  # fmt: skip
            await session.commit()
            return message


def _duplicates(text: str, earlier: list[str]) -> bool:
    from app.turns.quality import reply_problems

    found = reply_problems(text, language="und", max_chars=10**9, other_names=[], earlier_replies=earlier)
    return any(p.startswith(("duplicate", "near_duplicate")) for p in found)


def _metric(turn: Any, stage: str, ms: float, usage: Usage, agent_id: str | None, outcome: str) -> dict[str, Any]:
    return {"turn_id": turn.id, "stage": stage, "agent_id": agent_id, "ms": round(ms, 3),
            "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
            "estimated": usage.estimated, "outcome": outcome if outcome in ("ok", "fallback", "error", "skipped") else "ok"}  # fmt: skip


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)

