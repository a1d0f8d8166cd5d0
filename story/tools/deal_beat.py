"""``NarrativeDealBeatTool``: no model; picks this turn's goal and guidance (see ``narrative.deal``).

``NarrativeDealBeatTool(options=NarrativeDealOptions(policy=...))`` deals under that policy
(``deal_every_turns``, ``emotion_enabled``, ...): it replaces the snapshot's policy for the call and
the returned snapshot carries it, like the narrative model tools' ``options.policy``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import msgspec

from story.narrative.deal import BeatPacket, deal_beat
from story.narrative.state import with_policy
from story.narrative.types import NarrativePolicy, NarrativeSnapshot
from story.tools.common import Diagnostic, StoryContext, StoryTool, ToolHooks, Usage


@dataclass(frozen=True)
class NarrativeDealOptions:
    """``policy`` replaces the snapshot's narrative policy for each deal; no model, so no prompt."""

    policy: NarrativePolicy | None = None


class DealInput(msgspec.Struct, frozen=True):
    context: StoryContext
    snapshot: NarrativeSnapshot
    phase: Literal["start", "develop", "end"]
    hold: bool = False  # an unresolved event pauses new dealing


class DealResult(msgspec.Struct, frozen=True):
    snapshot: NarrativeSnapshot
    packet: BeatPacket
    next_actions: list[str] = []
    diagnostics: list[Diagnostic] = []
    usage: Usage = Usage()


class NarrativeDealBeatTool(StoryTool[DealInput, DealResult]):
    name = "narrative_deal_beat"

    def __init__(self, options: NarrativeDealOptions | None = None, hooks: ToolHooks | None = None) -> None:
        super().__init__(hooks)
        self.options = options or NarrativeDealOptions()

    async def _run(self, inp: DealInput) -> DealResult:
        n = with_policy(inp.snapshot, self.options.policy)
        snap, packet = deal_beat(n, inp.phase, inp.context.turn_id, inp.hold)
        diags = []
        if inp.hold:
            diags.append(Diagnostic("deal_paused_unresolved_event"))
        elif packet.pending is None:
            diags.append(Diagnostic("no_eligible_goal"))
        return DealResult(snap, packet, ["plan-cycle"] if snap.need_plan else [], diags)
