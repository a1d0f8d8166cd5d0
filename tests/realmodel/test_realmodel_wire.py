"""Group turns (zh and en, with a mention), suggestions and the Story walk-through against a real
llama.cpp server: every structured stage decodes on the model path (source ``llm``, never the
offline fallback). Repairs are allowed (a 135M model may trip a semantic check) and recorded."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from tests.integration.conftest import ALICE, Api
from tests.realmodel.group import OWN_SUGGESTIONS_OFF, suggestions_on

DECODE_FAILURES = ("not valid JSON", "does not match the schema", "cut off", "was empty")
STORY_ON = {"enabled": True, "modelConfigId": "default", "modelCallTimeoutMs": 180_000}


async def _agents(api: Api, names: tuple[str, ...]) -> list[dict[str, Any]]:
    caps = [{"comfort": 0.95}, {"analysis": 0.95}, {"playful": 0.95}]
    return [await api.agent(n, capabilities=c) for n, c in zip(names, caps)]


async def _turn(api: Api, conv_id: str, text: str, attempts: int = 3) -> dict[str, Any]:
    """A turn; sent again (as a user would) if a 135M model's prose was dropped by the quality
    check. That is prose quality, not the wire: structured stages are asserted separately. Once
    in four runs on the 2-core machine the local server answered an actor call ``model_unavailable``
    for a few seconds (cause not found; its log showed nothing); a user retries after a pause."""
    for attempt in range(attempts):
        resp = await api.client.post(f"/v1/conversations/{conv_id}/turns", json={"content": text}, headers=ALICE)
        assert resp.status_code in (200, 201), resp.text
        turn = resp.json()
        error = turn.get("error") or {}
        if error.get("code") != "all_replies_dropped":
            break
        # Printed (pytest shows it with a failure) so that the next time it happens, the model's
        # own words (HTTP status, stream cut, connection) say which it was.
        print(f"turn attempt {attempt + 1} dropped every reply: {error.get('details')}")
        if "model_unavailable" in str(error.get("details")) and attempt < attempts - 1:
            await asyncio.sleep(5)
    return turn


CUT_OFF = "cut off by the token limit"


def _model_path(run: dict[str, Any], stage: str, *, cut_off_allowed: bool = False) -> None:
    """Answered by the model and decoded. A semantic rule a 135M model may break (e.g. the same
    agent as speaker and addressee) is a fallback with named problems; a wire failure never is.
    ``cut_off_allowed``: an answer that ran to its token budget is the model looping, not the wire
    (the cross-reply plan: SmolLM2-135M once looped inside its JSON twice running, in a fresh-clone
    run on SQLite, as it did in ``story.settle`` below)."""
    if run["source"] == "llm":
        return
    error = run.get("error") or {}
    assert error.get("code") == "invalid_model_output", (stage, run)
    problems = [p for p in error.get("problems") or [] if not (cut_off_allowed and CUT_OFF in p)]
    assert error.get("problems") and not [p for p in problems if any(w in p for w in DECODE_FAILURES)], (stage, run)


def _structured_stages_on_model_path(turn: dict[str, Any]) -> None:
    orch = turn["orchestration"]
    _model_path(orch["intent"]["run"], "intent")
    _model_path(orch["emotion"]["run"], "emotion")
    selection = orch["selection"]
    if selection.get("llm", {}).get("source") != "skipped":
        _model_path(selection["llm"], "select")
        assert selection["llmProblems"] == [], selection
    if "crossReplyPlan" not in orch:
        # The plan is asked only after a kept reply. A 135M model that speaks no Chinese may have
        # every reply dropped three times running (prose checks: a leak, an echo, a label): the
        # stages above were still decoded on the model path, and the English test, whose reply
        # is asserted, covers the plan's wire.
        assert turn["status"] == "failed" and turn["error"]["code"] == "all_replies_dropped", turn.get("error")
        return
    for run in orch["crossReplyPlan"]["runs"]:
        _model_path(run, "cross_reply.plan", cut_off_allowed=True)


async def test_zh_group_turns_decode_every_structured_stage_on_the_model_path(real_api: Api):
    agents = await _agents(real_api, ("林溪", "周衡", "阿乐"))
    # mode llm: the selector is asked whatever the scorer's margin (this test is about its wire)
    conv = await real_api.group(*(a["id"] for a in agents), settings={"replyLimit": 1, "selection": {"mode": "llm"},
                                                                  **OWN_SUGGESTIONS_OFF})
    turn = await _turn(real_api, conv["id"], "我今天有点难过，不知道该怎么办。")
    _structured_stages_on_model_path(turn)
    assert turn["orchestration"]["selection"]["decidedBy"] in ("llm", "mention")


async def test_en_group_turn_with_a_mention_and_suggestions_on_the_model_path(real_api: Api):
    agents = await _agents(real_api, ("Lia", "Heng", "Joy"))
    conv = await real_api.group(*(a["id"] for a in agents), settings={"language": "en", "replyLimit": 2, **OWN_SUGGESTIONS_OFF})
    turn = await _turn(real_api, conv["id"], "@Heng should I take the new job offer?")
    _structured_stages_on_model_path(turn)
    primary = [m for m in turn["agentMessages"] if m["replyKind"] == "primary"]
    assert primary and primary[0]["agentId"] == agents[1]["id"]
    assert primary[0]["metadata"]["selectedBy"] == "mention"
    anchor = primary[0]["id"]
    await suggestions_on(real_api, conv["id"])
    resp = await real_api.client.post(f"/v1/conversations/{conv['id']}/messages/{anchor}/suggestions", json={},
                                      headers=ALICE)
    body = resp.json()
    if resp.status_code == 201:
        assert body["fallback"] is False and len(body["options"]) == 3, body
    else:  # a 135M model may repeat an option: a quality rule, never a wire failure
        assert resp.status_code == 502 and body["code"] == "auto_reply_generation_failed", body
        attempts = body["details"]["problems"]
        decoded = [a for a in attempts if not any(w in p for p in a for w in DECODE_FAILURES)]
        assert decoded, attempts  # at least one answer came back as schema-following JSON
        # The only other failure allowed is an answer that ran to the seed's maxTokens (384): three
        # options of up to 160 characters and llama.cpp's grammar, which lets the model put up to
        # ~22 whitespace tokens after every bracket, comma and colon, can need more than that.
        cut = "output was cut off at maxTokens"
        assert all(any(cut in p for p in a) for a in attempts if a not in decoded), attempts


WIRE_FAILURES = ("model_failed", "model_timeout")


def _story_calls_decoded(story: dict[str, Any]) -> None:
    """No Story call failed on the wire or came back as text that is not the schema's JSON. An
    answer cut off at its token budget is allowed: SmolLM2-135M once looped inside a string of
    ``story.settle`` until the budget ran out (CI, on PostgreSQL); that is the model's behaviour,
    repaired or recorded as ``settle_unknown``, not a decode failure of the schema path."""
    for d in story["diagnostics"]:
        assert d["code"] not in WIRE_FAILURES, d
        if d["code"] == "invalid_model_output" and CUT_OFF not in d["message"]:
            assert not any(w in d["message"] for w in DECODE_FAILURES), d


async def _report_settled(api: Api, conv_id: str, agent_id: str, timeout_s: float = 300.0) -> dict[str, Any]:
    """The Story report once the background initialisation has ended (or ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while True:
        report = (await api.client.get(f"/v1/conversations/{conv_id}/story/{agent_id}", headers=ALICE)).json()
        if report["status"] != "not_started" or time.monotonic() > deadline:
            return report
        await asyncio.sleep(0.5)


async def test_story_walkthrough_starts_and_advances_on_the_model_path(real_api: Api):
    (lia,) = await _agents(real_api, ("Lia",))
    resp = await real_api.client.post("/v1/conversations", json={"kind": "direct", "agentIds": [lia["id"]],
                                      "settings": {"language": "en", "story": STORY_ON, **OWN_SUGGESTIONS_OFF}}, headers=ALICE)
    assert resp.status_code == 201, resp.text
    conv = resp.json()
    # The Story is set up in the background when the conversation is created (initialisation
    # ahead): wait for it; if it failed, the first turn initialises in front of the actor.
    before = await _report_settled(real_api, conv["id"], lia["id"])
    ahead = before["status"] == "initialized"
    if ahead:
        assert "story_init:ok" in before["lastOutcome"]["toolCalls"] and before["revision"] == 1, before
    revisions, outcomes = [], []
    for i, text in enumerate(["I hand Lia the copper key, but I do not enter the city yet.",
                              "Never mind checking it, give the key back to me.",
                              "I go to meet the patrol."]):
        # Five tries: a Story turn's prose is two drafts of SmolLM2's each, and once in CI (SQLite)
        # three tries in a row were all dropped (an echo, a loop, then its own name as a speaker
        # label 'LIA:' after its opening, twice); the Story's calls themselves had decoded.
        turn = await _turn(real_api, conv["id"], text, attempts=5)
        assert turn["agentMessages"], turn.get("error")
        story = turn["agentMessages"][0]["metadata"]["story"]
        _story_calls_decoded(story)
        revisions.append(story["revision"])
        outcomes.append(story["outcome"])
        if i == 0:  # the first world was built by the model; the user then edits the reply
            assert story["outcome"] == "waiting_for_acceptance" and (ahead or "story_init:ok" in story["toolCalls"]), story
            edit = await real_api.client.patch(
                f"/v1/conversations/{conv['id']}/messages/{turn['agentMessages'][0]['id']}",
                json={"content": "Lia only glances at the key and does not take it."}, headers=ALICE)
            assert edit.status_code == 200, edit.text
    assert revisions[0] == (2 if ahead else 1) and revisions == sorted(revisions), (revisions, outcomes)
    report = (await real_api.client.get(f"/v1/conversations/{conv['id']}/story/{lia['id']}", headers=ALICE)).json()
    assert report["status"] == "waiting_for_acceptance" and report["revision"] == revisions[-1], report
