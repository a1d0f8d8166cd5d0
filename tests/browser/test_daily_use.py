"""Daily use of the web client (issue 29): a long conversation opens at its newest message, older
pages load in place, every tab follows the conversation live, the reader's scroll position is
respected, failures stay readable, and the composer and forms behave under real hands."""

from __future__ import annotations

import httpx
import pytest

from tests.browser.conftest import DESKTOP, PHONE, shot, token

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install -e '.[dev]' (playwright)").expect

LONG = 150  # more than one page (100) of history


def auth(user: str, admin: bool = False) -> dict[str, str]:
    return {"Authorization": f"Bearer {token(user, admin)}"}


def new_direct_chat(server: str, user: str, agent_name: str, **settings) -> dict:
    agent = httpx.post(f"{server}/v1/agents", json={"name": agent_name}, headers=auth("root", True)).json()
    return httpx.post(f"{server}/v1/conversations", json={"kind": "direct", "agentIds": [agent["id"]],
                      "settings": {"language": "en", **settings}}, headers=auth(user)).json()  # fmt: skip


def sign_in(page, user: str) -> None:
    page.goto("/")
    page.fill("#dev-user", user)
    page.click("#dev-token")
    expect(page.locator("#who")).to_have_text(user)


def open_chat(page, user: str, conv: dict) -> None:
    sign_in(page, user)
    page.goto(f"/#/c/{conv['id']}")
    expect(page.locator("#chat-title")).to_be_visible()


@pytest.fixture(scope="module")
def long_chat(server: str) -> dict:
    """A conversation of LONG user messages ("line 001" … "line 150"), stored through the API."""
    conv = new_direct_chat(server, "reader", "Patient")
    with httpx.Client(base_url=server, headers=auth("reader")) as client:
        for i in range(1, LONG + 1):
            client.post(f"/v1/conversations/{conv['id']}/messages", json={"content": f"line {i:03d}"}).raise_for_status()
    return conv


def timeline_at_bottom(page) -> bool:
    return page.locator("#timeline").evaluate("t => t.scrollHeight - t.scrollTop - t.clientHeight < 4")


def test_a_long_conversation_opens_at_its_newest_message_and_again_after_a_reload(page, long_chat) -> None:
    open_chat(page, "reader", long_chat)
    newest = page.locator(".msg .text", has_text=f"line {LONG:03d}")
    expect(newest).to_be_in_viewport()
    assert timeline_at_bottom(page)
    shot(page, "long-chat-opened-desktop")
    page.reload()
    expect(newest).to_be_in_viewport()
    assert timeline_at_bottom(page)
    page.set_viewport_size(PHONE)
    page.reload()
    expect(newest).to_be_in_viewport()
    shot(page, "long-chat-opened-phone")


def test_load_earlier_messages_keeps_the_readers_place(page, long_chat) -> None:
    open_chat(page, "reader", long_chat)
    expect(page.locator(".msg.user")).to_have_count(100)
    oldest_loaded = page.locator(".msg .text", has_text=f"line {LONG - 99:03d}")
    page.locator("#timeline").evaluate("t => { t.scrollTop = 0; }")
    top_before = oldest_loaded.evaluate("e => e.getBoundingClientRect().top")
    page.click(".load-earlier")
    expect(page.locator(".msg.user")).to_have_count(LONG)
    expect(page.locator(".load-earlier")).to_have_count(0)  # the whole history is loaded
    texts = page.locator(".msg.user .text").all_inner_texts()
    assert texts == [f"line {i:03d}" for i in range(1, LONG + 1)]  # in order, none twice
    top_after = oldest_loaded.evaluate("e => e.getBoundingClientRect().top")
    assert abs(top_after - top_before) < 4, (top_before, top_after)  # the reader's place is kept
    page.locator("#timeline").evaluate("t => { t.scrollTop = 0; }")
    expect(page.locator(".msg .text", has_text="line 001")).to_be_in_viewport()
    shot(page, "long-chat-earlier-desktop")


def watch_errors(pg, errors: list[str]) -> None:
    pg.on("pageerror", lambda exc: errors.append(str(exc)))


def test_a_second_tab_and_a_reload_mid_turn_show_the_replies_as_they_stream(page, server: str, simulator, backend: str) -> None:
    conv = new_direct_chat(server, "tabs", "Twin")
    open_chat(page, "tabs", conv)
    other = page.context.new_page()  # a second tab: same browser, same saved token
    errors: list[str] = []
    watch_errors(other, errors)
    other.goto(f"/#/c/{conv['id']}")
    expect(other.locator("#chat-title")).to_be_visible()
    other.wait_for_timeout(300)  # its follower is connected

    simulator.configure(tokens_per_s=12)  # a reply streams for a few seconds
    try:
        page.fill("#composer-input", "tell me about the sea, slowly")
        page.click("#send")
        # Tab B: the user's message, the typing line, the draft growing, Send off.
        expect(other.locator(".msg.user .text")).to_have_text(["tell me about the sea, slowly"])
        expect(other.locator(".msg.draft")).to_be_visible()
        expect(other.locator("#send")).to_be_disabled()
        expect(other.locator("#turn-status")).to_contain_text("typing")
        shot(other, f"second-tab-streaming-{backend}")
        # Tab A reloads mid-turn: the rest of the turn still arrives, drafts and all.
        page.reload()
        expect(page.locator(".msg.draft")).to_be_visible()
        expect(page.locator("#send")).to_be_disabled()
    finally:
        simulator.configure(tokens_per_s=0)
    for pg in (page, other):
        expect(pg.locator(".msg.agent:not(.draft)")).to_have_count(1, timeout=20_000)
        expect(pg.locator(".msg.draft")).to_have_count(0)
        expect(pg.locator("#send")).to_be_enabled()
        expect(pg.locator(".trace")).to_have_count(1)
    assert page.locator(".msg.agent .text").inner_text() == other.locator(".msg.agent .text").inner_text()

    # A turn sent from tab B shows once in tab A (the sender's own stream and its follower agree).
    other.fill("#composer-input", "and the mountains?")
    other.click("#send")
    for pg in (page, other):
        expect(pg.locator(".msg.agent:not(.draft)")).to_have_count(2, timeout=20_000)
        expect(pg.locator(".msg.user")).to_have_count(2)
        expect(pg.locator(".trace")).to_have_count(2)
        expect(pg.locator("#send")).to_be_enabled()
    assert not errors, errors


def test_scrolling_up_while_a_reply_streams_is_not_pulled_down_and_new_messages_jumps_down(page, server: str, simulator) -> None:
    conv = new_direct_chat(server, "scroller", "Storyteller")
    with httpx.Client(base_url=server, headers=auth("scroller")) as client:
        for i in range(1, 31):
            client.post(f"/v1/conversations/{conv['id']}/messages", json={"content": f"earlier {i:02d}"}).raise_for_status()
    open_chat(page, "scroller", conv)
    expect(page.locator(".msg .text", has_text="earlier 30")).to_be_in_viewport()
    simulator.configure(tokens_per_s=12)
    try:
        page.fill("#composer-input", "tell me a long story")
        page.click("#send")
        expect(page.locator(".msg.draft")).to_be_visible()
        page.mouse.move(700, 300)
        page.mouse.wheel(0, -3000)  # the reader scrolls up to read earlier messages
        expect(page.locator(".msg .text", has_text="earlier 01")).to_be_in_viewport()
        page.wait_for_timeout(1200)  # deltas keep coming: the reader stays where they are
        expect(page.locator(".msg .text", has_text="earlier 01")).to_be_in_viewport()
        expect(page.locator("#new-messages")).to_be_visible()
        shot(page, "scrolled-up-while-streaming")
    finally:
        simulator.configure(tokens_per_s=0)
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1, timeout=20_000)
    expect(page.locator(".msg .text", has_text="earlier 01")).to_be_in_viewport()  # the saved reply did not pull either
    page.click("#new-messages")
    expect(page.locator(".msg.agent:not(.draft)")).to_be_in_viewport()
    expect(page.locator("#new-messages")).to_be_hidden()
    assert timeline_at_bottom(page)


def chip_rows(page) -> int:
    return page.locator(".chip").evaluate_all("cs => new Set(cs.map((c) => c.offsetTop)).size")


def assert_last_reply_uncovered(page) -> None:
    last = page.locator(".msg.agent:not(.draft)").last
    expect(last.locator(".why-btn")).to_be_in_viewport(ratio=1)
    reply, chips = last.bounding_box(), page.locator("#chips").bounding_box()
    timeline = page.locator("#timeline").bounding_box()
    assert reply["y"] + reply["height"] <= timeline["y"] + timeline["height"] + 1, (reply, timeline)
    assert reply["y"] + reply["height"] <= chips["y"] + 1, (reply, chips)  # the chips are below it, not over it
    last.locator(".why-btn").click(trial=True)  # nothing on top of the reply's buttons


def test_suggestion_chips_are_one_row_of_the_asked_count_and_never_cover_the_last_reply(page, server: str, backend: str) -> None:
    conv = new_direct_chat(server, "chips", "Chatty", autoReply={"suggestionCount": 4})
    with httpx.Client(base_url=server, headers=auth("chips")) as client:
        for i in range(1, 21):
            client.post(f"/v1/conversations/{conv['id']}/messages", json={"content": f"before {i:02d}"}).raise_for_status()
    open_chat(page, "chips", conv)
    page.fill("#composer-input", "what should we do this weekend?")
    page.click("#send")
    expect(page.locator(".chip")).to_have_count(4, timeout=20_000)
    expect(page.locator("#send")).to_be_enabled()
    assert chip_rows(page) == 1
    assert_last_reply_uncovered(page)
    shot(page, f"chips-desktop-{backend}")
    page.set_viewport_size(PHONE)
    expect(page.locator(".chip")).to_have_count(4)
    assert chip_rows(page) == 1
    assert_last_reply_uncovered(page)
    shot(page, f"chips-phone-{backend}")
    page.set_viewport_size(DESKTOP)


def test_a_failed_turn_is_one_readable_line_with_retry_and_stays_after_a_reload(page, server: str, simulator, backend: str) -> None:
    conv = new_direct_chat(server, "unlucky", "Flaky")
    open_chat(page, "unlucky", conv)
    simulator.configure(fault_rate=1.0, faults=["500"])
    try:
        page.fill("#composer-input", "are you there?")
        page.click("#send")
        failure = page.locator(".notice.failed")
        expect(failure).to_have_count(1)
        expect(page.locator("#send")).to_be_enabled()
        expect(failure.locator(".failure-text")).to_contain_text("This turn failed")
        expect(failure.locator(".retry-btn")).to_be_visible()
        visible = page.locator("#timeline").inner_text()  # what the reader sees: no codes, no HTTP status
        for internal in ("model_error", "HTTP 500", "wrong_script", "near_duplicate", "all_replies_dropped"):
            assert internal not in visible, (internal, visible)
        expect(page.locator(".notice")).to_have_count(1)  # said once, not per draft or per stream
        shot(page, f"turn-failed-readable-{backend}")
        page.reload()
        expect(page.locator(".notice.failed")).to_have_count(1)
        expect(page.locator(".notice.failed .retry-btn")).to_be_visible()
        page.locator(".notice.failed summary").click()
        expect(page.locator(".notice.failed pre")).to_be_visible()  # the internals, for who wants them
        page.set_viewport_size(PHONE)
        shot(page, f"turn-failed-readable-phone-{backend}")
        page.set_viewport_size(DESKTOP)
    finally:
        simulator.configure(fault_rate=0.0)
    page.click(".notice.failed .retry-btn")
    expect(page.locator(".msg.agent:not(.draft)")).to_have_count(1, timeout=20_000)
    expect(page.locator(".notice.failed")).to_have_count(0)
    expect(page.locator(".msg.user")).to_have_count(1)  # the retry did not send the message again


def test_double_clicking_create_or_save_makes_one_conversation_and_one_agent(page, server: str, backend: str) -> None:
    sign_in(page, "root")
    page.evaluate("""async () => {  // an admin token for this page (the dev button makes plain users)
        const out = await (await fetch('/v1/dev/token', {method: 'POST', headers: {'content-type': 'application/json'},
                                       body: JSON.stringify({user: 'root', admin: true})})).json();
        localStorage.setItem('companion.token', out.token); }""")
    page.goto("/#/agents")
    page.reload()
    name = f"Twice{backend}"
    page.click("#agent-new")
    page.fill("#agent-name", name)
    page.fill("#agent-personalityPrompt", f"{name} is careful.")
    page.dblclick("#agent-save")
    expect(page.locator(".agent-name", has_text=name)).to_have_count(1)
    agents = httpx.get(f"{server}/v1/agents", headers=auth("root", True)).json()
    assert [a["name"] for a in agents].count(name) == 1

    page.goto("/#/new")
    page.select_option("#conv-kind", "direct")
    page.check(f"#conv-members label:has-text('{name}') input")
    page.fill("#conv-title", f"only once {backend}")
    page.dblclick("#conv-create")
    expect(page.locator("#chat-title")).to_have_text(f"only once {backend}")
    page.wait_for_timeout(300)
    convs = httpx.get(f"{server}/v1/conversations", headers=auth("root", True)).json()
    assert [c["title"] for c in convs].count(f"only once {backend}") == 1


def test_a_bad_saved_token_and_an_expired_session_sign_out_cleanly(page, server: str) -> None:
    page.goto("/")
    page.evaluate("localStorage.setItem('companion.token', 'not-a-token')")
    page.reload()
    expect(page.locator("#token-input")).to_be_visible()
    assert page.evaluate("localStorage.getItem('companion.token')") is None

    good = token("lapsed")
    head, claims, signature = good.split(".")
    page.evaluate(f"localStorage.setItem('companion.token', '{head}.{claims}.{signature[::-1]}')")  # a signature the server refuses
    page.reload()
    expect(page.locator("#token-input")).to_be_visible()
    expect(page.locator("#toast")).to_contain_text("Signed out")
    assert page.evaluate("localStorage.getItem('companion.token')") is None

    conv = new_direct_chat(server, "lapsed", "Gone")
    open_chat(page, "lapsed", conv)
    page.route("**/v1/conversations/*/turns", lambda route: route.fulfill(  # the token expires mid-session
        status=401, content_type="application/json", body='{"code": "token_expired", "message": "token expired", "details": {}}'))
    page.fill("#composer-input", "still there?")
    page.click("#send")
    expect(page.locator("#token-input")).to_be_visible()
    expect(page.locator("#composer-input")).to_have_count(0)  # the chat is closed, not left open
    assert page.evaluate("localStorage.getItem('companion.token')") is None
