"""Issue 31: the README's "Story and turn shapes" examples are real responses of this test.

Each ``<!-- shape: NAME -->`` marker in README.md is followed by a JSON block. This test drives
real turns through the API (the scripted model of the Story tests), captures each response and
asserts that the README example has the same keys at every object level (a list: its first
element) and that the enum values it documents are ones the code emits. With
``COMPANION_WRITE_README_SHAPES=1`` it rewrites the blocks from the captured responses instead
(long lists cut to one element, long strings shortened).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, get_args, get_type_hints

from scheduling.selection.scorer import SelectedBy
from story.coordinator.envelope import Status
from story.coordinator.turn import FinalizeResult, Outcome
from tests.integration.conftest import ADMIN, ALICE
from tests.integration.story.conftest import CUE_PATROL, NORMAL, say, story_client, story_group, story_world
from tests.integration.turns.fakes import select as choose

README = Path(__file__).resolve().parents[3] / "README.md"
WRITE = os.environ.get("COMPANION_WRITE_README_SHAPES") == "1"
BLOCK = re.compile(r"(<!-- shape: ([a-z-]+) -->\n```json\n)(.*?)(\n```)", re.S)
ID = re.compile(r"[0-9a-f]{32}")
UNKNOWN = {"status": "unknown", "emotion": None, "new_pursuit": "", "line_progress": [], "completed_goals": []}

# What the code can emit, read from the code where it is a type.
PREPARE_OUTCOMES = set(get_args(Outcome))  # prepared | read_only | no_story | advance_pending
# metadata.story.outcome: the prepare's outcome when nothing is written, else the finalized status
# (waiting_for_acceptance | failed | state_too_large), or what the compare-and-swap write reported.
STORY_OUTCOMES = PREPARE_OUTCOMES | set(get_args(get_type_hints(FinalizeResult)["status"])) | {"stale_write_rejected"}
STATE_STATUSES = set(get_args(Status))  # the state's own status (report.status)
SCOPE_STATUSES = STATE_STATUSES | {"not_started", "init_failed", "unreadable", "reset"}
LAST_OUTCOME_KINDS = STATE_STATUSES | {"init_failed", "advance_pending", "error", "prepare_failed", "reset"}
QUARANTINE_STATUSES = {"quarantined", "released", "discarded", "reset"}
SUGGESTION_STATUSES = {"generating", "ready", "failed", "cleared"}
SELECTED_BY = set(get_args(SelectedBy))  # mention | llm | fallback | direct
REPLY_KINDS = {"primary", "cross"}
# The message metadata keys the turn-selection example shows (the rest is in "A turn").
SELECTION_META = ("selectedBy", "replyKind", "respondToAgentId", "crossReplyReason", "crossReplyRound")

ENUMS: dict[str, dict[tuple[str, ...], set[str]]] = {
    "story-metadata": {("outcome",): STORY_OUTCOMES, ("prepareOutcome",): PREPARE_OUTCOMES},
    "story-status": {("status",): SCOPE_STATUSES, ("report", "status"): STATE_STATUSES,
                     ("lastOutcome", "kind"): LAST_OUTCOME_KINDS},
    "story-reset": {("previousStatus",): SCOPE_STATUSES},
    "story-quarantine": {("*", "status"): QUARANTINE_STATUSES, ("*", "kind"): {"event", "reset"}},
    "suggestion-record": {("status",): SUGGESTION_STATUSES},
    "turn-selection": {("agentMessages", "*", "metadata", "selectedBy"): SELECTED_BY,
                       ("agentMessages", "*", "replyKind"): REPLY_KINDS,
                       ("orchestration", "selection", "decidedBy"): SELECTED_BY},
}


def structure(value: Any) -> Any:
    """Keys at every object level; a list stands for the structure of its first element."""
    if isinstance(value, dict):
        if value and all(ID.fullmatch(k) for k in value):  # a map keyed by ids (selection.selectedBy)
            return {"<id>": structure(next(iter(value.values())))}
        return {k: structure(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [structure(value[0])] if value else []
    return None  # keys only: a value's type may vary (null or a number)


def values(doc: Any, path: tuple[str, ...]) -> list[Any]:
    if not path:
        return [doc]
    head, rest = path[0], path[1:]
    if head == "*":
        return [v for item in doc or [] for v in values(item, rest)]
    return values(doc[head], rest) if isinstance(doc, dict) and head in doc else []


def trim(value: Any, *, keep: int = 1) -> Any:
    if isinstance(value, dict):
        return {k: trim(v) for k, v in value.items()}
    if isinstance(value, list):  # scalars (ids, positions, tool calls) keep a few, objects one
        scalars = all(not isinstance(v, (dict, list)) for v in value)
        return [trim(v) for v in value[:4 if scalars else keep]]
    if isinstance(value, str) and len(value) > 90:
        return value[:80] + "…"
    return value


async def capture(settings) -> dict[str, Any]:
    world = story_world()
    default_actor = world.handlers["actor"]
    # One event cued away, then settled "unknown" three times: it is quarantined on the 4th turn.
    world.handlers["story.prepare"] = [NORMAL, CUE_PATROL, NORMAL, NORMAL]
    world.handlers["story.settle"] = UNKNOWN
    world.handlers["actor"] = ["莉娅点点头。", "巡逻队来了。", "莉娅皱眉。", "莉娅叹气。"]
    shapes: dict[str, Any] = {}
    async with story_client(settings, world) as api:
        conv, (lia, _, _) = await story_group(api, world)
        for text in ("你好", "我去迎接巡逻队。", "然后呢？"):
            await say(api, conv["id"], text)
        last = await say(api, conv["id"], "还有吗？")
        shapes["story-metadata"] = last["agentMessages"][0]["metadata"]["story"]
        base = f"/v1/conversations/{conv['id']}/story/{lia['id']}"
        status = await api.client.get(base, headers=ALICE)
        assert status.status_code == 200, status.text
        shapes["story-status"] = status.json()
        listed = await api.client.get(f"{base}/quarantine?status=quarantined", headers=ADMIN)
        assert listed.status_code == 200 and len(listed.json()) == 1, listed.text
        shapes["story-quarantine"] = listed.json()
        latest = await api.client.get(f"/v1/conversations/{conv['id']}/suggestions/latest", headers=ALICE)
        assert latest.status_code == 200, latest.text
        shapes["suggestion-record"] = latest.json()
        reset = await api.client.post(f"{base}/reset", headers=ALICE)
        assert reset.status_code == 200, reset.text
        shapes["story-reset"] = reset.json()

        # Two agents chosen by the LLM selector, then a third answers the first (a cross reply).
        world.handlers["actor"] = default_actor
        conv2, (lia2, heng2, tiao2) = await story_group(api, world, reply_limit=2, story={"enabled": False})
        world.handlers["select"] = choose(lia2["id"], heng2["id"], reason="两个人都适合回答")
        world.handlers["cross_reply.plan"] = lambda req: {"reply": {"fromAgentId": tiao2["id"], "toAgentId": lia2["id"]},
                                                          "reason": "补充一个轻松的角度"}  # fmt: skip
        turn = await say(api, conv2["id"], "大家怎么看？")
    cross = turn["agentMessages"][2]["metadata"]["orchestration"]
    assert cross["crossReplyPlan"]["fromAgentId"] == tiao2["id"], cross  # the cross reply keeps its plan too
    kinds = [(m["replyKind"], m["metadata"]["selectedBy"]) for m in turn["agentMessages"]]
    assert kinds == [("primary", "llm"), ("primary", "llm"), ("cross", "llm")], kinds
    orch = turn["orchestration"]
    shapes["turn-selection"] = {
        "agentMessages": [{**{k: m[k] for k in ("id", "agentId", "replyKind", "respondToAgentId")},
                           "metadata": {k: m["metadata"][k] for k in SELECTION_META}}
                          for m in turn["agentMessages"]],
        "orchestration": {"selection": orch["selection"], "crossReplyPlan": orch["crossReplyPlan"]},
    }  # fmt: skip
    return shapes


def rendered(name: str, shape: Any) -> str:
    if name == "turn-selection":  # every reply of the turn, each with its metadata excerpt
        shape = {**shape, "agentMessages": shape["agentMessages"],
                 "orchestration": trim(shape["orchestration"])}
    else:
        shape = trim(shape)
    return json.dumps(shape, ensure_ascii=False, indent=2)


async def test_readme_shape_examples_match_real_responses(settings) -> None:
    shapes = await capture(settings)
    for name, shape in shapes.items():  # the captured values are ones the code is known to emit
        for path, allowed in ENUMS[name].items():
            assert set(values(shape, path)) <= allowed, (name, path, values(shape, path))
    text = README.read_text(encoding="utf-8")
    if WRITE:
        text = BLOCK.sub(lambda m: m[1] + (rendered(m[2], shapes[m[2]]) if m[2] in shapes else m[3]) + m[4], text)
        README.write_text(text, encoding="utf-8")
    blocks = {m[2]: m[3] for m in BLOCK.finditer(text)}
    assert set(blocks) == set(shapes), f"README shape markers {sorted(blocks)} != captured {sorted(shapes)}"
    for name, raw in blocks.items():
        example = json.loads(raw)
        assert structure(example) == structure(shapes[name]), (
            f"README shape {name!r} differs from the real response; regenerate with COMPANION_WRITE_README_SHAPES=1")
        for path, allowed in ENUMS[name].items():
            found = values(example, path)
            assert found and set(found) <= allowed, (name, path, found, allowed)
