"""``NarrativeDealBeatTool``: no model; picks this turn's goal and guidance (see ``narrative.deal``)."""

from __future__ import annotations

from typing import Literal

import msgspec

from story.narrative.deal import BeatPacket, deal_beat
from story.narrative.types import NarrativeSnapshot
from story.tools.common import Diagnostic, StoryContext, StoryTool, Usage


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

    async def _run(self, inp: DealInput) -> DealResult:
        snap, packet = deal_beat(inp.snapshot, inp.phase, inp.context.turn_id, inp.hold)
        diags = []
        if inp.hold:
            diags.append(Diagnostic("deal_paused_unresolved_event"))
        elif packet.pending is None:
            diags.append(Diagnostic("no_eligible_goal"))
        return DealResult(snap, packet, ["plan-cycle"] if snap.need_plan else [], diags)
