// Conversations and the chat: timeline, a turn over SSE, suggestion chips, the why panel, the Story panel.

import { assignColors, avatar, fmt, h, pending, toast } from "./dom.js";
import { markdown, when } from "./markdown.js";
import { lang, t } from "./i18n.js";
import { whyPanel } from "./why.js";
import { settingsPanel } from "./settings.js";

const PAGE = 100;

// The chat screen on the page: its /events follower stops when another view replaces it.
let shown = null;
export function leaveChat() {
  shown?.leave();
  shown = null;
}

function newKey() {
  return globalThis.crypto?.randomUUID ? crypto.randomUUID() : `k-${Date.now()}-${Math.random().toString(16).slice(2)}`;
}

function convLabel(conv) {
  return conv.title || conv.members.map((m) => m.name).join(", ") || "(no members)";
}

export async function chatView(session, hash) {
  const { api } = session;
  const [convs, agents] = await Promise.all([api.get("/v1/conversations"), api.get("/v1/agents")]);
  session.agents = agents;
  const current = hash.startsWith("#/c/") ? decodeURIComponent(hash.slice(4)) : null;
  const list = h("aside", { class: "conv-list", id: "conv-list" },
    h("a", { href: "#/new" }, h("button", { class: "primary", id: "new-conversation", style: "width:100%" }, t("New conversation"))),
    h("ul", {}, convs.map((c) => h("li", {},
      h("a", { href: `#/c/${c.id}`, class: c.id === current ? "active" : "", dataset: { conversationId: c.id } },
        convLabel(c), h("div", { class: "kind" }, t("{kind} · {count} messages", { kind: t(c.kind), count: c.messageCount })))))),
    !convs.length && h("p", { class: "muted" }, t("No conversations yet.")));
  // On a phone the list is a drawer: open while no conversation is shown.
  const layout = h("div", { class: `chat-layout${current || hash.startsWith("#/new") ? "" : " drawer-open"}` }, list);
  if (hash.startsWith("#/new")) {
    layout.append(newConversationForm(session));
  } else if (current) {
    let conv = null;
    try {
      conv = await api.get(`/v1/conversations/${encodeURIComponent(current)}`);
    } catch (err) {
      if (err.status !== 404) throw err;
      layout.append(h("section", { class: "chat" }, h("p", { class: "empty", id: "not-found" },
        t("Conversation not found (it does not exist or belongs to another user)."))));
    }
    if (conv) await new ChatScreen(session, conv, layout).mount();
  } else {
    layout.append(h("section", { class: "chat" }, h("p", { class: "empty" },
      agents.length ? t("Pick a conversation or start a new one.") : t("No agents yet: an admin creates them under Agents."))));
  }
  return layout;
}

function newConversationForm(session) {
  const { api, agents } = session;
  const kind = h("select", { id: "conv-kind" }, h("option", { value: "group" }, t("group")), h("option", { value: "direct" }, t("direct")));
  const title = h("input", { type: "text", id: "conv-title", placeholder: t("optional") });
  const zh = lang === "zh-CN";  // the UI's language is the new conversation's default
  const language = h("select", { id: "conv-language" },
    h("option", { value: "en", selected: !zh }, "English (en)"), h("option", { value: "zh-CN", selected: zh }, "中文 (zh-CN)"));
  const story = h("input", { type: "checkbox", id: "conv-story", checked: true });
  const boxes = agents.map((a) => h("input", { type: "checkbox", value: a.id, dataset: { name: a.name } }));
  const create = async () => {
    const agentIds = boxes.filter((b) => b.checked).map((b) => b.value);
    if (kind.value === "direct" && agentIds.length !== 1) return toast(t("A direct conversation has exactly one agent."));
    if (!agentIds.length) return toast(t("Pick the members."));
    const settings = { language: language.value };
    if (story.checked) settings.story = { enabled: true, modelConfigId: "default" };
    try {
      const conv = await api.post("/v1/conversations", { kind: kind.value, agentIds, title: title.value.trim(), settings });
      location.hash = `#/c/${conv.id}`;
    } catch (err) {
      toast(t("Could not create the conversation: {error}", { error: err.message }));
    }
  };
  return h("section", { class: "chat" }, h("div", { class: "page" }, h("div", { class: "card", style: "max-width:560px" },
    h("h2", {}, t("New conversation")),
    h("label", { for: "conv-kind" }, t("Kind")), kind,
    h("label", { for: "conv-title" }, t("Title")), title,
    h("label", { for: "conv-language" }, t("Language")), language,
    h("label", { style: "display:flex;gap:.4em;align-items:center;color:var(--ink)" }, story, t("Story (per-agent narrative state)")),
    h("label", {}, t("Members")),
    h("div", { class: "members", id: "conv-members" },
      agents.length ? agents.map((a, i) => h("label", {}, boxes[i], avatar(a.name, a.id), a.name, h("span", { class: "muted" }, a.headline)))
        : h("p", { class: "muted" }, t("No agents yet."))),
    h("div", { class: "row", style: "margin-top:1em" }, h("button", { class: "primary", id: "conv-create", onclick: pending(create) }, t("Create"))))));
}

const FEELINGS = { happy: t("happy"), sad: t("sad"), anxious: t("anxious"), angry: t("upset"), lonely: t("lonely"), stressed: t("stressed"),
  confused: t("unsure"), romantic: t("affectionate"), playful: t("playful") };

// The Story's status and a scene's phase, in words (the codes are under t("details")).
const STORY_STATUS = {
  not_started: t("Not started yet: it begins with this member's next reply."),
  initialized: t("Ready: the story begins with this member's next reply."),
  init_failed: t("Could not start this time; it tries again on the next reply."),
  waiting_for_acceptance: t("Up to date; it adopts the newest reply on the next turn."),
  accepted: t("Up to date."),
  failed: t("Something went wrong on the last turn; it tries again on the next one."),
  state_too_large: t("The story grew too large to save; it starts over on the next turn."),
  unreadable: t("The saved story could not be read; it starts over on the next turn."),
  reset: t("Starts over on the next turn."),
};
const PHASES = { start: t("just beginning"), develop: t("unfolding"), end: t("coming to a close") };

// Who chose the speaker, in the user's words (the code is in the badge's title and the why panel).
const CHOSEN_BY = {
  mention: [t("named"), "you named them"], llm: [t("picked"), "picked as the best to answer"],
  fallback: [t("best fit"), "the best fit by their strengths and who spoke last"], order: [t("in turn"), "their turn in the reply order"],
  continue: [t("carried on"), "asked to carry on"],
};

class ChatScreen {
  constructor(session, conv, layout) {
    this.session = session;
    this.api = session.api;
    this.conv = conv;
    this.layout = layout;
    this.names = Object.fromEntries(session.agents.map((a) => [a.id, a.name]));
    for (const m of conv.members) this.names[m.agentId] = m.name;
    assignColors(conv.members.map((m) => m.agentId));
    this.messages = new Map();   // id -> message
    this.rows = new Map();       // id -> element
    this.drafts = new Map();     // draftId -> {el, text, agentId, turnId}
    this.traces = new Map();     // turnId -> element
    this.turnCache = new Map();  // turnId -> turn result (the why panel's emotion source)
    this.sidePanel = null;
    this.running = false;       // this tab is sending a turn
    this.activeTurnId = null;   // the turn running in the conversation (sent here or elsewhere)
    this.doneTurns = new Set(); // turns already finished here: a second copy of their events is ignored
    this.closedDrafts = new Set();  // drafts saved or discarded: a late delta does not bring them back
    this.replayed = new Set();  // turns replayed from their start (?turnId=&after=0)
    this.lockTimer = null;
    this.follower = new AbortController();
  }

  leave() {
    this.follower.abort();
    this.resized?.disconnect();
  }

  name(agentId) { return this.names[agentId] || agentId?.slice(0, 8) || "?"; }

  async mount() {
    this.timeline = h("div", { class: "timeline", id: "timeline", onscroll: () => this.onScroll() });
    this.pinned = true;
    this.newBelow = h("button", { class: "new-below", id: "new-messages", hidden: true,
      onclick: () => this.scrollDown(true) }, t("New messages ↓"));
    this.status = h("div", { class: "turn-status", id: "turn-status" });
    this.chips = h("div", { class: "chips", id: "chips", hidden: true });
    // No maxlength: a paste over the limit is kept whole and the count says what to cut (the browser
    // would cut it silently).
    this.maxChars = this.session.config.maxMessageChars || 4000;
    this.input = h("textarea", { id: "composer-input", rows: 1, placeholder: t("Message (mention a name to ask them)") });
    this.counter = h("div", { class: "composer-count", id: "composer-count", hidden: true });
    this.sendBtn = h("button", { class: "primary", id: "send", onclick: () => this.send() }, t("Send"));
    this.stopBtn = h("button", { id: "stop", hidden: true, title: t("Stop this turn (replies already written stay)"),
      onclick: () => this.stop() }, t("Stop"));
    this.suggestBtn = h("button", { id: "suggest", title: t("Suggest replies"), onclick: () => this.suggest() }, t("Suggest"));
    this.writeBtn = h("button", { id: "write-for-me", title: t("Write my next line (continues what you typed; never sent)"),
      onclick: () => this.writeForMe() }, t("Write for me"));
    this.note = h("div", { class: "composer-note warn", id: "composer-note", hidden: true });
    this.input.addEventListener("input", () => { this.clearChips(); this.composerChanged(); });
    this.input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); this.send(); }
    });
    this.titleEl = h("span", { class: "title", id: "chat-title" }, convLabel(this.conv));
    this.headAvatars = h("span", { class: "head-avatars" }, this.conv.members.map((m) => avatar(m.name, m.agentId)));
    const head = h("div", { class: "chat-head" },
      this.titleEl,
      h("span", { class: "badge" }, t(this.conv.kind)),
      this.headAvatars,
      h("span", { class: "spacer" }),
      h("button", { id: "story-btn", onclick: () => this.openStory() }, t("Story")),
      h("button", { id: "settings-btn", title: t("Members and settings"), onclick: () => this.openSettings() }, t("Settings")));
    this.chat = h("section", { class: "chat" }, head, h("div", { class: "timeline-wrap" }, this.timeline, this.newBelow), this.status, this.chips, this.note, this.counter,
      h("div", { class: "composer" }, this.input, this.suggestBtn, this.writeBtn, this.stopBtn, this.sendBtn));
    this.side = h("aside", { class: "side-panel", id: "side-panel", hidden: true });
    this.layout.append(this.chat, this.side);
    // The timeline changes height (chips, the composer growing, a phone's keyboard): a reader at the
    // bottom stays at the bottom.
    this.resized = new ResizeObserver(() => { if (this.pinned) this.scrollDown(true); });
    this.resized.observe(this.timeline);
    leaveChat();
    shown = this;
    await this.loadHistory();
    this.loadLatestSuggestions();
    this.follow();
  }

  // ---- following the conversation -----------------------------------------------------------

  // Every tab follows GET …/events, so a turn sent in another tab (or before a reload) shows here
  // as it streams. A turn still running when the conversation opens is replayed from its start
  // (?turnId=…&after=0); then the conversation is followed from the last event seen, and a dropped
  // stream resumes with Last-Event-ID. Events may reach this tab twice (its own POST stream and
  // the follower): every handler is idempotent.
  async follow() {
    const { signal } = this.follower;
    const handle = (event, data) => { if (!signal.aborted) this.onEvent(event, data); };
    let lastEventId = null, firstId = null;
    const newest = [...this.messages.values()].reduce((a, m) => (!a || m.seq > a.seq ? m : a), null);
    // The turn running now: the conversation says which (a Continue may have saved nothing yet);
    // a server without runningTurnId: the newest message's turn, if it still runs.
    let running = this.conv.runningTurnId || null;
    if (newest?.turnId) {
      try {
        const turn = await this.api.get(`/v1/conversations/${this.conv.id}/turns/${newest.turnId}`);
        if (turn.status === "failed") this.failureLine(turn);
        if (turn.status === "running" && !("runningTurnId" in this.conv)) running = turn.turnId || newest.turnId;
      } catch { /* the replay below still runs */ }
    }
    if (running) {
      this.replayed.add(running);
      try {
        // The conversation is then followed from this turn's first event, not its last: another
        // turn may start while this one's stream is still open (its suggestions), and the
        // filtered stream leaves that turn's first events out. Seen again, events are ignored.
        const replay = (event, data, id) => { if (firstId == null && id != null) firstId = id; handle(event, data); };
        lastEventId = await this.api.followEvents(this.conv.id, { after: 0, turnId: running, signal }, replay);
      } catch (err) {
        lastEventId = err.lastEventId ?? lastEventId;
      }
      lastEventId = firstId ?? lastEventId;
    }
    let caughtUp = false;
    for (let failures = 0; !signal.aborted;) {
      try {
        // Followed "from now", a turn that started after the history was read and before this
        // stream opened would be missed: once open, the newest messages and the running turn are
        // read again (catchUp).
        const onOpen = caughtUp ? null : () => { caughtUp = true; this.catchUp(signal, handle); };
        lastEventId = await this.api.followEvents(this.conv.id, { lastEventId, signal, onOpen }, handle);
        failures = 0;
      } catch (err) {
        if (signal.aborted) return;
        if (err.status === 401) return;  // the next request signs out
        if (err.status === 404) return;  // the conversation is gone
        if (err.code === "invalid_last_event_id") lastEventId = null;
        else lastEventId = err.lastEventId ?? lastEventId;
        failures++;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * 2 ** Math.min(failures, 5))));
    }
  }

  // What happened between reading the history and opening the stream: messages saved meanwhile are
  // put in, and a turn running now is replayed from its start (every handler is idempotent).
  async catchUp(signal, handle) {
    try {
      const [conv, page] = await Promise.all([
        this.api.get(`/v1/conversations/${this.conv.id}`),
        this.api.get(`/v1/conversations/${this.conv.id}/messages?limit=${PAGE}`),
      ]);
      if (signal.aborted) return;
      const newestSeq = Math.max(0, ...[...this.messages.values()].map((m) => m.seq));
      for (const m of page.items.slice().reverse()) if (m.seq > newestSeq && !this.messages.has(m.id)) this.put(m);
      const id = conv.runningTurnId;
      if (id && !this.replayed.has(id) && !this.doneTurns.has(id)) {
        this.replayed.add(id);
        await this.api.followEvents(this.conv.id, { after: 0, turnId: id, signal }, handle);
      }
    } catch { /* the live stream goes on */ }
  }

  // The composer grows with its text (up to a third of the window, then it scrolls), and a text
  // over the server's limit is counted and not sent.
  composerChanged() {
    const box = this.input;
    box.style.height = "auto";
    box.style.height = `${Math.min(box.scrollHeight + 2, Math.max(80, window.innerHeight / 3))}px`;
    const n = [...box.value].length;  // characters (code points), as the server counts them
    const over = n - this.maxChars;
    this.overLimit = over > 0;
    this.counter.hidden = n < this.maxChars * 0.9;
    this.counter.classList.toggle("bad", this.overLimit);
    this.counter.textContent = this.overLimit
      ? t("{n} / {max} characters: too long to send — shorten it by {over}.", { n: n.toLocaleString("en"), max: this.maxChars.toLocaleString("en"), over: over.toLocaleString("en") })
      : t("{n} / {max} characters", { n: n.toLocaleString("en"), max: this.maxChars.toLocaleString("en") });
    this.refreshComposer();
  }

  setComposer(text) {
    this.input.value = text;
    this.composerChanged();
  }

  // Send is off while a turn runs in the conversation, wherever it was sent, and while the text is too long.
  refreshComposer() {
    this.sendBtn.disabled = this.running || !!this.activeTurnId || !!this.lockTimer || !!this.overLimit;
    this.stopBtn.hidden = !this.activeTurnId;
  }

  // ---- history ------------------------------------------------------------------------------

  async loadHistory(before = null) {
    const q = before == null ? `limit=${PAGE}` : `limit=${PAGE}&before=${before}`;
    const page = await this.api.get(`/v1/conversations/${this.conv.id}/messages?${q}`);
    const items = page.items.slice().reverse();
    // Older rows go above the first row there is (the button is taken out first), and the rows
    // the reader is looking at stay where they are on the screen.
    const fromBottom = this.timeline.scrollHeight - this.timeline.scrollTop;
    this.timeline.querySelector(".load-earlier")?.remove();
    const first = before == null ? null : this.timeline.firstChild;
    for (const m of items) {
      if (this.messages.has(m.id)) continue;
      this.messages.set(m.id, m);
      const row = this.messageRow(m);
      this.rows.set(m.id, row);
      this.timeline.insertBefore(row, first);
    }
    if (page.nextCursor != null) {
      const more = h("button", { class: "link load-earlier", onclick: async () => {
        more.disabled = true;
        try { await this.loadHistory(page.nextCursor); } catch (err) { more.disabled = false; toast(t("Could not load: {error}", { error: err.message })); }
      } }, t("Load earlier messages"));
      this.timeline.prepend(more);
    }
    if (!this.messages.size) this.timeline.append(h("p", { class: "empty", id: "timeline-empty" }, t("Say hello to start.")));
    this.refreshTools();
    if (before == null) this.scrollDown(true);
    else this.timeline.scrollTop = this.timeline.scrollHeight - fromBottom;
  }

  // The timeline follows new content only while the reader is at the bottom; scrolled up, a
  // "new messages" button says there is more below. Before the view is on the page (and laid out)
  // there is nothing to scroll: the scroll waits for the first frame that has it.
  scrollDown(force = false) {
    const t = this.timeline;
    if (!force && !this.pinned) { this.newBelow.hidden = false; return; }
    this.pinned = true;
    this.newBelow.hidden = true;
    if (t.isConnected && t.clientHeight) { t.scrollTop = t.scrollHeight; return; }
    if (this.scrollPending) return;
    this.scrollPending = true;
    const retry = (frames) => requestAnimationFrame(() => {
      if (t.isConnected && t.clientHeight) { this.scrollPending = false; if (this.pinned) t.scrollTop = t.scrollHeight; }
      else if (frames > 0) retry(frames - 1);
      else this.scrollPending = false;
    });
    retry(600);
  }

  onScroll() {
    const t = this.timeline;
    if (!t.clientHeight) return;
    this.pinned = t.scrollHeight - t.scrollTop - t.clientHeight < 40;
    if (this.pinned) this.newBelow.hidden = true;
  }

  messageRow(m) {
    const isUser = m.role === "user";
    const who = isUser ? this.session.me.user : this.name(m.agentId);
    const meta = m.metadata || {};
    const chosen = !isUser && CHOSEN_BY[meta.selectedBy];
    const bubble = h("div", { class: "bubble" },
      h("div", { class: "name" }, who,
        chosen && h("span", { class: "badge chosen-by", title: `${chosen[1]} (selectedBy: ${meta.selectedBy})` }, chosen[0]),
        !isUser && m.replyKind === "cross" && h("span", { class: "badge" }, `→ ${this.name(m.respondToAgentId)}`),
        m.editedAt && h("span", { class: "badge" }, t("edited")),
        when(m.createdAt)),
      h("div", { class: "text" }, markdown(m.content)));
    const rewind = h("button", { class: "link rewind-btn", hidden: true, title: t("Remove everything after this message"),
      onclick: () => this.rewind(m.id) }, t("Rewind to here"));
    const copy = h("button", { class: "link copy-btn", onclick: () => this.copy(m.id) }, t("Copy"));
    const remove = h("button", { class: "link delete-btn", onclick: () => this.remove(m.id) }, t("Delete"));
    if (!isUser) {
      const versions = m.selectedVersion != null && h("span", { class: "versions" },
        h("button", { class: "link version-prev", "aria-label": t("Previous version"), onclick: () => this.swipe(m.id, -1) }, "‹"),
        h("span", { class: "version-label" }, t("version {n}", { n: m.selectedVersion })),
        h("button", { class: "link version-next", "aria-label": t("Next version"), onclick: () => this.swipe(m.id, 1) }, "›"));
      bubble.append(h("div", { class: "tools" },
        versions,
        h("button", { class: "link why-btn", onclick: () => this.openWhy(m.id) }, t("Why this speaker?")),
        h("button", { class: "link edit-btn", hidden: true, onclick: () => this.edit(m.id) }, t("Edit")),
        h("button", { class: "link regen-btn", hidden: true, onclick: () => this.regenerate(m.id) }, t("Regenerate")),
        h("button", { class: "link continue-btn", hidden: true, title: t("{name} carries on, without a message from you", { name: who }),
          onclick: () => this.carryOn(m.agentId) }, t("Continue")),
        copy, remove, rewind));
    } else {
      bubble.append(h("div", { class: "tools" },
        h("button", { class: "link edit-btn", onclick: () => this.edit(m.id) }, t("Edit")), copy, remove, rewind));
    }
    return h("div", { class: `msg ${isUser ? "user" : "agent"}`, dataset: { messageId: m.id, agentId: m.agentId || "" } },
      avatar(who, isUser ? `user:${who}` : m.agentId), bubble);
  }

  // Edit and regenerate are offered on each agent's newest message (what the Story adopts next
  // turn), edit on every message of the user's; Continue on the last message when an agent wrote it.
  refreshTools() {
    const newest = new Map();
    for (const m of this.messages.values()) {
      if (m.role === "agent" && !(this.messages.get(newest.get(m.agentId))?.seq > m.seq)) newest.set(m.agentId, m.id);
    }
    const keep = new Set(newest.values());
    const last = [...this.messages.values()].reduce((a, m) => (a == null || m.seq > a.seq ? m : a), null);
    for (const [id, row] of this.rows) {
      if (this.messages.get(id)?.role === "agent") row.querySelectorAll(".edit-btn, .regen-btn").forEach((b) => { b.hidden = !keep.has(id); });
      row.querySelectorAll(".rewind-btn").forEach((b) => { b.hidden = !last || id === last.id; });
      row.querySelectorAll(".continue-btn").forEach((b) => { b.hidden = !last || id !== last.id; });
    }
  }

  async copy(id) {
    const text = this.messages.get(id)?.content ?? "";
    try {
      await navigator.clipboard.writeText(text);
    } catch {  // no clipboard permission (an old browser, plain http): the selection way
      const box = h("textarea", { style: "position:fixed;opacity:0" });
      box.value = text;
      document.body.append(box);
      box.select();
      document.execCommand("copy");
      box.remove();
    }
    toast(t("Copied."));
  }

  async remove(id) {
    if (!window.confirm(t("Delete this message? The replies after it stay."))) return;
    try {
      await this.api.del(`/v1/conversations/${this.conv.id}/messages/${id}`);
      this.rows.get(id)?.remove();
      this.rows.delete(id);
      this.messages.delete(id);
      this.refreshTools();
      this.refreshListEntry();
      toast(t("Message deleted."));
    } catch (err) {
      toast(t("Could not delete: {error}", { error: err.message }));
    }
  }

  // Continue: the agent carries on from its last message (POST …/continue, the usual turn stream).
  carryOn(agentId) {
    return this.agentTurn(agentId, { agentId }, "continue");
  }

  // A turn without a user message in which ``agentId`` speaks (Continue, force-talk), streamed as usual.
  async agentTurn(agentId, body, path) {
    if (this.running || this.activeTurnId) return toast(t("A reply is being written; ask again when it is done."));
    this.running = true;
    this.refreshComposer();
    this.scrollDown(true);
    this.status.textContent = t("{name} is about to speak…", { name: this.name(agentId) });
    try {
      await this.api.streamTurn(this.conv.id, { idempotencyKey: newKey(), ...body }, (event, data) => this.onEvent(event, data), path);
    } catch (err) {
      this.notice(t("{name} could not speak: {error}", { name: this.name(agentId), error: err.message }), true);
      this.status.textContent = "";
    } finally {
      this.running = false;
      this.refreshComposer();
    }
  }

  put(message) {
    document.getElementById("timeline-empty")?.remove();
    this.messages.set(message.id, message);
    const row = this.messageRow(message);
    const old = this.rows.get(message.id);
    if (old) old.replaceWith(row); else this.timeline.append(row);
    this.rows.set(message.id, row);
    this.refreshTools();
    this.scrollDown();
  }

  // A failed turn: one readable line with Retry (kept after a reload: the newest turn is looked
  // up when the conversation opens); the codes and the checks' reasons are under t("details").
  failureLine(result) {
    const err = result.error || {};
    const agents = err.details?.agents || [];
    const model = agents.some((a) => (a.problems || []).some((p) => /model|timeout/.test(p))) || /model|timeout/.test(err.code || "");
    const names = [...new Set(agents.map((a) => this.name(a.agentId)))].join(", ");
    const why = err.code === "turn_timeout" ? t("the reply took too long")
      : model ? t("the model did not answer") : agents.length ? t("the reply did not pass the checks") : t("something went wrong");
    const raw = [`${err.code || "error"}: ${err.message || ""}`,
      ...agents.map((a) => `${this.name(a.agentId)}: ${(a.reasons || a.problems || []).join("; ")}`)];
    this.timeline.querySelectorAll(".notice.failed").forEach((el) => el.remove());  // one at a time
    const el = h("div", { class: "notice failed", dataset: { turnId: result.turnId || "" } },
      h("span", { class: "failure-text" }, (names ? t("This turn failed — no reply from {names}: {why}.", { names, why }) : t("This turn failed: {why}.", { why }))),
      h("button", { class: "link retry-btn", onclick: () => this.retry(el) }, t("Retry")),
      h("details", { class: "internals" }, h("summary", {}, t("details")), h("pre", {}, raw.join("\n"))));
    this.timeline.append(el);
    this.scrollDown();
  }

  // Replies dropped in a turn that otherwise went through: one quiet line, the reasons under details.
  droppedLine(result) {
    const dropped = Object.entries(result.orchestration?.quality || {}).filter(([, q]) => !q.passed);
    if (!dropped.length) return;
    const names = [...new Set(dropped.map(([key]) => this.name(key.split(":")[0])))].join(", ");
    this.timeline.append(h("div", { class: "notice dropped" }, t("{names} did not reply this time.", { names }),
      h("details", { class: "internals" }, h("summary", {}, t("details")),
        h("pre", {}, dropped.map(([key, q]) => `${key}: ${(q.problems || []).join("; ")}`).join("\n")))));
    this.scrollDown();
  }

  // Retry a failed turn: the user's message is kept, so the character carries on from it (Continue).
  async retry(line) {
    if (this.running || this.activeTurnId) return;
    line.remove();
    this.running = true;
    this.refreshComposer();
    this.scrollDown(true);
    this.status.textContent = t("Trying again…");
    try {
      await this.api.streamTurn(this.conv.id, { idempotencyKey: newKey() }, (event, data) => this.onEvent(event, data), "continue");
    } catch (err) {
      if (err.status === 401) toast(t("Signed out: {error}", { error: err.message }));
      else this.notice(t("Could not retry: {error}", { error: err.message }), true);
      this.status.textContent = "";
    } finally {
      this.running = false;
      this.refreshComposer();
    }
  }

  notice(text, failed = false) {
    const el = h("div", { class: `notice${failed ? " failed" : ""}` }, text);
    this.timeline.append(el);
    this.scrollDown();
    return el;
  }

  // ---- a turn -------------------------------------------------------------------------------

  async send() {
    const content = this.input.value.trim();
    if (!content || this.running) return;
    if (this.overLimit) {
      this.counter.hidden = false;
      this.status.textContent = t("Too long to send: shorten the message first (the count is below).");
      return;
    }
    if (this.activeTurnId) {
      this.status.textContent = t("A reply is being written; send when it is done (your text stays here).");
      return;
    }
    this.clearChips();
    this.setComposer("");
    this.running = true;
    this.refreshComposer();
    this.scrollDown(true);  // who sends wants to see the answer
    this.status.textContent = t("Sending…");
    try {
      await this.api.streamTurn(this.conv.id, { content, idempotencyKey: newKey() }, (event, data) => this.onEvent(event, data));
    } catch (err) {
      this.setComposer(content);  // nothing was stored: the text stays for a retry
      if (err.code === "turn_in_progress") this.lockComposer(err.retryAfter ?? err.details?.retryAfterS ?? 5, err.details?.runningTurnId);
      else if (err.status === 401) toast(t("Signed out: {error}", { error: err.message }));
      else this.notice(t("Not sent: {error}", { error: `${err.message} (${err.code})` }), true);
      this.status.textContent = "";
    } finally {
      this.running = false;
      this.refreshComposer();
    }
  }

  // 409 turn_in_progress: the composer waits for Retry-After, or less if the running turn ends sooner.
  lockComposer(seconds, runningTurnId) {
    let left = Math.max(1, Math.ceil(seconds));
    this.input.disabled = this.sendBtn.disabled = true;
    const unlock = () => {
      clearInterval(this.lockTimer);
      this.lockTimer = null;
      this.note.hidden = true;
      this.input.disabled = false;
      this.refreshComposer();
    };
    const tick = async () => {
      this.note.hidden = false;
      this.note.textContent = t("A turn is already running in this conversation; retry in {s} s.", { s: left });
      if (left-- <= 0) return unlock();
      if (!runningTurnId) return;
      try {
        const turn = await this.api.get(`/v1/conversations/${this.conv.id}/turns/${runningTurnId}`);
        if (turn.status !== "running" && this.lockTimer) unlock();
      } catch { /* keep counting down */ }
    };
    this.lockTimer = setInterval(tick, 1000);
    tick();
  }

  trace(turnId) {
    let el = this.traces.get(turnId);
    if (!el) {
      // In words for the user ("You sound sad · Lia and Heng reply"); the readings with their
      // sources and who decided are under t("details").
      el = h("div", { class: "trace", dataset: { turnId } },
        h("span", { class: "trace-feeling" }), h("span", { class: "trace-who" }),
        h("details", { class: "internals" }, h("summary", {}, t("details")),
          h("span", { class: "trace-emotion" }), h("span", { class: "trace-selection" })));
      this.traces.set(turnId, el);
      // A follower may see a live delta before the logged event that precedes it: the "why" line
      // still goes above the turn's replies.
      const drafts = [...this.drafts.values()].filter((d) => d.turnId === turnId).map((d) => d.el);
      this.timeline.insertBefore(el, drafts.find((d) => d.isConnected) || null);
      this.scrollDown();
    }
    return el;
  }

  onEvent(event, data) {
    switch (event) {
      case "turn.started":
        if (this.doneTurns.has(data.turnId)) break;
        if (data.userMessage && !this.messages.has(data.userMessage.id)) this.put(data.userMessage);
        if (this.activeTurnId !== data.turnId) {
          this.status.textContent = t("Reading the message…");
          this.stopBtn.disabled = false;
        }
        this.runningTurnId = this.activeTurnId = data.turnId;
        this.refreshComposer();
        break;
      case "turn.emotion": {
        const e = data.emotion || {}, i = data.intent || {};
        if (this.doneTurns.has(data.turnId)) break;
        const line = this.trace(data.turnId);
        line.querySelector(".trace-emotion").textContent =
          `feeling ${e.primaryEmotion} ${fmt(e.intensity, 2)} (${e.source}) · intent ${i.kind} (${i.source})`;
        line.querySelector(".trace-feeling").textContent = FEELINGS[e.primaryEmotion] ? t("You sound {feeling} · ", { feeling: FEELINGS[e.primaryEmotion] }) : "";
        this.status.textContent = t("Choosing who replies…");
        break;
      }
      case "turn.selection": {
        const s = data.selection || {};
        const chosen = (s.selectedAgentIds || []).map((id) => `${this.name(id)} (${s.selectedBy?.[id]})`).join(", ");
        if (this.doneTurns.has(data.turnId)) break;
        const line = this.trace(data.turnId);
        line.querySelector(".trace-selection").textContent = ` → ${chosen || "nobody"} · decided by ${s.decidedBy}`;
        const who = (s.selectedAgentIds || []).map((id) => this.name(id));
        line.querySelector(".trace-who").textContent = !who.length ? t("Nobody replies this time")
          : who.length === 1 ? t("{name} replies", { name: who[0] }) : t("{names} and {last} reply", { names: who.slice(0, -1).join(", "), last: who.at(-1) });
        this.status.textContent = t("{names} typing…", { names: (s.selectedAgentIds || []).map((id) => this.name(id)).join(", ") });
        break;
      }
      case "message.delta": this.onDelta(data); break;
      case "message.discarded": {
        if (this.closedDrafts.has(data.draftId)) break;
        this.dropDraft(data.draftId);
        break;  // a regeneration follows; a reply finally dropped is said once, when the turn ends
      }
      case "message.created": {
        const m = data.message;
        if (data.draftId) this.dropDraft(data.draftId);
        for (const [id, d] of this.drafts) if (d.agentId === m.agentId && d.turnId === data.turnId) this.dropDraft(id);
        this.put(m);
        break;
      }
      case "suggestions.ready": if (data.status === "ready") this.showChips(data.options || []); break;
      case "suggestions.failed": this.clearChips(); break;  // nothing intrusive; t("Suggest") asks again
      case "auto.started":
      case "auto.ended":
        if (this.sidePanel === "settings") this.openSettings();
        break;
      case "turn.completed":
      case "turn.failed":
      case "turn.cancelled":
        if (!this.doneTurns.has(data.turnId)) this.finished(data);
        break;
      default: break;  // events this client does not know yet are ignored
    }
  }

  onDelta(data) {
    if (this.closedDrafts.has(data.draftId) || this.doneTurns.has(data.turnId)) return;
    let d = this.drafts.get(data.draftId);
    if (!d) {
      const text = h("div", { class: "text" });
      const el = h("div", { class: "msg agent draft", dataset: { draftId: data.draftId } },
        avatar(this.name(data.agentId), data.agentId), h("div", { class: "bubble" }, h("div", { class: "name" }, this.name(data.agentId), h("span", { class: "badge" }, t("typing"))), text));
      d = { el, textEl: text, text: "", agentId: data.agentId, turnId: data.turnId };
      this.drafts.set(data.draftId, d);
      this.timeline.append(el);
    }
    const chars = [...d.text];  // offsets count characters (code points), as in Python
    d.text = chars.slice(0, data.offset ?? chars.length).join("") + (data.delta || "");
    d.textEl.textContent = d.text;
    this.scrollDown();
  }

  dropDraft(draftId) {
    this.closedDrafts.add(draftId);
    this.drafts.get(draftId)?.el.remove();
    this.drafts.delete(draftId);
  }

  // Stop: the server ends the running turn; its turn.cancelled event finishes it here.
  async stop() {
    const turnId = this.runningTurnId;
    if (!turnId) return;
    this.stopBtn.disabled = true;
    this.status.textContent = t("Stopping…");
    try {
      await this.api.post(`/v1/conversations/${this.conv.id}/turns/${turnId}/cancel`);
    } catch (err) {
      if (err.code !== "turn_not_running") this.notice(t("Could not stop: {error}", { error: `${err.message} (${err.code})` }), true);
      this.stopBtn.disabled = false;
    }
  }

  finished(result) {
    if (result.turnId) this.doneTurns.add(result.turnId);
    this.runningTurnId = null;
    if (!result.turnId || this.activeTurnId === result.turnId) this.activeTurnId = null;
    this.refreshComposer();
    for (const id of [...this.drafts.keys()]) this.dropDraft(id);
    this.status.textContent = "";
    for (const m of result.agentMessages || []) if (!this.messages.has(m.id)) this.put(m);
    this.turnCache.set(result.turnId, result);
    if (result.status === "cancelled") this.notice(t("Stopped: replies already written are kept."));
    if (result.status === "failed") this.failureLine(result);
    else this.droppedLine(result);
    const s = result.suggestions;
    if (s?.status === "ready" && this.chips.hidden) this.showChips(s.options || []);
    if (s?.status === "generating") setTimeout(() => this.loadLatestSuggestions(), 1500);
    if (this.sidePanel === "story") {  // again a little later: a Story may settle just after the turn
      this.openStory();
      setTimeout(() => { if (this.sidePanel === "story") this.openStory(); }, 2000);
    }
    this.refreshListEntry();
  }

  async refreshListEntry() {
    try {
      const conv = await this.api.get(`/v1/conversations/${this.conv.id}`);
      const kind = this.layout.querySelector(`[data-conversation-id="${conv.id}"] .kind`);
      if (kind) kind.textContent = t("{kind} · {count} messages", { kind: t(conv.kind), count: conv.messageCount });
    } catch { /* the list is only a convenience */ }
  }

  // ---- suggestions --------------------------------------------------------------------------

  // One row that scrolls sideways, as many chips as the conversation's setting asks (2–4). The
  // timeline gets shorter by the row; a reader at the bottom stays there (the resize observer).
  showChips(options) {
    const count = this.conv.settings?.autoReply?.suggestionCount || 3;
    this.chips.replaceChildren(...options.slice(0, count).map((text) =>
      h("button", { class: "chip", title: text, onclick: () => { this.setComposer(text); this.input.focus(); } }, text)));
    this.chips.hidden = !options.length;
  }

  clearChips() {
    this.chips.replaceChildren();
    this.chips.hidden = true;
  }

  lastAgentMessage() {
    const all = [...this.messages.values()].filter((m) => m.role === "agent");
    return all.length ? all.reduce((a, b) => (a.seq > b.seq ? a : b)) : null;
  }

  async loadLatestSuggestions() {
    const last = [...this.messages.values()].reduce((a, b) => (!a || b.seq > a.seq ? b : a), null);
    if (!last || last.role !== "agent") return;
    try {
      const s = await this.api.get(`/v1/conversations/${this.conv.id}/suggestions/latest`);
      if (s.status === "ready" && s.anchorMessageId === last.id && !this.input.value) this.showChips(s.options);
    } catch { /* none yet */ }
  }

  async suggest() {
    const anchor = this.lastAgentMessage();
    if (!anchor) return toast(t("Suggestions need an agent message to answer."));
    this.suggestBtn.disabled = true;
    try {
      const out = await this.api.post(`/v1/conversations/${this.conv.id}/messages/${anchor.id}/suggestions`);
      this.showChips(out.options || []);
    } catch (err) {
      toast(t("No suggestions this time ({code}).", { code: err.code }));
    } finally {
      this.suggestBtn.disabled = false;
    }
  }

  // Streams one line in the user's voice into the composer, continuing what is typed there. The
  // server keeps the draft verbatim at the start; a rejected attempt goes back to the draft and the
  // next one streams; the line is only ever put in the box, never sent.
  async writeForMe() {
    const draft = this.input.value;
    this.clearChips();
    this.writeBtn.disabled = true;
    this.input.readOnly = true;
    let done = false, raw = "";
    const typed = draft.trim();
    const shown = () => {  // as the server will keep it: from the typed words on, else after them
      const at = typed ? raw.indexOf(typed) : 0;
      return at >= 0 ? raw.slice(at) : typed + raw;
    };
    try {
      await this.api.streamPost(`/v1/conversations/${this.conv.id}/impersonate`, { draft }, (event, data) => {
        if (event === "impersonate.started") { raw = ""; this.input.value = draft; }
        else if (event === "impersonate.delta") { raw += data.text; this.input.value = shown(); }
        else if (event === "impersonate.done") { this.input.value = data.text; done = true; }
        else if (event === "impersonate.failed") {
          this.input.value = draft;
          done = true;
          toast(`No line this time (${data.code}): ${(data.attempts || []).at(-1)?.join("; ") || data.message || ""}`);
        }
      });
      if (!done) { this.input.value = draft; toast(t("Write for me was cut off; your text is as you left it.")); }
    } catch (err) {
      this.input.value = draft;
      toast(t("Write for me is not available ({code}).", { code: err.code || "error" }));
    } finally {
      this.composerChanged();
      this.input.readOnly = false;
      this.writeBtn.disabled = false;
      this.input.focus();
    }
  }

  // ---- edit, regenerate ---------------------------------------------------------------------

  edit(id) {
    const m = this.messages.get(id);
    const row = this.rows.get(id);
    const textEl = row.querySelector(".text");
    const box = h("textarea", { class: "edit-input", rows: 3 });
    box.value = m.content;
    const save = async () => {
      try {
        const out = await this.api.patch(`/v1/conversations/${this.conv.id}/messages/${id}`, { content: box.value });
        this.put(out);
        toast(m.role === "user" ? t("Edited.") : t("Edited. The Story adopts the edited text on the next turn."));
        if (this.sidePanel === "story") this.openStory();
      } catch (err) {
        toast(t("Not saved: {error}", { error: err.message }));
      }
    };
    textEl.replaceChildren(box, h("div", { class: "row", style: "margin-top:.3em" },
      h("button", { class: "primary edit-save", onclick: save }, t("Save")),
      h("button", { onclick: () => this.put(m) }, t("Cancel"))));
    box.focus();
  }

  async regenerate(id) {
    const row = this.rows.get(id);
    const button = row.querySelector(".regen-btn");
    button.disabled = true;
    button.textContent = t("Regenerating…");  // progress: the bubble dims until the new version is in
    row.classList.add("regenerating");
    try {
      this.put(await this.api.post(`/v1/conversations/${this.conv.id}/messages/${id}/regenerate`));
    } catch (err) {
      toast(t("Could not regenerate: {error}", { error: err.message }));
      row.classList.remove("regenerating");
      button.textContent = t("Regenerate");
      button.disabled = false;
    }
  }

  // Swipe: the neighbouring version becomes the selected one (what every later turn sees).
  async swipe(id, step) {
    try {
      const list = await this.api.get(`/v1/conversations/${this.conv.id}/messages/${id}/versions`);
      const to = list.selected + step;
      if (to < 1 || to > list.items.length) { toast(step < 0 ? t("This is the first version.") : t("This is the newest version.")); return; }
      this.put(await this.api.put(`/v1/conversations/${this.conv.id}/messages/${id}/selected`, { version: to }));
      const row = this.rows.get(id);
      row?.querySelector(".version-label")?.replaceChildren(t("version {n} of {total}", { n: to, total: list.items.length }));
    } catch (err) {
      toast(t("Could not switch: {error}", { error: err.message }));
    }
  }

  async rewind(id) {
    if (!window.confirm(t("Remove every message after this one? The Story goes back to this point."))) return;
    try {
      const out = await this.api.post(`/v1/conversations/${this.conv.id}/rewind`, { toMessageId: id });
      for (const gone of out.removedMessageIds) {
        this.rows.get(gone)?.remove();
        this.rows.delete(gone);
        this.messages.delete(gone);
      }
      const kept = new Set([...this.messages.values()].map((m) => m.turnId));
      for (const [turnId, el] of this.traces) {  // a removed turn's "why" line goes with its messages
        if (!kept.has(turnId)) { el.remove(); this.traces.delete(turnId); }
      }
      this.clearChips();
      this.refreshTools();
      this.refreshListEntry();
      toast(out.removedMessages === 1 ? t("Rewound: 1 message removed.") : t("Rewound: {n} messages removed.", { n: out.removedMessages }));
      if (this.sidePanel === "story") this.openStory();
    } catch (err) {
      toast(t("Could not rewind: {error}", { error: err.message }));
    }
  }

  // ---- side panels --------------------------------------------------------------------------

  showSide(kind, ...children) {
    this.sidePanel = kind;
    this.side.replaceChildren(h("button", { class: "icon close", id: "side-close", "aria-label": t("Close"), onclick: () => this.closeSide() }, "×"),
      ...children.filter((c) => c instanceof Node));
    this.side.hidden = false;
    this.layout.classList.add("with-side");
  }

  closeSide() {
    this.sidePanel = null;
    this.side.hidden = true;
    this.layout.classList.remove("with-side");
  }

  async openWhy(id) {
    const m = this.messages.get(id);
    this.showSide("why", h("p", { class: "muted" }, t("Loading…")));
    let turn = this.turnCache.get(m.turnId);
    if (!turn && m.turnId) {
      try {
        turn = await this.api.get(`/v1/conversations/${this.conv.id}/turns/${m.turnId}`);
        this.turnCache.set(m.turnId, turn);
      } catch { turn = null; }
    }
    this.showSide("why", whyPanel(m, turn, (agentId) => this.name(agentId)));
  }

  async openSettings() {
    this.sidePanel = "settings";
    const panel = await settingsPanel(this);
    if (this.sidePanel === "settings") this.showSide("settings", panel);
  }

  // The conversation changed (renamed, members, settings): the header, the names and the list follow.
  conversationChanged(conv) {
    this.conv = conv;
    for (const m of conv.members) this.names[m.agentId] = m.name;
    this.titleEl.textContent = convLabel(conv);
    this.headAvatars.replaceChildren(...conv.members.map((m) => avatar(m.name, m.agentId)));
    const entry = this.layout.querySelector(`[data-conversation-id="${conv.id}"]`);
    if (entry) entry.firstChild.textContent = convLabel(conv);
  }

  // Force-talk: that member replies now, without a message from the user (the usual turn stream).
  speak(agentId) {
    return this.agentTurn(agentId, {}, `members/${encodeURIComponent(agentId)}/speak`);
  }

  async openStory() {
    this.sidePanel = "story";
    const enabled = this.conv.settings?.story?.enabled;
    const cards = await Promise.all(this.conv.members.map(async (member) => {
      try {
        const s = await this.api.get(`/v1/conversations/${this.conv.id}/story/${member.agentId}`);
        const last = s.lastOutcome || {};
        const r = s.report;
        const goal = r?.pendingGoals?.slice().sort((a, b) => b.priority - a.priority)[0];
        const quote = (id) => {
          const m = id && this.messages.get(id);
          return m ? `“${[...m.content].slice(0, 80).join("")}${[...m.content].length > 80 ? "…" : ""}”` : null;
        };
        const words = [
          [t("Now"), STORY_STATUS[s.status] || s.status.replace(/_/g, " ")],
          r?.foreground && [t("Scene"), `${r.foreground.title}${PHASES[r.foreground.phase] ? ` — ${PHASES[r.foreground.phase]}` : ""}`],
          r?.main?.theme && [t("Main thread"), `${r.main.theme}${r.main.direction ? `: ${r.main.direction}` : ""}`],
          r?.sub?.theme && [t("Side thread"), `${r.sub.theme}${r.sub.direction ? `: ${r.sub.direction}` : ""}`],
          goal && [t("Current goal"), goal.gist],
          r?.completedGoals?.length > 0 && [t("Goals reached"), String(r.completedGoals.length)],
          quote(r?.acceptedMessageId) && [t("Accepted"), quote(r.acceptedMessageId)],
          quote(r?.pendingMessageId) && [t("Next to adopt"), quote(r.pendingMessageId)],
        ].filter(Boolean);
        return h("div", { class: "story-agent", dataset: { agentId: member.agentId } },
          h("div", { class: "row" }, avatar(member.name, member.agentId), h("strong", {}, member.name)),
          h("dl", { class: "kv story-words" }, words.map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)])),
          h("details", { class: "internals" }, h("summary", {}, t("details")),
            h("dl", { class: "kv" },
              h("dt", {}, "status"), h("dd", { class: "story-status" }, s.status),
              h("dt", {}, "revision"), h("dd", { class: "story-revision" }, String(s.revision)),
              h("dt", {}, "last outcome"), h("dd", { class: "story-outcome" }, last.kind || "–", last.reason ? ` — ${last.reason}` : ""),
              last.toolCalls && [h("dt", {}, "tool calls"), h("dd", {}, last.toolCalls.join(", "))],
              h("dt", {}, "failures in a row"), h("dd", {}, String(s.failureCount)),
              r?.foreground && [h("dt", {}, "scene"), h("dd", {}, `${r.foreground.id} (${r.foreground.phase}, round ${r.foreground.rounds})`)],
              r && [h("dt", {}, "round / cycle"), h("dd", {}, `${r.round} / ${r.cycle}`)],
              h("dt", {}, "updated"), h("dd", {}, s.updatedAt ? new Date(s.updatedAt.endsWith("Z") || s.updatedAt.includes("+") ? s.updatedAt : `${s.updatedAt}Z`).toLocaleString() : "–"))));
      } catch (err) {
        return h("div", { class: "story-agent" }, h("strong", {}, member.name), h("p", { class: "bad" }, err.message));
      }
    }));
    if (this.sidePanel !== "story") return;
    this.showSide("story", h("h2", {}, t("Story")),
      !enabled && h("p", { class: "muted" }, t("Story is off for this conversation.")),
      h("p", { class: "muted" }, t("Each agent's Story adopts its last saved reply — edited text included — on the next turn.")),
      h("div", { id: "story-panel" }, cards),
      h("button", { id: "story-refresh", onclick: () => this.openStory() }, t("Refresh")));
  }
}
