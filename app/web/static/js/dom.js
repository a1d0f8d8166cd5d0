// Tiny DOM helpers: h("div", {class: "x", onclick: fn}, "text", child) builds an element.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value == null) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child == null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

// A click handler that runs once at a time: the button is disabled while the request is pending,
// so a double click makes one conversation or one agent, not two.
export function pending(handler) {
  let busy = false;
  return async (event) => {
    const button = event?.currentTarget;
    if (busy) return;
    busy = true;
    if (button) button.disabled = true;
    try {
      await handler(event);
    } finally {
      busy = false;
      if (button) button.disabled = false;
    }
  };
}

export function initials(name) {
  const words = String(name || "?").trim().split(/\s+/);
  const first = [...words[0]];
  if (words.length > 1) return (first[0] + [...words[1]][0]).toUpperCase();
  return (/^[\x00-\x7f]/.test(first[0]) ? first.slice(0, 2).join("") : first[0]).toUpperCase();
}

const PALETTE = ["#3b6fd8", "#d8553b", "#2e9d68", "#8e44ad", "#c28a00", "#16879a", "#c2185b", "#6d4c41"];
const USER_COLOR = "#455a64";

// The open conversation's members get the palette's colours in their order, so no two of them
// share one (a hash of the id alone made neighbours collide); anyone else is hashed.
const assigned = new Map();
export function assignColors(keys) {
  assigned.clear();
  keys.forEach((key, i) => assigned.set(key, PALETTE[i % PALETTE.length]));
}

export function colorOf(key) {
  if (assigned.has(key)) return assigned.get(key);
  if (String(key).startsWith("user:")) return USER_COLOR;
  let hash = 0;
  for (const ch of String(key)) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}

export function avatar(name, key) {
  return h("span", { class: "avatar", style: `background:${colorOf(key || name)}`, title: name }, initials(name));
}

export function fmt(value, digits = 3) {
  if (value == null) return "–";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits).replace(/\.?0+$/, "");
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

let toastTimer = null;
export function toast(text) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.hidden = true; }, 4000);
}

// A small SVG bar chart: rows [{label, value}], horizontal bars.
export function barChart(title, rows, { unit = "" } = {}) {
  const ns = "http://www.w3.org/2000/svg";
  const bar = 16, gap = 5, left = 96, width = 380;
  const max = Math.max(...rows.map((r) => r.value), 0) || 1;
  const svg = document.createElementNS(ns, "svg");
  const height = rows.length * (bar + gap) + 8;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", title);
  rows.forEach((r, i) => {
    const y = 4 + i * (bar + gap);
    const w = Math.max(1, ((width - left - 70) * r.value) / max);
    const mk = (tag, attrs, text) => {
      const el = document.createElementNS(ns, tag);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      if (text != null) el.textContent = text;
      svg.append(el);
    };
    mk("text", { x: left - 6, y: y + bar - 5, "text-anchor": "end" }, String(r.label).slice(0, 14));
    mk("rect", { x: left, y, width: w, height: bar, rx: 3, fill: colorOf(r.label) });
    mk("text", { x: left + w + 4, y: y + bar - 5 }, fmt(r.value, 2) + unit);
  });
  return h("figure", { class: "card" }, h("figcaption", {}, h("h3", {}, title)), svg);
}
