"""A group chat in a real browser: an admin creates agents, a user creates a group and chats; the
replies, the why-panel, the suggestion chips and the Story panel work, at desktop and phone width."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.browser.conftest import PHONE, shot, token

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect


def sign_in_with_token(page, user: str, admin: bool = False) -> None:
    page.goto("/")
    page.fill("#token-input", token(user, admin))
    page.click("#token-submit")
    expect(page.locator("#who")).to_contain_text(user)


def sign_in_with_dev_button(page, user: str) -> None:
    page.goto("/")
    page.fill("#dev-user", user)
    page.click("#dev-token")
    expect(page.locator("#who")).to_have_text(user)


def create_agent(page, name: str, headline: str, capability: str) -> None:
    page.click("#agent-new")
    page.fill("#agent-name", name)
    page.fill("#agent-aliases", name.lower())
    page.fill("#agent-headline", headline)
    page.fill("#agent-personalityPrompt", f"{name} is {headline}.")
    page.fill(f"#cap-{capability}", "0.9")
    page.click("#agent-save")
    expect(page.locator(".agent-name", has_text=name)).to_be_visible()


def open_english_direct_chat(page, server: str, user: str, agent_name: str) -> dict:
    """An admin creates ``agent_name``; ``user`` gets an English direct chat with it, signs in and opens it."""
    admin = {"Authorization": f"Bearer {token('root', admin=True)}"}
    agent = httpx.post(f"{server}/v1/agents", json={"name": agent_name}, headers=admin).json()
    conv = httpx.post(f"{server}/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]],
                      "settings": {"language": "en"}}, headers={"Authorization": f"Bearer {token(user)}"}).json()  # fmt: skip
    sign_in_with_dev_button(page, user)
    page.goto(f"/#/c/{conv['id']}")
    return conv


def user_messages(server: str, conversation_id: str, user: str) -> list[dict]:
    resp = httpx.get(f"{server}/v1/conversations/{conversation_id}/messages?limit=100",
                     headers={"Authorization": f"Bearer {token(user)}"})  # fmt: skip
    resp.raise_for_status()
    return [m for m in resp.json()["items"] if m["role"] == "user"]


def test_a_group_chat_from_agents_to_story(page, server: str, backend: str) -> None:
    page.goto("/")
    expect(page.locator("#dev-token")).to_be_visible()
    shot(page, f"sign-in-desktop-{backend}")
    sign_in_with_token(page, "root", admin=True)
    page.click("nav >> text=Agents")
    create_agent(page, "Lia", "a gentle listener", "comfort")
    create_agent(page, "Heng", "a planner", "analysis")
    page.locator(".agent-card", has_text="Heng").locator(".agent-edit").click()
    page.fill("#agent-headline", "a rational planner")
    page.click("#agent-save")
    expect(page.locator(".agent-card", has_text="Heng")).to_contain_text("a rational planner")
    shot(page, f"agents-desktop-{backend}")

    page.click("#sign-out")
    sign_in_with_dev_button(page, "alice")
    page.click("#new-conversation")
    page.check("#conv-members label:has-text('Lia') input")
    page.check("#conv-members label:has-text('Heng') input")
    page.click("#conv-create")
    expect(page.locator("#chat-title")).to_have_text("Lia, Heng")
    conversation_id = page.url.rsplit("/", 1)[1]

    # A turn over SSE: the user message, the trace (emotion, selection), the replies, the chips.
    page.fill("#composer-input", "Lia, Heng: I feel sad today, what should I do?")  # mentions: both reply
    page.click("#send")
    expect(page.locator(".msg.user")).to_have_count(1)
    expect(page.locator(".trace")).to_contain_text("decided by")
    for name in ("Lia", "Heng"):  # each one primary reply (a cross reply, "→ Heng", may come too)
        expect(page.locator(".msg.agent:not(.draft)", has=page.locator(".name", has_text=name),
                            has_not=page.locator(".badge", has_text="→"))).to_have_count(1)  # fmt: skip
    expect(page.locator(".chip").first).to_be_visible()
    expect(page.locator("#send")).to_be_enabled()
    replies = page.locator(".msg.agent").count()
    assert replies >= 1
    assert page.locator(".chip").count() <= 3

    # The why-panel: every candidate with its score, who decided, the emotion's source.
    page.locator(".msg.agent").first.locator(".why-btn").click()
    table = page.locator("#why-candidates")
    expect(table.locator("thead th")).to_have_count(3)  # a label column and one per member
    expect(table.locator("thead")).to_contain_text("Lia")
    expect(table.locator("thead")).to_contain_text("Heng")
    scores = table.locator("tr.score-row td").all_inner_texts()
    assert len(scores) == 2 and all(float(s) >= 0 for s in scores), scores
    assert page.locator("#why-selected-by").inner_text() in {"mention", "llm", "fallback", "direct"}
    assert page.locator("#why-emotion-source").inner_text() in {"llm", "fallback"}
    shot(page, f"chat-why-desktop-{backend}")
    page.set_viewport_size(PHONE)
    shot(page, f"chat-why-phone-{backend}")
    page.click("#side-close")
    shot(page, f"chat-phone-{backend}")
    page.set_viewport_size({"width": 1280, "height": 800})

    # A chip fills the composer and sends nothing; typing clears the chips.
    chip = page.locator(".chip").first
    text = chip.inner_text()
    chip.click()
    expect(page.locator("#composer-input")).to_have_value(text)
    page.wait_for_timeout(300)
    expect(page.locator(".msg.user")).to_have_count(1)
    assert len(user_messages(server, conversation_id, "alice")) == 1
    page.locator("#composer-input").press("End")
    page.keyboard.type(" !")
    expect(page.locator(".chip")).to_have_count(0)

    # The Story panel, then an edit of Lia's last message: the next turn adopts it (new revision).
    page.click("#story-btn")
    lia_card = page.locator("#story-panel .story-agent", has_text="Lia")
    # (the codes are under the card's closed "details": read as text, not as what is drawn)
    expect(lia_card.locator(".story-status")).not_to_have_text("not_started")
    before = int(lia_card.locator(".story-revision").text_content())
    lia_message = page.locator(".msg.agent", has=page.locator(".name", has_text="Lia")).last
    lia_message.locator(".edit-btn").click()
    page.fill(".edit-input", "Let us take a slow walk by the river together.")
    page.click(".edit-save")
    expect(page.locator(".msg.agent .text", has_text="slow walk by the river")).to_be_visible()
    shot(page, f"story-desktop-{backend}")

    # Sending clears the chips at once; the mention makes Lia reply, so her Story moves on.
    page.fill("#composer-input", "Lia, that sounds nice. Tell me more?")
    page.click("#suggest")
    expect(page.locator(".chip").first).to_be_visible()
    page.click("#send")
    expect(page.locator(".chip")).to_have_count(0)
    expect(page.locator(".msg.user")).to_have_count(2)
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator(".trace")).to_have_count(2)
    for _ in range(20):  # the Story settles during or just after the turn; the panel refreshes
        if int(lia_card.locator(".story-revision").text_content()) > before:
            break
        page.wait_for_timeout(500)
        page.click("#story-refresh")
    story = httpx.get(f"{server}/v1/conversations/{conversation_id}/story/{lia_card.get_attribute('data-agent-id')}",
                      headers={"Authorization": f"Bearer {token('alice')}"}).json()  # fmt: skip
    assert int(lia_card.locator(".story-revision").text_content()) > before, story

    # Regenerate an agent's last message: a new reply in place, or the reason it was rejected.
    last = page.locator(".msg.agent").last
    with page.expect_response(lambda r: r.url.endswith("/regenerate")) as regenerated:
        last.locator(".regen-btn").click()
    if regenerated.value.status != 200:  # e.g. the simulator's new reply failed the quality check
        assert regenerated.value.json()["code"] == "regeneration_rejected"
        expect(page.locator("#toast")).to_contain_text("Could not regenerate")


def test_a_user_cannot_see_another_users_conversation(page, server: str) -> None:
    admin = {"Authorization": f"Bearer {token('root', admin=True)}"}
    alice = {"Authorization": f"Bearer {token('alice')}"}
    agent = httpx.post(f"{server}/v1/agents", json={"name": "Mo"}, headers=admin).json()
    conv = httpx.post(f"{server}/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]], "title": "alice only"},
                      headers=alice).json()  # fmt: skip

    sign_in_with_dev_button(page, "bob")
    expect(page.locator("#conv-list")).not_to_contain_text("alice only")
    page.goto(f"/#/c/{conv['id']}")
    expect(page.locator("#not-found")).to_be_visible()
    expect(page.locator("#composer-input")).to_have_count(0)
    expect(page.locator("nav >> text=Analytics")).to_be_hidden()


def test_a_second_turn_while_one_runs_disables_the_composer(page, server: str, simulator) -> None:
    """A turn sent elsewhere (another device, the API) shows here as it runs (the page follows the
    conversation's events): Send is off until it ends, Enter says why, and the typed text stays."""
    admin = {"Authorization": f"Bearer {token('root', admin=True)}"}
    dave = {"Authorization": f"Bearer {token('dave')}"}
    agent = httpx.post(f"{server}/v1/agents", json={"name": "Slow"}, headers=admin).json()
    conv = httpx.post(f"{server}/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]], "settings": {"language": "en"}},
                      headers=dave).json()  # fmt: skip
    sign_in_with_dev_button(page, "dave")
    page.goto(f"/#/c/{conv['id']}")
    expect(page.locator("#composer-input")).to_be_enabled()
    page.wait_for_timeout(300)  # the page follows the conversation's events

    simulator.configure(latency_ms=500)
    with ThreadPoolExecutor(1) as pool:
        try:
            running = pool.submit(httpx.post, f"{server}/v1/conversations/{conv['id']}/turns",
                                  json={"content": "a slow one"}, headers=dave, timeout=60)  # fmt: skip
            expect(page.locator(".msg.user .text")).to_have_text(["a slow one"])
            expect(page.locator("#send")).to_be_disabled()
            page.fill("#composer-input", "and another")
            page.locator("#composer-input").press("Enter")
            expect(page.locator("#turn-status")).to_contain_text("send when it is done")
            expect(page.locator("#composer-input")).to_have_value("and another")  # kept for later
            assert running.result().status_code == 201
        finally:
            simulator.configure(latency_ms=60)
    expect(page.locator("#send")).to_be_enabled(timeout=15_000)
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1)
    page.click("#send")
    expect(page.locator(".msg.user")).to_have_count(2)


def test_a_turn_whose_replies_are_all_dropped_says_why(page, server: str, simulator, backend: str) -> None:
    conv = open_english_direct_chat(page, server, "erin", "Quiet")
    simulator.configure(fault_rate=1.0, faults=["empty"])  # every model answer is empty
    try:
        page.fill("#composer-input", "hello?")
        page.click("#send")
        expect(page.locator(".notice.failed")).to_contain_text("This turn failed")
        expect(page.locator(".notice.failed")).to_contain_text("Quiet")
    finally:
        simulator.configure(fault_rate=0.0)
    expect(page.locator(".msg.user")).to_have_count(1)  # the user message stays
    expect(page.locator(".msg.agent")).to_have_count(0)
    expect(page.locator("#send")).to_be_enabled()
    shot(page, f"turn-failed-desktop-{backend}")


def test_stop_ends_a_running_turn_and_keeps_nothing_half_written(page, server: str, simulator) -> None:
    conv = open_english_direct_chat(page, server, "erin", "Unhurried")
    expect(page.locator("#stop")).to_be_hidden()
    simulator.configure(latency_ms=1500)
    try:
        page.fill("#composer-input", "tell me a long story")
        page.click("#send")
        expect(page.locator("#stop")).to_be_visible()
        page.click("#stop")
        expect(page.locator(".notice")).to_contain_text("Stopped", timeout=10_000)
        expect(page.locator("#stop")).to_be_hidden()
    finally:
        simulator.configure(latency_ms=60)
    shot(page, "stopped-turn")
    items = httpx.get(f"{server}/v1/conversations/{conv['id']}/messages", headers={"Authorization": f"Bearer {token('erin')}"}).json()["items"]
    assert [m["role"] for m in items] == ["user"], items  # the user's message stays; no reply was saved
    expect(page.locator("#composer-input")).to_be_enabled()
    page.fill("#composer-input", "ok, a short one then")
    page.click("#send")
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1, timeout=20_000)


def test_swipe_between_versions_and_rewind_to_a_message(page, server: str) -> None:
    conv = open_english_direct_chat(page, server, "fay", "Swiper")
    for line in ("first, tell me about the sea", "now about the mountains"):
        page.fill("#composer-input", line)
        page.click("#send")
        expect(page.locator("#composer-input")).to_be_enabled(timeout=20_000)
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(2, timeout=20_000)
    newest = page.locator(".msg.agent:not(.draft)").last
    original = newest.locator(".text").inner_text()
    newest.locator(".regen-btn").click()
    expect(newest.locator(".version-label")).to_have_text("version 2", timeout=20_000)
    newest = page.locator(".msg.agent:not(.draft)").last
    regenerated = newest.locator(".text").inner_text()
    assert regenerated != original
    newest.locator(".version-prev").click()
    expect(page.locator(".msg.agent:not(.draft)").last.locator(".version-label")).to_have_text("version 1 of 2")
    expect(page.locator(".msg.agent:not(.draft)").last.locator(".text")).to_have_text(original)
    shot(page, "swiped-version")

    page.on("dialog", lambda dialog: dialog.accept())
    first_reply = page.locator(".msg.agent:not(.draft)").first
    first_reply.locator(".rewind-btn").click()
    expect(page.locator(".msg:not(.draft)")).to_have_count(2)
    expect(page.locator(".toast").last).to_contain_text("2 messages removed")
    expect(page.locator(".trace")).to_have_count(1)  # the removed turn's "why" line went with it
    expect(page.locator(f"[data-conversation-id='{conv['id']}'] .kind")).to_contain_text("2 messages")
    shot(page, "rewound")
    items = httpx.get(f"{server}/v1/conversations/{conv['id']}/messages", headers={"Authorization": f"Bearer {token('fay')}"}).json()["items"]
    assert [m["content"] for m in items][-1] == "first, tell me about the sea"
    page.reload()  # the rewound turn stays gone
    expect(page.locator(".msg:not(.draft)")).to_have_count(2, timeout=10_000)
    expect(page.locator(".msg.user .text")).to_have_text(["first, tell me about the sea"])


def test_write_for_me_streams_a_line_into_the_composer_and_never_sends_it(page, server: str) -> None:
    conv = open_english_direct_chat(page, server, "gil", "Writer")
    page.fill("#composer-input", "tell me about the sea")
    page.click("#send")
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1, timeout=20_000)
    expect(page.locator("#composer-input")).to_be_enabled(timeout=20_000)
    page.fill("#composer-input", "Honestly")
    page.click("#write-for-me")
    expect(page.locator("#write-for-me")).to_be_enabled(timeout=20_000)
    line = page.locator("#composer-input").input_value()
    assert line.startswith("Honestly") and len(line) > len("Honestly ") + 5, line
    shot(page, "write-for-me")
    page.set_viewport_size(PHONE)
    expect(page.locator("#send")).to_be_in_viewport()
    shot(page, "write-for-me-phone")
    assert len(user_messages(server, conv["id"], "gil")) == 1  # filled in, never sent
    page.click("#send")
    expect(page.locator(".msg.user")).to_have_count(2, timeout=20_000)
    assert user_messages(server, conv["id"], "gil")[0]["content"] == line
