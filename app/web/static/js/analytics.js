// Analytics for admins: every /v1/analytics query as a table, a few charts, and the downloads.

import { barChart, fmt, h, toast } from "./dom.js";

// query -> [label field, value field, title, unit]; rows are summed per label.
const CHARTS = [
  ["speaking-share", "agentName", "share", "Speaking share per agent", ""],
  ["selected-by", "selectedBy", "count", "Who decided (selections)", ""],
  ["emotions", "primaryEmotion", "turns", "User emotions (turns)", ""],
  ["latency", "stage", "p50Ms", "Median latency per stage", " ms"],
  ["usage", "stage", "inputTokens", "Input tokens per stage", ""],
];

let since = "30d";

export async function analyticsView(session) {
  const { api } = session;
  if (!session.me.admin) return h("div", { class: "page" }, h("p", {}, "Analytics need an admin token."));
  const queries = await api.get("/v1/analytics");
  const results = Object.fromEntries(await Promise.all(queries.map(async (q) => {
    try { return [q.name, await api.get(`/v1/analytics/${q.name}?since=${since}`)]; } catch (err) { return [q.name, err]; }
  })));
  const pick = h("select", { id: "analytics-since" }, ["1d", "7d", "30d", "365d"].map((s) => h("option", { value: s, selected: s === since }, `last ${s}`)));
  pick.addEventListener("change", async () => {
    since = pick.value;
    document.getElementById("view").replaceChildren(await analyticsView(session));
  });
  const download = (path, file) => api.download(`${path}?since=${since}`, file).catch((err) => toast(`Download failed: ${err.message}`));
  const charts = CHARTS.filter(([q]) => Array.isArray(results[q]) && results[q].length).map(([q, label, value, title, unit]) => {
    const sums = new Map();
    for (const row of results[q]) sums.set(row[label] ?? "–", (sums.get(row[label] ?? "–") || 0) + (Number(row[value]) || 0));
    return barChart(title, [...sums].map(([l, v]) => ({ label: l, value: v })), { unit });
  });
  return h("div", { class: "page", id: "analytics" },
    h("div", { class: "row" }, h("h2", {}, "Analytics"), pick, h("span", { class: "spacer" }),
      h("button", { id: "download-report", onclick: () => download("/v1/reports/analytics.html", "analytics-report.html") }, "HTML report"),
      h("button", { id: "download-csv", onclick: () => download("/v1/reports/decisions.csv", "decisions.csv") }, "Decisions CSV")),
    h("div", { class: "charts" }, charts.length ? charts : h("p", { class: "muted" }, "No data in this period yet.")),
    queries.map((q) => h("div", { class: "card", dataset: { query: q.name } },
      h("h3", {}, q.name), h("p", { class: "muted" }, q.summary), resultTable(results[q.name]))));
}

function resultTable(rows) {
  if (rows instanceof Error) return h("p", { class: "bad" }, rows.message);
  if (!rows.length) return h("p", { class: "muted" }, "No rows.");
  const cols = Object.keys(rows[0]);
  return h("div", { class: "table-wrap" }, h("table", {},
    h("thead", {}, h("tr", {}, cols.map((c) => h("th", { class: typeof rows[0][c] === "number" ? "n" : "" }, c)))),
    h("tbody", {}, rows.slice(0, 50).map((r) => h("tr", {}, cols.map((c) => h("td", { class: typeof r[c] === "number" ? "n" : "" }, fmt(r[c]))))))));
}
