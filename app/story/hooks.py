"""The Story coordinator in each selected agent's turn (a ``TurnPlugin``).

Before the actor runs: read the agent's state row, build the history from the database, and let
the pure coordinator adopt the previous saved reply and prepare this turn; no session is held
during model calls. After the reply is saved: one compare-and-swap write of the adopted +
prepared state, announced in the message's metadata and written right after the message.
A Story failure never fails the turn: the agent replies without guidance and
the message's metadata says why (the seed's ``story_turn_completed``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import msgspec
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.conversations.settings import ConversationSettings, StorySettings
from app.db.models import Conversation, Message, utcnow
from app.errors import StaleStateWrite
from app.story import repository
from app.story.adoption import Adopted, BackgroundAdoption, reusable, story_context
from app.story.messages import DbMessageReader, load_history
from app.story.repository import StoredState, StoryScope
from app.story.rewind import rewind_stories
from app.turns import loader
from app.turns.actor_prompt import words_for
from app.turns.plugins import ActorPrep, ReplyExtras, StageMetric, TurnInfo, TurnPlugin
from story.coordinator.envelope import deserialize_state
from story.coordinator.initializer import PersonaSource
from story.coordinator.turn import BeforeActorInput, BeforeActorResult, StoryCoordinator, finalize_turn, stage_texts
from story.tools.common import Diagnostic, StoryModelConfig
from story.world.stage import writer_stage_instructions

log = logging.getLogger("app.story")


class StoryToken(msgspec.Struct):
    """What ``before_actor`` hands to ``reply_ready``/``reply_saved`` through the pipeline."""

    config: StorySettings
    stored: StoredState | None
    result: BeforeActorResult
    prepare_ms: float
    adopted_in_background: bool = False
    final: Any = None  # FinalizeResult, once the reply's message id is known
    diagnostics: list[Diagnostic] = []
    announced: str | None = None
    beside_ms: float | None = None  # the settle pass beside the actor (None: nothing to settle or plan)


def story_config(info: TurnInfo) -> StorySettings | None:
    return info.config.story if info.config.story.enabled else None


def persona_of(agent: Any, language: str = "en") -> PersonaSource:
    """The Story's persona, its parts titled in the conversation's language as the actor's are
    (``actor_prompt.words_for``): in a Chinese chat, English titles were copied into the worlds."""
    words = words_for(language)
    headline, description, _, personality, tone, instructions, guardrails = words.titles
    parts = [(headline, agent.headline), (description, agent.description), (personality, agent.personality_prompt),
             (tone, agent.tone_prompt), (instructions, agent.default_prompt), (guardrails, agent.guardrails_prompt)]
    definition = "\n".join(f"{t}{words.colon}{v.strip()}" for t, v in parts if v and v.strip())
    return PersonaSource(agent.name, definition, agent.story_background or "")


def _pending_id(stored: StoredState | None, agent_id: str) -> str | None:
    if stored is None or stored.envelope is None:
        return None
    try:
        pa = deserialize_state(stored.envelope, agent_id).pending_actor
    except Exception:  # noqa: BLE001 - the coordinator reports an unreadable state itself
        return None
    return pa.message_id if pa else None


def _beside(coordinator: StoryCoordinator, inp: BeforeActorInput, result: BeforeActorResult,
            timeout_s: float) -> asyncio.Future[float]:
    """The settle pass beside the actor, bounded, never raising (unsettled events stay queued for
    the next turn), cancelled with the agent's job (a speculation miss, the turn's deadline)."""

    async def run() -> float:
        t0 = time.perf_counter()
        try:
            async with asyncio.timeout(timeout_s):
                await coordinator.settle_beside(inp, result)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - Story never fails the agent's reply
            log.warning("story settle beside the actor failed for %s: %s", inp.agent_id, exc)
            result.diagnostics = [*result.diagnostics, Diagnostic("story_settle_deferred", f"{type(exc).__name__}: {exc}"[:300])]
        return _ms(t0)

    task = asyncio.ensure_future(run())
    job = asyncio.current_task()
    if job is not None:
        job.add_done_callback(lambda _: task.cancel())
    return task


def _inputs(*, turn_id: str, user_message_id: str, user_text: str, seq: int, language: str, seed: int) -> Any:
    """``inputs(agent)``: how a background job (adoption, initialisation) builds its coordinator input."""

    def for_agent(agent: Any) -> Any:
        def build(envelope: bytes | None, history: list[Any]) -> BeforeActorInput:
            ctx = story_context(turn_id, user_message_id, agent.id, language)
            return BeforeActorInput(ctx, agent.id, persona_of(agent, language), envelope, user_message_id, user_text, seq,
                                    history, seed=seed)  # fmt: skip
        return build

    return for_agent


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 3)


class StoryHooks(TurnPlugin):
    def __init__(self, sessions: async_sessionmaker[AsyncSession], model: Any, *, initialize_ahead: bool = True) -> None:
        self.sessions, self.model, self.initialize_ahead = sessions, model, initialize_ahead
        self.adoption = BackgroundAdoption(sessions)

    async def conversation_saved(self, owner_id: str, conversation_id: str) -> None:
        """Created, or its settings or members changed: with the Story on, the agents that have
        no Story yet are initialised in the background, so even a first turn only prepares."""
        if not self.initialize_ahead:
            return
        async with self.sessions() as session:
            conv = await session.get(Conversation, conversation_id)
            config = msgspec.convert(conv.settings or {}, ConversationSettings) if conv is not None else None
            if conv is None or config is None or not config.story.enabled:
                return
            agents = await loader.load_agents(session, conversation_id)
        cfg, seq = config.story, conv.last_seq
        inputs = _inputs(turn_id=f"init-{conversation_id}", user_message_id=f"init@{seq}", user_text="", seq=seq,
                         language=config.language, seed=cfg.seed)  # fmt: skip
        self._initialize(owner_id, conversation_id, agents.rows, cfg, self.coordinator(cfg, conversation_id), inputs, seq)

    async def history_rewound(self, session: AsyncSession, conversation_id: str, *, to_message_id: str, to_seq: int,
                              by: str) -> dict[str, Any]:  # fmt: skip
        return {"story": await rewind_stories(session, conversation_id, to_message_id=to_message_id, to_seq=to_seq,
                                              by=by)}  # fmt: skip

    async def turn_finished(self, info: TurnInfo, messages: list[Any], emit: Any) -> None:
        """In the background: each reply this turn left waiting for acceptance is adopted, and the
        group's agents that have no Story yet are initialised, so the next turns only prepare in
        front of the actor."""
        cfg = story_config(info)
        if cfg is None:
            return None
        last_seq = max([info.user_message_seq, *(m.seq for m in messages)])
        names = {a: row.name for a, row in info.agent_rows.items()}
        coordinator = self.coordinator(cfg, info.conversation_id)
        inputs = _inputs(turn_id=info.turn_id, user_message_id=info.user_message_id, user_text=info.user_text,
                         seq=info.user_message_seq, language=info.language, seed=cfg.seed)  # fmt: skip
        for message in messages:
            story = (message.metadata_json or {}).get("story") or {}
            agent = info.agent_rows.get(message.agent_id or "")
            if message.reply_kind != "primary" or story.get("outcome") != "waiting_for_acceptance" or agent is None:
                continue
            self.adoption.schedule(StoryScope(info.owner_id, info.conversation_id, agent.id), coordinator, inputs(agent),
                                   pending_id=message.id, last_seq=last_seq, names=names,
                                   max_state_bytes=cfg.max_state_bytes)  # fmt: skip
        spoke = {m.agent_id for m in messages if m.reply_kind == "primary"}  # a cross reply runs no Story
        silent = {a: row for a, row in info.agent_rows.items() if a not in spoke}
        self._initialize(info.owner_id, info.conversation_id, silent, cfg, coordinator, inputs, last_seq, names)
        return None

    def _initialize(self, owner_id: str, conversation_id: str, agents: dict[str, Any], cfg: StorySettings,
                    coordinator: StoryCoordinator, inputs: Any, last_seq: int,
                    names: dict[str, str] | None = None) -> None:  # fmt: skip
        """Initialise ``agents`` ahead, in the background (those with a state are skipped there)."""
        if not self.initialize_ahead:
            return
        names = names or {a: row.name for a, row in agents.items()}
        for agent_id, agent in agents.items():
            self.adoption.schedule_init(StoryScope(owner_id, conversation_id, agent_id), coordinator, inputs(agent),
                                        last_seq=last_seq, names=names, max_state_bytes=cfg.max_state_bytes)  # fmt: skip

    def coordinator(self, cfg: StorySettings, conversation_id: str) -> StoryCoordinator:
        timeout = cfg.model_call_timeout_ms / 1000
        main = StoryModelConfig(self.model, cfg.model_config_id, timeout)
        init = StoryModelConfig(self.model, cfg.initializer_model_config_id or cfg.model_config_id, timeout)
        return StoryCoordinator(model=main, reader=DbMessageReader(self.sessions, conversation_id), init_model=init)

    async def before_actor(self, info: TurnInfo, agent_id: str) -> ActorPrep:
        cfg = story_config(info)
        agent = info.agent_rows.get(agent_id)
        if cfg is None or agent is None:
            return ActorPrep()
        t0 = time.perf_counter()
        stored: StoredState | None = None
        adopted: Adopted | None = None
        beside: asyncio.Future[float] | None = None
        try:
            scope = StoryScope(info.owner_id, info.conversation_id, agent_id)
            names = {a: row.name for a, row in info.agent_rows.items()}
            await self.adoption.wait(scope, cfg.model_call_timeout_ms / 1000)  # the last follow-up, if still running
            async with self.sessions() as session:
                stored = await repository.ensure(session, scope)
                pending = _pending_id(stored, agent_id)
                history = await load_history(session, info.conversation_id, info.user_message_seq, names, pending,
                                             agent_id=agent_id)  # fmt: skip
                adopted = await reusable(session, stored, pending)
            ctx = story_context(info.turn_id, info.user_message_id, agent_id, info.language)
            coordinator = self.coordinator(cfg, info.conversation_id)
            inp = BeforeActorInput(
                ctx, agent_id, persona_of(agent, info.language), adopted.envelope if adopted else stored.envelope,
                info.user_message_id, "" if info.continuation else info.user_text, info.user_message_seq, history,
                seed=cfg.seed, continuation=info.continuation, prior_failures=repository.prior_failures(stored),
                deferred=True,  # the settle pass and the plan cycle run beside the actor
            )  # fmt: skip
            result = await coordinator.before_actor(inp)
            if adopted is not None:  # the reply was adopted in the background, right after its turn
                result.tool_calls = [*adopted.tool_calls, *result.tool_calls]
            if result.beside is not None:
                beside = _beside(coordinator, inp, result, 2 * cfg.model_call_timeout_ms / 1000)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - Story never fails the agent's reply
            log.exception("story prepare failed for agent %s", agent_id)
            result = BeforeActorResult("no_story", diagnostics=[Diagnostic("story_error", f"{type(exc).__name__}: {exc}"[:500])])
        token = StoryToken(cfg, stored, result, _ms(t0), adopted_in_background=adopted is not None)
        rules = writer_stage_instructions(info.language)
        material = f"{rules}\n{result.guidance.content}" if result.guidance else None
        texts = (rules, *stage_texts(result.projection)) if material and result.projection else ()
        refuse = None
        if result.outcome == "advance_pending":  # the seed's recovery table: this request fails, retry later
            refuse = ("story_advance_pending: the world settlement of this agent's previous reply failed; "
                      "retry (after a few failures it is given up and quarantined)")
        return ActorPrep(stage_material=material, stage_texts=texts, token=token, refuse=refuse, beside=beside)

    async def reply_ready(self, info: TurnInfo, agent_id: str, prep: ActorPrep, message_id: str, text: str) -> ReplyExtras:
        """Finalize the state for the reply about to be saved and announce the expected outcome
        (saved with the message in one write); ``reply_saved`` then does the compare-and-swap."""
        token = prep.token
        if not isinstance(token, StoryToken):
            return ReplyExtras()
        beside = prep.beside
        if beside is not None and not beside.done():  # the pipeline awaits it first; a safety net
            await asyncio.wait({beside})
        token.beside_ms = beside.result() if beside is not None and not beside.cancelled() else None
        res, stored = token.result, token.stored
        await self._record_if_failed(token)
        outcome, revision = res.outcome, stored.revision if stored else None
        token.diagnostics = list(res.diagnostics)
        if res.write and stored is not None:
            token.final = finalize_turn(res, message_id, info.user_message_id, info.user_text,
                                        token.config.max_state_bytes)  # fmt: skip
            token.diagnostics += token.final.diagnostics
            outcome = "failed" if token.final.payload is None else token.final.status
            revision = stored.revision + 1
        token.announced = outcome
        usage = res.usage
        metric = StageMetric(stage="story", agent_id=agent_id, ms=round(token.prepare_ms, 3),
                             input_tokens=getattr(usage, "input_tokens", 0), output_tokens=getattr(usage, "output_tokens", 0),
                             estimated=bool(getattr(usage, "estimated", False)),
                             outcome="error" if outcome in ("failed", "stale_write_rejected") else "ok")  # fmt: skip
        return ReplyExtras(metadata={"story": self._metadata(token, outcome, revision, 0.0)}, metrics=[metric])

    async def reply_saved(self, info: TurnInfo, agent_id: str, prep: ActorPrep, message: Message) -> dict | None:
        token = prep.token
        if not isinstance(token, StoryToken) or token.final is None or token.stored is None:
            return None
        t0 = time.perf_counter()
        outcome, revision = await self._save(token.stored, token.final, token.result, token.diagnostics, token.config)
        if outcome == token.announced:
            return None  # the saved metadata already says so
        return {"story": self._metadata(token, outcome, revision, _ms(t0))}

    async def reply_dropped(self, info: TurnInfo, agent_id: str, prep: ActorPrep) -> None:
        if prep.beside is not None:
            prep.beside.cancel()
        token = prep.token
        if not isinstance(token, StoryToken):
            return
        await self._record_if_failed(token)

    @staticmethod
    def _metadata(token: StoryToken, outcome: str, revision: int | None, settle_ms: float) -> dict[str, Any]:
        res = token.result
        return {
            "outcome": outcome, "prepareOutcome": res.outcome, "revision": revision, "toolCalls": list(res.tool_calls),
            "diagnostics": msgspec.to_builtins(token.diagnostics), "usage": msgspec.to_builtins(res.usage),
            "prepareMs": token.prepare_ms, "besideMs": token.beside_ms, "settleMs": settle_ms,
            "guided": res.guidance is not None,
            "adoptedInBackground": token.adopted_in_background,
            # The staged beat is only accepted once later saved text shows it: not yet happened.
            "pendingStage": res.guidance.content if res.guidance and outcome == "waiting_for_acceptance" else None,
        }  # fmt: skip

    async def _save(self, stored: StoredState, fin: Any, res: BeforeActorResult, diagnostics: list[Diagnostic],
                    cfg: StorySettings) -> tuple[str, int | None]:
        """One CAS write; a conflict or an oversized state is reported, the reply stays."""
        last = last_outcome(fin.status, res.tool_calls)
        try:
            async with asyncio.timeout(cfg.post_turn_timeout_ms / 1000), self.sessions() as session:
                if fin.payload is None:  # over maxStateBytes: mark failed, keep the last good envelope
                    last = last_outcome("failed", res.tool_calls, failure_reason(fin.diagnostics), stored.last_outcome)
                    rev = await repository.compare_and_swap(session, stored.id, stored.revision, status="failed",
                                                            last_outcome=last)  # fmt: skip
                    return "failed", rev
                quarantine = msgspec.to_builtins(res.candidate.quarantine) if res.candidate else []
                rev = await repository.compare_and_swap(
                    session, stored.id, stored.revision, status=fin.status, envelope=fin.payload,
                    quarantine=quarantine, last_outcome=last,
                )  # fmt: skip
                return fin.status, rev
        except StaleStateWrite as exc:
            diagnostics.append(Diagnostic("stale_write_rejected", str(exc), {
                "expected": exc.expected_revision, "actual": exc.actual_revision}))  # fmt: skip
            return "stale_write_rejected", exc.actual_revision
        except TimeoutError:
            diagnostics.append(Diagnostic("story_save_timeout", f"over {cfg.post_turn_timeout_ms} ms"))
            return "failed", stored.revision

    async def _record_if_failed(self, token: StoryToken) -> None:
        """A prepare that will write nothing (and was not read-only) is recorded as a failure."""
        res, stored = token.result, token.stored
        if not res.write and stored is not None and res.outcome != "read_only":
            await self._record_failure(stored, res, token.config)

    async def _record_failure(self, stored: StoredState, res: BeforeActorResult, cfg: StorySettings) -> None:
        """A turn that wrote no state still says so in the row: the report shows what happened last
        (``init_failed`` with the reason) and how many turns in a row failed, not ``not_started``."""
        kind = failure_kind(res)
        status = stored.status
        if stored.envelope is None:
            status = "init_failed" if kind == "init_failed" else "failed"
        last = last_outcome(kind, res.tool_calls, failure_reason(res.diagnostics), stored.last_outcome)
        try:
            async with asyncio.timeout(cfg.post_turn_timeout_ms / 1000), self.sessions() as session:
                await repository.record_outcome(session, stored.id, stored.revision, status=status, last_outcome=last)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the report is informational; the reply must not fail for it
            log.exception("could not record the story outcome of row %s", stored.id)


# Diagnostics that explain a failure, most telling first when several are present.
_REASON_CODES = ("invalid_model_output", "model_timeout", "model_failed", "story_error", "state_too_large",
                 "story_state_unreadable", "prepared_mismatch", "pending_actor_missing", "advance_pending",
                 "story_init_failed")


def failure_kind(res: BeforeActorResult) -> str:
    if any(c == "story_init:failed" for c in res.tool_calls):
        return "init_failed"
    if res.outcome == "advance_pending":
        return "advance_pending"
    if any(d.code == "story_error" for d in res.diagnostics):
        return "error"
    return "prepare_failed"


def failure_reason(diagnostics: list[Diagnostic]) -> str:
    for code in _REASON_CODES:
        found = [d for d in diagnostics if d.code == code]
        if found:
            d = found[-1]
            return f"{d.code}: {d.message}"[:500] if d.message else d.code
    return diagnostics[-1].code if diagnostics else "unknown"


def last_outcome(kind: str, tool_calls: list[str], reason: str | None = None,
                 previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The row's ``last_outcome``: what happened, why, when, and failures in a row (0 after a success)."""
    out: dict[str, Any] = {"kind": kind, "at": utcnow().isoformat(), "toolCalls": list(tool_calls)}
    if reason is None:
        out["failures"] = 0
    else:
        out["reason"] = reason
        out["failures"] = int((previous or {}).get("failures") or 0) + 1
    return out
