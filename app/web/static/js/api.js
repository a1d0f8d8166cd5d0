// The public HTTP/SSE API, as a frontend uses it. Everything the client shows comes through here.
//
//   const api = new Api(token);
//   const agents = await api.get("/v1/agents");
//   await api.streamTurn(conversationId, {content: "hi", idempotencyKey}, (event, data, id) => ...);
//
// Errors are always {code, message, details}; they are thrown as ApiError with the HTTP status and,
// for 409 turn_in_progress / 429, the Retry-After header in seconds.

// The events a turn ends with, and the one a stored turn's status stands for.
const END_EVENTS = ["turn.completed", "turn.failed", "turn.cancelled"];
const endEvent = (status) => (status === "failed" ? "turn.failed" : status === "cancelled" ? "turn.cancelled" : "turn.completed");

export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code || "http_error";
    this.details = body?.details || null;
    this.retryAfter = retryAfter;
  }
}

// The app sets onUnauthorized: any 401 (an expired or revoked token) signs out, wherever it came from.
export const auth = { onUnauthorized: null };

async function errorOf(resp) {
  let body = null;
  try { body = await resp.json(); } catch { /* not JSON */ }
  const retry = resp.headers.get("retry-after");
  const err = new ApiError(resp.status, body, retry == null ? null : Number(retry));
  if (resp.status === 401 && resp.url.includes("/v1/") && !resp.url.includes("/v1/dev/token")) auth.onUnauthorized?.(err);
  return err;
}

export class Api {
  constructor(token, base = "") {
    this.token = token;
    this.base = base;
  }

  headers(extra = {}) {
    const h = { ...extra };
    if (this.token) h.authorization = `Bearer ${this.token}`;
    return h;
  }

  async request(method, path, body) {
    const init = { method, headers: this.headers() };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const resp = await fetch(this.base + path, init);
    if (!resp.ok) throw await errorOf(resp);
    if (resp.status === 204) return null;
    const type = resp.headers.get("content-type") || "";
    return type.includes("json") ? resp.json() : resp.text();
  }

  get(path) { return this.request("GET", path); }
  post(path, body = {}) { return this.request("POST", path, body); }
  patch(path, body) { return this.request("PATCH", path, body); }
  put(path, body) { return this.request("PUT", path, body); }
  del(path) { return this.request("DELETE", path); }

  // A file download behind the bearer token (a plain <a href> cannot send the header).
  async download(path, filename) {
    const resp = await fetch(this.base + path, { headers: this.headers() });
    if (!resp.ok) throw await errorOf(resp);
    const url = URL.createObjectURL(await resp.blob());
    const a = Object.assign(document.createElement("a"), { href: url, download: filename });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  // POST with Accept: text/event-stream and call onEvent(event, data) per event; a JSON error is thrown.
  // Nothing is replayed if the connection drops (for streams that store nothing, e.g. impersonate).
  async streamPost(path, body, onEvent, signal) {
    const resp = await fetch(this.base + path, {
      method: "POST", signal,
      headers: this.headers({ "content-type": "application/json", accept: "text/event-stream" }),
      body: JSON.stringify(body),
    });
    if (!resp.ok) throw await errorOf(resp);
    await readSse(resp.body, onEvent);
  }

  // POST a turn with Accept: text/event-stream and call onEvent(event, data, id) per SSE event.
  // EventSource cannot POST, so the stream is read with fetch and parsed here. If the connection
  // drops before turn.completed/failed/cancelled, the rest is replayed from
  // GET /v1/conversations/{id}/events?turnId=… with Last-Event-ID (servers without that route:
  // the turn is polled until it has finished, and its result carries every saved reply).
  async streamTurn(conversationId, body, onEvent, route = "turns") {  // route "continue": Continue, the same stream
    const conv = `${this.base}/v1/conversations/${conversationId}`;
    const resp = await fetch(`${conv}/${route}`, {
      method: "POST",
      headers: this.headers({ "content-type": "application/json", accept: "text/event-stream" }),
      body: JSON.stringify(body),
    });
    if (!resp.ok) throw await errorOf(resp);
    const type = resp.headers.get("content-type") || "";
    if (!type.includes("text/event-stream")) {  // an idempotent replay answers with the stored JSON result
      const result = await resp.json();
      onEvent(endEvent(result.status), result, null);
      return;
    }
    let lastId = null, turnId = null, finished = false;
    const handle = (event, data, id) => {
      if (id != null) lastId = id;
      if (data && data.turnId) turnId = data.turnId;
      if (END_EVENTS.includes(event)) finished = true;
      onEvent(event, data, id);
    };
    try {
      await readSse(resp.body, handle);
    } catch (err) {
      if (!turnId) throw err;
    }
    for (let attempt = 1; !finished && turnId && attempt <= 3; attempt++) {
      await sleep(500 * attempt);
      try {
        const replay = await fetch(`${conv}/events?turnId=${encodeURIComponent(turnId)}`, {
          headers: this.headers({ accept: "text/event-stream", ...(lastId != null ? { "last-event-id": lastId } : {}) }),
        });
        if (replay.status === 404 || replay.status === 405) break;  // no replay route on this server
        if (!replay.ok) continue;
        await readSse(replay.body, handle);
      } catch { /* dropped again: retry */ }
    }
    for (let waited = 0; !finished && turnId && waited < 600; waited++) {
      try {
        const turn = await this.get(`/v1/conversations/${conversationId}/turns/${turnId}`);
        if (turn.status !== "running") handle(endEvent(turn.status), turn, null);
      } catch { /* keep polling */ }
      if (!finished) await sleep(1000);
    }
  }

  // GET /v1/conversations/{id}/events: call onEvent(event, data, id) per event until the stream
  // ends (a ?turnId= stream ends after that turn's last event) or `signal` aborts; returns the last
  // event id seen (a bare "id:" line moves it on too), the Last-Event-ID to resume from. With
  // `after` null and no lastEventId the stream starts from now.
  async followEvents(conversationId, { lastEventId = null, after = null, turnId = null, signal, onOpen } = {}, onEvent) {
    const q = new URLSearchParams();
    if (after != null) q.set("after", String(after));
    if (turnId) q.set("turnId", turnId);
    const resp = await fetch(`${this.base}/v1/conversations/${conversationId}/events${q.size ? `?${q}` : ""}`, {
      signal, headers: this.headers({ accept: "text/event-stream", ...(lastEventId != null ? { "last-event-id": lastEventId } : {}) }),
    });
    if (!resp.ok) throw await errorOf(resp);
    onOpen?.();  // the stream is open: from here on nothing is missed
    let last = lastEventId;
    try {
      await readSse(resp.body, onEvent, (id) => { last = id; });
    } catch (err) {
      if (signal?.aborted) return last;
      err.lastEventId = last;
      throw err;
    }
    return last;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Server-Sent Events framing: "event:", "data:" (joined with newlines), "id:", a blank line ends one.
export async function readSse(stream, onEvent, onId = () => {}) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = "message", data = [], id = null;
  let fresh = false;  // an "id:" line since the last dispatch: the id moves on once the event is complete
  const dispatch = () => {
    if (fresh) { fresh = false; onId(id); }
    if (data.length) {
      let parsed = data.join("\n");
      try { parsed = JSON.parse(parsed); } catch { /* plain text data */ }
      onEvent(event, parsed, id);
    }
    event = "message"; data = [];
  };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let nl;
    while ((nl = buffer.search(/\r?\n/)) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(buffer[nl] === "\r" ? nl + 2 : nl + 1);
      if (line === "") { dispatch(); continue; }
      if (line.startsWith(":")) continue;  // comment / keep-alive
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let val = colon < 0 ? "" : line.slice(colon + 1);
      if (val.startsWith(" ")) val = val.slice(1);
      if (field === "event") event = val;
      else if (field === "data") data.push(val);
      else if (field === "id") { id = val; fresh = true; }
    }
  }
  dispatch();
}

// The token's claims, for display only (the server verifies the signature on every request).
export function claimsOf(token) {
  try {
    const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    const json = decodeURIComponent(escape(atob(part + "=".repeat((4 - part.length % 4) % 4))));
    const claims = JSON.parse(json);
    return { user: claims.sub, admin: String(claims.scope || "").split(" ").includes("admin"), exp: claims.exp };
  } catch {
    return null;
  }
}
