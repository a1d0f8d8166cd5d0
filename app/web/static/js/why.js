// "Why this speaker": emotion and intent (with their source), every candidate's features and score,
// who decided and the LLM's reason, timings and token usage — all from the message's metadata and
// its turn (GET /v1/conversations/{id}/turns/{turnId}).

import { fmt, h } from "./dom.js";
import { t } from "./i18n.js";

const kv = (pairs) => h("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined)
  .map(([k, v]) => [h("dt", {}, t(k)), h("dd", {}, v instanceof Node ? v : fmt(v))]));

function candidatesTable(selection, name) {
  const cands = selection?.candidates || [];
  if (!cands.length) return h("p", { class: "muted" }, "No candidates recorded.");
  const features = [...new Set(cands.flatMap((c) => Object.keys(c.features || {})))];
  const cell = (c, text, cls = "n") => h("td", { class: `${cls}${c.selected ? " sel" : ""}` }, text);
  return h("div", { class: "table-wrap" }, h("table", { class: "cand-table", id: "why-candidates" },
    h("thead", {}, h("tr", {}, h("th", {}, ""), cands.map((c) => h("th", { class: `n${c.selected ? " sel" : ""}`, dataset: { agentId: c.agentId } }, name(c.agentId))))),
    h("tbody", {},
      h("tr", { class: "score-row" }, h("th", {}, "score"), cands.map((c) => cell(c, fmt(c.score)))),
      h("tr", {}, h("th", {}, "rank"), cands.map((c) => cell(c, fmt(c.rank)))),
      h("tr", {}, h("th", {}, "selected"), cands.map((c) => cell(c, c.selected ? `yes (${c.selectedBy})` : "no"))),
      h("tr", {}, h("th", {}, "LLM picked"), cands.map((c) => cell(c, c.llmSelected == null ? "–" : c.llmSelected ? "yes" : "no"))),
      features.map((f) => h("tr", {}, h("th", { class: "muted" }, f), cands.map((c) => cell(c, fmt(c.features?.[f]))))))));
}

function table(obj, unit = "") {
  const entries = Object.entries(obj || {});
  if (!entries.length) return h("p", { class: "muted" }, "–");
  return h("table", {}, h("tbody", {}, entries.map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", { class: "n" }, fmt(v, 1) + (typeof v === "number" ? unit : ""))))));
}

export function whyPanel(message, turn, name) {
  const meta = message.metadata || {};
  const orch = meta.orchestration || {};
  const sel = orch.selection || {};
  const emotion = turn?.orchestration?.emotion || orch.speakingContext?.userEmotion || {};
  const intent = turn?.orchestration?.intent || orch.intent || {};
  const quality = orch.quality?.[message.agentId + (message.replyKind === "cross" ? ":cross" : "")];
  const story = meta.story;
  return h("div", { id: "why-panel" },
    h("h2", {}, t("Why {name} replied", { name: name(message.agentId) })),
    h("section", {}, h("h3", {}, t("Decision")), kv([
      ["selected by", h("strong", { id: "why-selected-by" }, meta.selectedBy || "–")],
      ["decided by", sel.decidedBy],
      ["reason", sel.reason],
      ["mentions", (sel.mentions || []).map(name).join(", ") || "none"],
      ["LLM selector", sel.llm ? `${sel.llm.source}, ${fmt(sel.llm.ms, 0)} ms, ${sel.llm.attempts ?? 0} attempt(s)` : "–"],
      ["LLM problems", (sel.llmProblems || []).join(", ") || "none"],
      ["reply target", sel.replyTarget],
      ["weights", sel.weightsVersion],
      message.replyKind === "cross" && ["cross reply", `to ${name(message.respondToAgentId)}: ${meta.crossReplyReason || ""}`],
    ].filter(Boolean))),
    h("section", {}, h("h3", {}, t("Emotion")), kv([
      ["emotion", `${emotion.primaryEmotion} · intensity ${fmt(emotion.intensity, 2)}`],
      ["source", h("span", { id: "why-emotion-source" }, emotion.source || (turn ? "–" : "not loaded"))],
      ["needs", ["Comfort", "Advice", "Deescalation"].filter((n) => emotion[`needs${n}`]).join(", ") || "none"],
      ["social energy", emotion.socialEnergy],
      ["reason", emotion.reason],
    ])),
    h("section", {}, h("h3", {}, t("Intent")), kv([
      ["kind", intent.kind],
      ["source", intent.source],
      ["addressed", (intent.addressedAgentIds || []).map(name).join(", ") || "none"],
      ["wants several voices", intent.wantsMultipleVoices ? "yes" : "no"],
      ["reason", intent.reason],
    ])),
    h("section", {}, h("h3", {}, t("Candidates")), candidatesTable(sel, name)),
    h("section", {}, h("h3", {}, t("Timings")), table(meta.timings, " ms")),
    h("section", {}, h("h3", {}, t("Usage")), kv([
      ["model", meta.model],
      ["input tokens", meta.usage?.inputTokens],
      ["output tokens", meta.usage?.outputTokens],
      ["estimated", meta.usage?.estimated ? "yes" : "no"],
      ["attempts", meta.attempts],
      quality && ["quality", quality.passed ? `passed (${quality.attempts} attempt(s)${quality.regeneratedFor?.length ? `, regenerated for ${quality.regeneratedFor.join(", ")}` : ""})` : `dropped: ${quality.problems.join(", ")}`],
    ].filter(Boolean))),
    story && h("section", {}, h("h3", {}, t("Story")), kv([
      ["outcome", story.outcome],
      ["revision", story.revision],
      ["tool calls", (story.toolCalls || []).join(", ")],
      ["diagnostics", (story.diagnostics || []).map((d) => (d && typeof d === "object"
        ? [d.code || d.kind, d.message || d.detail || d.reason].filter(Boolean).join(": ") || JSON.stringify(d) : String(d))).join("; ") || "none"],
    ])));
}
