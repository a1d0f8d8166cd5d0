// The conversation's settings panel: name, members (mute, speak now, add, remove), how replies are
// chosen (reply order, limit, chattiness), language, Story and suggestions, auto mode, delete.
// Everything goes through the public API; the panel redraws from each answer.

import { avatar, h, pending, toast } from "./dom.js";
import { t } from "./i18n.js";

const ORDERS = [
  ["natural", t("Natural — whoever fits best answers")],
  ["list", t("In turn — round the members in order")],
  ["pooled", t("Everyone once before anyone twice")],
  ["manual", t("Only who I name or ask to speak")],
];
const CHATTINESS = [["quiet", t("Quiet")], ["balanced", t("Balanced")], ["lively", t("Lively")]];
const LANGUAGES = [["en", "English"], ["zh-CN", "中文"]];

// Why an auto run ended, in words (the code stays in the API's GET …/auto).
const AUTO_REASONS = {
  user_stop: t("you stopped it"), user_message: t("you sent a message"), turn_cancelled: t("Stop was pressed"),
  nobody_to_speak: t("nobody was left to speak"), turn_failed: t("a turn failed"), time_limit: t("it ran out of time"),
  interrupted: t("the server went away"), server_stopping: t("the server restarted"),
};
const STATUS_WORDS = { completed: t("finished"), stopped: t("stopped"), interrupted: t("interrupted"), failed: t("failed") };

const option = (value, label, current) => h("option", { value, selected: value === current }, label);
const field = (label, id, control) => [h("label", { for: id }, label), control];

// screen: the ChatScreen (conv, api, session, name(), onEvent(), conversationChanged()).
export async function settingsPanel(screen) {
  const { api, conv } = screen;
  const base = `/v1/conversations/${conv.id}`;
  const s = conv.settings || {};
  const redraw = () => screen.openSettings();
  const saved = (out, text) => { screen.conversationChanged(out); toast(text); redraw(); };
  const failed = (what) => (err) => toast(`${what}: ${err.message}`);  // what: already in the UI language

  // name
  const title = h("input", { type: "text", id: "settings-title", value: conv.title || "", placeholder: t("(the members' names)") });
  const rename = pending(async () => {
    try { saved(await api.patch(base, { title: title.value.trim() }), t("Renamed.")); } catch (err) { failed(t("Not renamed"))(err); }
  });

  // members
  const isGroup = conv.kind === "group";
  const memberIds = new Set(conv.members.map((m) => m.agentId));
  const others = (screen.session.agents || []).filter((a) => !memberIds.has(a.id));
  const memberRow = (m) => {
    const mute = h("input", { type: "checkbox", class: "member-mute", checked: !!m.muted });
    mute.addEventListener("change", async () => {
      mute.disabled = true;
      try {
        saved(await api.patch(`${base}/members/${m.agentId}`, { muted: mute.checked }),
          mute.checked ? t("{name} is muted: they reply only when named or asked.", { name: m.name }) : t("{name} is no longer muted.", { name: m.name }));
      } catch (err) { mute.checked = !mute.checked; mute.disabled = false; failed(t("Not changed"))(err); }
    });
    const speak = h("button", { class: "member-speak", title: t("This member replies now, without a message from you"),
      onclick: () => screen.speak(m.agentId) }, t("Speak now"));
    const remove = isGroup && h("button", { class: "link bad member-remove", onclick: pending(async () => {
      if (!window.confirm(t("Remove {name} from this conversation? Their messages stay.", { name: m.name }))) return;
      try { saved(await api.del(`${base}/members/${m.agentId}`), t("{name} left the conversation.", { name: m.name })); } catch (err) { failed(t("Not removed"))(err); }
    }) }, t("Remove"));
    return h("li", { class: "member-row", dataset: { agentId: m.agentId } },
      avatar(m.name, m.agentId), h("span", { class: "member-name" }, m.name, m.muted && h("span", { class: "badge" }, t("muted"))),
      isGroup && h("label", { class: "inline" }, mute, t("Mute")), speak, remove);
  };
  const addSelect = h("select", { id: "member-add-select" }, others.map((a) => h("option", { value: a.id }, a.name)));
  const add = pending(async () => {
    if (!addSelect.value) return;
    try { saved(await api.post(`${base}/members`, { agentId: addSelect.value }), t("Added to the conversation.")); } catch (err) { failed(t("Not added"))(err); }
  });

  // how replies are chosen, language, Story, suggestions
  const order = h("select", { id: "settings-order" }, ORDERS.map(([v, l]) => option(v, l, s.replyOrder || "natural")));
  const limit = h("select", { id: "settings-limit" }, [1, 2, 3, 4].map((n) => option(String(n), String(n), String(s.replyLimit ?? 2))));
  const chatty = h("select", { id: "settings-chattiness" }, CHATTINESS.map(([v, l]) => option(v, l, s.chattiness || "balanced")));
  const langs = LANGUAGES.some(([v]) => v === s.language) ? LANGUAGES : [...LANGUAGES, [s.language, s.language]];
  const language = h("select", { id: "settings-language" }, langs.map(([v, l]) => option(v, l, s.language)));
  const story = h("input", { type: "checkbox", id: "settings-story", checked: !!s.story?.enabled });
  const ar = s.autoReply || {};
  const suggest = h("input", { type: "checkbox", id: "settings-suggestions", checked: ar.enabled !== false });
  const count = h("select", { id: "settings-suggestion-count" }, [2, 3, 4].map((n) => option(String(n), String(n), String(ar.suggestionCount ?? 3))));
  const saveSettings = pending(async () => {
    const settings = {
      replyOrder: order.value, replyLimit: Number(limit.value), chattiness: chatty.value, language: language.value,
      story: story.checked ? { enabled: true, modelConfigId: s.story?.modelConfigId || "default" } : { enabled: false },
      autoReply: { enabled: suggest.checked, suggestionCount: Number(count.value) },
    };
    try { saved(await api.patch(base, { settings }), t("Settings saved.")); } catch (err) { failed(t("Not saved"))(err); }
  });

  // auto mode
  let run = null;
  try { run = await api.get(`${base}/auto`); } catch { /* never ran */ }
  const running = run?.status === "running";
  const turns = h("input", { type: "number", id: "auto-turns", min: 1, max: 20, value: "4" });
  const delay = h("input", { type: "number", id: "auto-delay", min: 0, max: 60, step: 0.5, value: "1" });
  const autoState = !run ? t("Not run yet.")
    : running ? t(run.stopping ? "Running: {done} of {turns} turns (stopping…)." : "Running: {done} of {turns} turns.", { done: run.turnsDone, turns: run.turns })
      : t(run.reason ? "Last run {status} ({reason}): {done} of {turns} turns." : "Last run {status}: {done} of {turns} turns.",
        { status: STATUS_WORDS[run.status] || run.status, reason: AUTO_REASONS[run.reason] || run.reason, done: run.turnsDone, turns: run.turns });
  const startAuto = pending(async () => {
    try {
      await api.post(`${base}/auto`, { turns: Number(turns.value), delayMs: Math.round(Number(delay.value) * 1000) });
      toast(t("Auto mode started: the members talk among themselves."));
    } catch (err) { failed(t("Auto mode did not start"))(err); }
    redraw();
  });
  const stopAuto = pending(async () => {
    try { await api.del(`${base}/auto`); toast(t("Auto mode is stopping.")); } catch (err) { failed(t("Not stopped"))(err); }
    redraw();
  });

  // delete
  const remove = pending(async () => {
    if (!window.confirm(t("Delete “{title}” and all its messages? This cannot be undone.", { title: conv.title || conv.members.map((m) => m.name).join(", ") }))) return;
    try {
      await api.del(base);
      toast(t("Conversation deleted."));
      location.hash = "#/";
    } catch (err) { failed(t("Not deleted"))(err); }
  });

  return h("div", { id: "settings-panel" },
    h("h2", {}, t("Conversation settings")),
    h("section", {}, field(t("Name"), "settings-title", title),
      h("div", { class: "row", style: "margin-top:.4em" }, h("button", { id: "settings-rename", onclick: rename }, t("Rename")))),
    h("section", {}, h("h3", {}, t("Members")),
      h("ul", { class: "member-list", id: "member-list" }, conv.members.map(memberRow)),
      isGroup && others.length > 0 && h("div", { class: "row" }, addSelect,
        h("button", { id: "member-add", onclick: add }, t("Add"))),
      isGroup && h("p", { class: "muted small" }, t("A muted member still reads along and replies when named or asked to speak."))),
    h("section", {}, h("h3", {}, t("Replies")),
      field(t("Who replies"), "settings-order", order),
      field(t("At most this many replies to a message"), "settings-limit", limit),
      field(t("Chattiness"), "settings-chattiness", chatty),
      field(t("Language"), "settings-language", language),
      h("label", { class: "inline" }, story, t("Story (each member keeps a running story)")),
      h("label", { class: "inline" }, suggest, t("Suggest my next replies")),
      field(t("Suggestions shown"), "settings-suggestion-count", count),
      h("div", { class: "row", style: "margin-top:.6em" }, h("button", { class: "primary", id: "settings-save", onclick: saveSettings }, t("Save settings")))),
    isGroup && h("section", { id: "auto-section" }, h("h3", {}, t("Auto mode")),
      h("p", { class: "muted small" }, t("The members talk among themselves for a few turns; sending a message stops it.")),
      h("p", { id: "auto-status" }, autoState),
      running ? h("button", { id: "auto-stop", onclick: stopAuto }, t("Stop auto mode"))
        : h("div", { class: "row" }, h("label", { for: "auto-turns", class: "inline" }, t("Turns")), turns,
          h("label", { for: "auto-delay", class: "inline" }, t("Pause (s)")), delay,
          h("button", { id: "auto-start", onclick: startAuto }, t("Start")))),
    h("section", {}, h("h3", {}, t("Delete")),
      h("button", { class: "danger", id: "conversation-delete", onclick: remove }, t("Delete this conversation"))));
}
