// The agent catalogue: anyone signed in reads it; admins create and edit agents.

import { avatar, h, pending, toast } from "./dom.js";
import { render } from "./app.js";
import { t } from "./i18n.js";

const CAPS = ["comfort", "analysis", "deescalation", "playful"];
const PROMPTS = [["headline", "Headline"], ["description", "Description"], ["personalityPrompt", "Persona (personality)"],
  ["tonePrompt", "Tone"], ["storyBackground", "Story background"]];

export async function agentsView(session) {
  const agents = await session.api.get("/v1/agents");
  const admin = session.me.admin;
  const formSlot = h("div", { id: "agent-form-slot" });
  const open = (agent) => formSlot.replaceChildren(agentForm(session, agent));
  return h("div", { class: "page" },
    h("div", { class: "row" }, h("h2", {}, t("Agents")), h("span", { class: "spacer" }),
      admin ? h("button", { class: "primary", id: "agent-new", onclick: () => open(null) }, t("New agent"))
        : h("span", { class: "muted" }, t("Only admins can create or edit agents."))),
    formSlot,
    h("div", { class: "agent-list", id: "agent-list" }, agents.map((a) => h("div", { class: "card agent-card", dataset: { agentId: a.id } },
      avatar(a.name, a.id),
      h("div", { style: "min-width:0" },
        h("strong", { class: "agent-name" }, a.name),
        a.aliases.length > 0 && h("div", { class: "muted" }, `aka ${a.aliases.join(", ")}`),
        h("div", {}, a.headline),
        a.capabilities && h("div", { class: "muted", style: "font-size:.85em" }, CAPS.map((c) => `${c} ${a.capabilities[c]}`).join(" · ")),
        admin && h("div", { class: "row" },
          h("button", { class: "link agent-edit", onclick: () => open(a) }, t("Edit")),
          h("button", { class: "link bad agent-delete", onclick: pending(() => remove(session, a)) }, t("Delete"))))))),
    !agents.length && h("p", { class: "muted" }, t("No agents yet.")));
}

function agentForm(session, agent) {
  const field = (key, label, multiline) => {
    const el = multiline ? h("textarea", { id: `agent-${key}`, rows: 2 }) : h("input", { type: "text", id: `agent-${key}` });
    el.value = agent?.[key] || "";
    return [h("label", { for: `agent-${key}` }, label), el];
  };
  const name = field("name", t("Name"));
  const aliases = h("input", { type: "text", id: "agent-aliases", placeholder: "comma-separated" });
  aliases.value = (agent?.aliases || []).join(", ");
  const prompts = PROMPTS.map(([key, label]) => field(key, label, key !== "headline"));
  const sliders = CAPS.map((c) => {
    const out = h("output", {}, String(agent?.capabilities?.[c] ?? 0));
    const input = h("input", { type: "range", min: 0, max: 1, step: 0.05, id: `cap-${c}`, value: String(agent?.capabilities?.[c] ?? 0) });
    input.addEventListener("input", () => { out.textContent = input.value; });
    return { c, input, els: [h("label", { for: `cap-${c}` }, c), input, out] };
  });
  const save = async () => {
    const body = {
      name: name[1].value.trim(),
      aliases: aliases.value.split(",").map((s) => s.trim()).filter(Boolean),
      capabilities: Object.fromEntries(sliders.map((s) => [s.c, Number(s.input.value)])),
    };
    for (const [[key], [, el]] of PROMPTS.map((p, i) => [p, prompts[i]])) body[key] = el.value;
    try {
      if (agent) await session.api.patch(`/v1/agents/${agent.id}`, body);
      else await session.api.post("/v1/agents", body);
      toast(t("Saved {name}.", { name: body.name }));
      await render();
    } catch (err) {
      toast(t("Not saved: {error}", { error: err.message }));
    }
  };
  return h("div", { class: "card", id: "agent-form", style: "max-width:640px" },
    h("h3", {}, agent ? `Edit ${agent.name}` : t("New agent")),
    name, h("label", { for: "agent-aliases" }, "Aliases (names users may mention)"), aliases, prompts,
    h("label", {}, "Capabilities (0–1: how well the agent comforts, analyses, de-escalates, plays)"),
    h("div", { class: "caps" }, sliders.map((s) => s.els)),
    h("div", { class: "row", style: "margin-top:1em" },
      h("button", { class: "primary", id: "agent-save", onclick: pending(save) }, t("Save")),
      h("button", { onclick: (e) => e.target.closest("#agent-form").remove() }, t("Cancel"))));
}

// An agent still seated in a conversation cannot go (409 agent_in_use): the answer says so.
async function remove(session, agent) {
  if (!window.confirm(t("Delete the agent {name}? Conversations keep their messages.", { name: agent.name }))) return;
  try {
    await session.api.del(`/v1/agents/${agent.id}`);
    toast(t("Deleted {name}.", { name: agent.name }));
    await render();
  } catch (err) {
    toast(err.code === "agent_in_use"
      ? t("{name} is still a member of a conversation: remove them there (or delete it) first.", { name: agent.name })
      : `${t("Not deleted")}: ${err.message}`);
  }
}
