"""Seams where other features join a turn without the pipeline knowing them.

A hook object implements any subset of these coroutines (looked up by name):

* ``turn_starting(conversation_id)`` — right after a new user message was stored (e.g. auto-reply
  staleness: cancel in-flight suggestion generation and clear old suggestions);
* ``before_actor(info, agent_id) -> ActorPrep`` — before a selected agent's primary reply (the
  Story coordinator adds its stage material here);
* ``after_reply(info, agent_id, prep, message | None) -> dict | None`` — after that reply was saved
  (or dropped: ``message`` is None); returned keys are merged into the message's metadata;
* ``turn_finished(info, messages, emit) -> dict | None`` — after all replies are saved; returned
  keys are merged into the turn result (e.g. ``suggestions``).
"""

from __future__ import annotations

from typing import Any

import msgspec

from scheduling import AgentProfile, GroupMessage, UserEmotion, UserIntent


class TurnInfo(msgspec.Struct, kw_only=True):
    turn_id: str
    owner_id: str
    conversation_id: str
    conversation_kind: str
    settings: dict[str, Any]
    language: str
    user_message_id: str
    user_message_seq: int
    user_text: str
    agents: list[AgentProfile]
    agent_rows: dict[str, Any]
    recent: list[GroupMessage]
    emotion: UserEmotion | None = None
    intent: UserIntent | None = None


class ActorPrep(msgspec.Struct, kw_only=True):
    stage_material: str | None = None
    token: Any = None


def hooks_with(hooks: list[Any], method: str) -> list[Any]:
    return [h for h in hooks if callable(getattr(h, method, None))]
