// Safe Markdown for messages: built as DOM nodes from text, never as HTML, so a reply or a user's
// "<img onerror=…>" is shown as the characters it is. What it knows: ```code blocks```, `code`,
// **bold**, *italic* / _italic_ (a companion's *actions*), ~~strike~~, [links](https://…) (http and
// https only, opened in a new tab without the opener), "- " / "1. " lists, "> " quotes and
// "# " headings. Everything else, line breaks included, stays as typed (the bubble keeps white space).

import { h } from "./dom.js";

const INLINE = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(~~[^~\n]+~~)|(\*[^*\s][^*\n]*\*)|(\b_[^_\s][^_\n]*_\b)|(\[[^\]\n]+\]\([^)\s]+\))/g;

function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    const s = m[0];
    if (m[1]) out.push(h("code", {}, s.slice(1, -1)));
    else if (m[2]) out.push(h("strong", {}, inline(s.slice(2, -2))));
    else if (m[3]) out.push(h("s", {}, inline(s.slice(2, -2))));
    else if (m[4] || m[5]) out.push(h("em", {}, inline(s.slice(1, -1))));
    else {
      const [, label, href] = s.match(/^\[([^\]]+)\]\(([^)\s]+)\)$/);
      out.push(/^https?:\/\//i.test(href) ? h("a", { href, target: "_blank", rel: "noopener noreferrer nofollow" }, label) : s);
    }
    last = m.index + s.length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

// The text as nodes to put in a bubble (a DocumentFragment).
export function markdown(text) {
  const frag = document.createDocumentFragment();
  const lines = String(text ?? "").split("\n");
  let para = [];
  const flush = () => {
    if (!para.length) return;
    frag.append(h("p", {}, inline(para.join("\n"))));
    para = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^```/.test(line)) {
      flush();
      const code = [];
      for (i++; i < lines.length && !/^```/.test(lines[i]); i++) code.push(lines[i]);
      frag.append(h("pre", {}, h("code", {}, code.join("\n"))));
      continue;
    }
    const item = line.match(/^\s*([-*•]|\d+[.)])\s+(.*)$/);
    if (item) {
      flush();
      const ordered = /\d/.test(item[1]);
      const list = h(ordered ? "ol" : "ul", {});
      for (; i < lines.length; i++) {
        const m = lines[i].match(/^\s*([-*•]|\d+[.)])\s+(.*)$/);
        if (!m || /\d/.test(m[1]) !== ordered) break;
        list.append(h("li", {}, inline(m[2])));
      }
      i--;
      frag.append(list);
      continue;
    }
    const quote = line.match(/^>\s?(.*)$/);
    if (quote) { flush(); frag.append(h("blockquote", {}, inline(quote[1]))); continue; }
    const heading = line.match(/^#{1,6}\s+(.*)$/);
    if (heading) { flush(); frag.append(h("p", { class: "md-heading" }, inline(heading[1]))); continue; }
    if (line.trim() === "") { flush(); continue; }
    para.push(line);
  }
  flush();
  return frag;
}

// When a message was written: the time today, else the date and time; the full moment on hover.
export function when(iso) {
  if (!iso) return null;
  const d = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : `${iso}Z`);
  if (Number.isNaN(d.getTime())) return null;
  const today = new Date().toDateString() === d.toDateString();
  const text = today ? d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })
    : d.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
  return h("time", { class: "when", datetime: d.toISOString(), title: d.toLocaleString() }, text);
}
