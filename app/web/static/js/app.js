// The client's shell: sign-in, the top bar and a hash router (#/, #/c/<id>, #/new, #/agents, #/analytics).

import { Api, auth, claimsOf } from "./api.js";
import { h, toast } from "./dom.js";
import { LANGS, lang, setLang, t } from "./i18n.js";
import { chatView, leaveChat } from "./chat.js";
import { agentsView } from "./agents.js";
import { analyticsView } from "./analytics.js";

const TOKEN_KEY = "companion.token";

export const session = { api: null, me: null, config: { devTokens: false }, agents: [] };

async function loadConfig() {
  try {
    session.config = await new Api(null).get("/web/config.json");
  } catch { /* older server: no config, no dev tokens */ }
}

function signIn(token) {
  const claims = claimsOf(token);
  if (!claims) { toast(t("That does not look like a token (three dot-separated parts).")); return false; }
  if (claims.exp && claims.exp * 1000 < Date.now()) { toast(t("That token has expired: sign in again.")); return false; }
  localStorage.setItem(TOKEN_KEY, token);
  session.api = new Api(token);
  session.me = claims;
  return true;
}

export function signOut(reason) {
  if (!session.me && !localStorage.getItem(TOKEN_KEY)) return;  // already out (several requests may see the 401)
  localStorage.removeItem(TOKEN_KEY);
  session.api = null;
  session.me = null;
  if (reason) toast(reason);
  location.hash = "#/";
  render();
}

function signInView() {
  const tokenBox = h("textarea", { id: "token-input", rows: 3, placeholder: "eyJhbGciOi…", spellcheck: false });
  const userBox = h("input", { type: "text", id: "dev-user", placeholder: "alice", value: "alice" });
  const adminBox = h("input", { type: "checkbox", id: "dev-admin" });
  const submit = async () => {
    if (signIn(tokenBox.value.trim())) await render();
  };
  const dev = async () => {
    try {
      const out = await new Api(null).post("/v1/dev/token", { user: userBox.value.trim(), admin: adminBox.checked });
      if (signIn(out.token)) await render();
    } catch (err) {
      toast(t("Could not get a dev token: {error}", { error: err.message }));
    }
  };
  return h("div", { class: "page" },
    h("div", { class: "card", style: "max-width:520px;margin:2em auto" },
      h("h2", {}, t("Sign in")),
      h("label", { for: "token-input" }, t("Paste a bearer token ("), h("code", {}, "companion token --user alice"), ")"),
      tokenBox,
      h("div", { class: "row", style: "margin-top:.6em" }, h("button", { class: "primary", id: "token-submit", onclick: submit }, t("Sign in"))),
      session.config.devTokens && h("div", { id: "dev-signin", style: "margin-top:1.4em;border-top:1px solid var(--line);padding-top:1em" },
        h("h3", {}, t("Development mode")),
        h("p", { class: "muted" }, t("This server hands out tokens for any user name (COMPANION_DEV_TOKENS is on).")),
        h("label", { for: "dev-user" }, t("User name")), userBox,
        h("label", { style: "display:flex;gap:.4em;align-items:center;color:var(--ink)" }, adminBox, t("admin")),
        h("button", { id: "dev-token", onclick: dev, style: "margin-top:.6em" }, t("Get a dev token")))));
}

// The top bar's words, and the language switch (a reload: every screen is drawn again in it).
function renderShellWords() {
  document.querySelectorAll("#nav a").forEach((a) => { a.textContent = t({ chat: "Chat", agents: "Agents", analytics: "Analytics" }[a.dataset.nav]); });
  document.getElementById("sign-out").textContent = t("Sign out");
  document.getElementById("menu-toggle").setAttribute("aria-label", t("Conversations"));
  const select = document.getElementById("lang-select");
  select.replaceChildren(...LANGS.map(([code, label]) => h("option", { value: code, selected: code === lang }, label)));
  select.onchange = () => { setLang(select.value); location.reload(); };
}

function renderTopbar() {
  const nav = document.getElementById("nav");
  const signedIn = !!session.me;
  nav.hidden = !signedIn;
  document.getElementById("sign-out").hidden = !signedIn;
  document.getElementById("who").textContent = signedIn ? `${session.me.user}${session.me.admin ? ` (${t("admin")})` : ""}` : "";
  nav.querySelectorAll("[data-admin]").forEach((a) => { a.hidden = !session.me?.admin; });
  const section = location.hash.startsWith("#/agents") ? "agents" : location.hash.startsWith("#/analytics") ? "analytics" : "chat";
  nav.querySelectorAll("a").forEach((a) => a.classList.toggle("active", a.dataset.nav === section));
  document.getElementById("menu-toggle").hidden = !(signedIn && section === "chat");
}

let rendering = 0;
export async function render() {
  const ticket = ++rendering;
  leaveChat();  // the open conversation stops following its events
  renderTopbar();
  const view = document.getElementById("view");
  if (!session.me) {
    view.replaceChildren(signInView());
    return;
  }
  const hash = location.hash || "#/";
  let node;
  try {
    if (hash.startsWith("#/agents")) node = await agentsView(session);
    else if (hash.startsWith("#/analytics")) node = await analyticsView(session);
    else node = await chatView(session, hash);
  } catch (err) {
    if (err.status === 401) return signOut(t("Signed out: {error}", { error: err.message }));
    node = h("div", { class: "page" }, h("p", { class: "bad" }, t("Something went wrong: {error}", { error: err.message })));
  }
  if (ticket === rendering) view.replaceChildren(node);
}

async function main() {
  renderShellWords();
  await loadConfig();
  auth.onUnauthorized = (err) => { if (session.me) signOut(t("Signed out: {error}", { error: err.message })); };
  const saved = localStorage.getItem(TOKEN_KEY);
  if (saved && !signIn(saved)) localStorage.removeItem(TOKEN_KEY);  // a bad or expired saved token goes
  document.getElementById("sign-out").addEventListener("click", () => signOut());
  document.getElementById("menu-toggle").addEventListener("click", () => {
    document.querySelector(".chat-layout")?.classList.toggle("drawer-open");
  });
  window.addEventListener("hashchange", render);
  await render();
}

main();
