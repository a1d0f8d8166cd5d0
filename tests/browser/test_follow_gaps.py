"""Following a conversation leaves no gap (issue 29): a turn that starts after the history was read
and before the /events stream opened still shows, and a running Continue that has saved no message
yet is replayed after a reload (the conversation names its running turn)."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.browser.test_daily_use import auth, new_direct_chat, open_chat

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def start_in_background(server: str, user: str, path: str, body: dict) -> threading.Thread:
    def run() -> None:
        httpx.post(f"{server}{path}", json=body, headers=auth(user), timeout=60)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def wait_for(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_turn_started_before_the_events_stream_opened_still_shows(page, server: str, simulator) -> None:
    conv = new_direct_chat(server, "gapper", "Between")
    messages = f"/v1/conversations/{conv['id']}/messages"
    held = {"done": False}
    turn: list[threading.Thread] = []

    def late_stream(route) -> None:
        # The history is read; before the follower's stream opens, a turn starts (another tab).
        if "turnId=" in route.request.url or held["done"]:
            route.continue_()
            return
        held["done"] = True
        turn.append(start_in_background(server, "gapper", f"/v1/conversations/{conv['id']}/turns",
                                        {"content": "said in the gap", "idempotencyKey": "gap-1"}))  # fmt: skip
        wait_for(lambda: httpx.get(f"{server}{messages}", headers=auth("gapper")).json()["items"])
        route.continue_()

    simulator.configure(tokens_per_s=12)
    try:
        page.route("**/events*", late_stream)
        open_chat(page, "gapper", conv)
        expect(page.locator(".msg.user .text")).to_have_text(["said in the gap"])
        expect(page.locator("#send")).to_be_disabled()  # the running turn was found and replayed
    finally:
        simulator.configure(tokens_per_s=0)
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1, timeout=20_000)
    expect(page.locator("#send")).to_be_enabled()
    turn[0].join(30)


def test_a_running_continue_with_no_message_yet_is_replayed_after_a_reload(page, server: str, simulator) -> None:
    conv = new_direct_chat(server, "continuer", "Onward")
    httpx.post(f"{server}/v1/conversations/{conv['id']}/messages", json={"content": "go on"},
               headers=auth("continuer")).raise_for_status()
    open_chat(page, "continuer", conv)
    simulator.configure(tokens_per_s=10)
    try:
        worker = start_in_background(server, "continuer", f"/v1/conversations/{conv['id']}/continue", {})
        wait_for(lambda: httpx.get(f"{server}/v1/conversations/{conv['id']}", headers=auth("continuer")).json()["runningTurnId"])
        page.reload()  # nothing of the Continue is saved yet: only the conversation knows it runs
        expect(page.locator(".msg.draft")).to_be_visible()
        expect(page.locator("#send")).to_be_disabled()
        expect(page.locator("#stop")).to_be_visible()
    finally:
        simulator.configure(tokens_per_s=0)
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1, timeout=20_000)
    expect(page.locator(".msg.draft")).to_have_count(0)
    expect(page.locator("#send")).to_be_enabled()
    worker.join(30)
