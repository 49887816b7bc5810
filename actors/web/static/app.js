// The Troupe page: one more client of the WebSocket protocol (docs/protocol.md).
// The login cookie authenticates the WebSocket; every view resumes from its cursor
// (the last seq it applied) after a reconnect, so nothing is missed or doubled.
"use strict";

const $ = (selector, root = document) => root.querySelector(selector);
const esc = Render.escape;
const OUTPUT_LINES = 8;
// Live-only kinds: never replayed, and a server restarted after a crash numbers its
// next events from the last *stored* one, so these must not move the resume cursor.
const EPHEMERAL = new Set(["assistant_text_delta", "assistant_reasoning_delta",
  "tool_call_output_delta", "events_missed"]);

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "html") node.innerHTML = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function ago(seconds) {
  const delta = Math.max(0, Date.now() / 1000 - seconds);
  if (delta < 60) return `${Math.round(delta)}s ago`;
  if (delta < 3600) return `${Math.round(delta / 60)}m ago`;
  if (delta < 86400) return `${Math.round(delta / 3600)}h ago`;
  return new Date(seconds * 1000).toLocaleDateString();
}

// -- the connection ------------------------------------------------------------

class Link {
  constructor(onEvent, onOpen) {
    this.onEvent = onEvent;
    this.onOpen = onOpen;
    this.nextId = 1;
    this.waiting = new Map();
    this.socket = null;
    this.delay = 250;
    this.connect();
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/`);
    this.socket = socket;
    let welcomed = false;
    socket.onopen = () => socket.send(JSON.stringify({ type: "hello", version: 1, client: "web" }));
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (!welcomed) {
        if (frame.type !== "welcome") { status(`refused: ${frame.message || frame.type}`, "bad"); return; }
        welcomed = true;
        this.delay = 250;
        status("connected", "ok");
        this.onOpen();
        return;
      }
      if (frame.type === "event") { this.onEvent(frame); return; }
      const pending = this.waiting.get(frame.id);
      if (!pending) return;
      this.waiting.delete(frame.id);
      if (frame.type === "error") pending.reject(new Error(`${frame.code}: ${frame.message}`));
      else pending.resolve(frame);
    };
    socket.onclose = () => {
      for (const pending of this.waiting.values()) pending.reject(new Error("disconnected"));
      this.waiting.clear();
      status("reconnecting…", "bad");
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 4000);
    };
  }

  get open() { return this.socket && this.socket.readyState === WebSocket.OPEN; }

  request(type, fields = {}) {
    if (!this.open) return Promise.reject(new Error("not connected"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ type, id, ...fields }));
    });
  }
}

function status(text, kind) {
  const node = $("#link");
  node.textContent = text;
  node.className = `link ${kind}`;
}

function toast(text, kind = "bad") {
  const node = h("div", { class: `toast ${kind}`, role: "alert" }, text);
  document.body.append(node);
  setTimeout(() => node.remove(), 5000);
}

// -- one session's stream --------------------------------------------------------

class Stream {
  // What the page knows of one subscribed session (or subagent), built from events.
  constructor(key) {
    this.key = key;
    this.cursor = 0;          // the last durable seq applied: the resume point
    this.liveSeq = 0;
    this.node = h("ol", { class: "timeline", "aria-live": "off" });
    this.tools = new Map();
    this.approvals = new Map();
    this.children = new Map();
    this.current = null;      // the assistant block being streamed
    this.iterations = 0;
    this.processing = false;
    this.interrupted = false;
    this.closed = false;
    this.running = 0;
    this.usage = { input: 0, output: 0 };
    this.task = "";
    this.queue = [];
    this.scheduled = false;
    this.onChange = () => {};
    this.onSpawn = () => {};
  }

  get state() {
    if (this.closed) return "closed";
    if (this.approvals.size) return "awaiting approval";
    if (this.processing && this.running) return "running a tool";
    if (this.processing) return "thinking";
    if (this.interrupted) return "interrupted";
    return "idle";
  }

  push(frame) {
    if (this.stale(frame)) return;
    this.queue.push(frame);
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => this.drain(), 0);
    }
  }

  drain() {
    // Apply in slices so a replay of thousands of events never blocks typing.
    const started = performance.now();
    while (this.queue.length && performance.now() - started < 12) {
      const frame = this.queue.shift();
      if (this.stale(frame)) continue;
      if (EPHEMERAL.has(frame.kind)) this.liveSeq = frame.seq;
      else if (!frame.resent) this.cursor = this.liveSeq = frame.seq;
      this.apply(frame.kind, frame.data, frame);
    }
    if (this.queue.length) setTimeout(() => this.drain(), 0);
    else this.scheduled = false;
    this.onChange(this);
  }

  stale(frame) {
    // The cursor (last durable seq) dedups replayed and live events alike.
    if (frame.resent) return false;
    return EPHEMERAL.has(frame.kind) ? frame.seq <= this.liveSeq : frame.seq <= this.cursor;
  }

  add(node) { this.node.append(node); return node; }

  apply(kind, data, frame) {
    switch (kind) {
      case "session_start":
        this.add(h("li", { class: "note" }, `session started · ${data.model} · ${data.working_directory}`));
        break;
      case "user_input":
        this.task = this.task || data.content;
        this.processing = true;
        this.interrupted = false;
        this.add(h("li", { class: "user" }, h("div", { class: "who" }, "you"), h("div", { class: "md", html: Render.markdown(data.content) })));
        break;
      case "steering_injected":
        this.add(h("li", { class: "user steer" }, h("div", { class: "who" }, "steer"), h("div", { class: "md", html: Render.markdown(data.content) })));
        break;
      case "assistant_text_start":
        this.processing = true;  // a subagent's input arrives without user_input
        this.openAssistant();
        break;
      case "assistant_text_delta":
        this.openAssistant().text += data.delta;
        this.paintAssistant(false);
        break;
      case "assistant_reasoning_delta":
        this.openAssistant().reasoning += data.delta;
        this.paintAssistant(false);
        break;
      case "assistant_text_end": {
        const block = this.openAssistant();
        block.text = data.text;
        block.reasoning = data.reasoning || "";
        this.iterations += 1;
        this.usage.input += data.usage?.input_tokens || 0;
        this.usage.output += data.usage?.output_tokens || 0;
        block.iteration = this.iterations;
        this.paintAssistant(true);
        this.current = null;
        break;
      }
      case "tool_call_start": this.toolStart(data); break;
      case "tool_call_output_delta": {
        const tool = this.tools.get(data.call_id);
        if (tool && !tool.done) { tool.live += data.text; this.paintOutput(tool, tool.live); }
        break;
      }
      case "tool_call_end": this.toolEnd(data); break;
      case "approval_request": this.approvalRequest(data); break;
      case "approval_resolved": {
        this.approvals.delete(data.request_id);
        const verdict = data.approved ? (data.scope === "session" ? "approved for this session" : "approved") : "denied";
        this.add(h("li", { class: `note ${data.approved ? "okay" : "warn"}` },
          `approval ${verdict}${data.message ? `: ${data.message}` : ""}`));
        break;
      }
      case "warning": case "loop_detection":
        this.add(h("li", { class: "alert warn", role: "alert" }, h("strong", {}, "Warning "), data.message));
        break;
      case "turn_limit":
        this.add(h("li", { class: "alert warn", role: "alert" }, h("strong", {}, "Limit reached "), `${data.limit}`));
        break;
      case "error":
        this.add(h("li", { class: "alert bad", role: "alert" }, h("strong", {}, `${data.error_type} `), data.message));
        break;
      case "interrupted":
        this.interrupted = true;
        this.add(h("li", { class: "alert warn" }, h("strong", {}, "Interrupted "), "the input was stopped"));
        break;
      case "input_interrupted":
        this.interrupted = true;
        this.add(h("li", { class: "alert warn" }, h("strong", {}, "Interrupted "), data.message));
        break;
      case "processing_end":
        this.processing = false;
        this.running = 0;
        if (data.interrupted) this.interrupted = true;
        this.closeAssistant();
        break;
      case "session_end":
        this.closed = true;
        this.processing = false;
        this.add(h("li", { class: "note" }, `session ended: ${data.reason}`));
        break;
      case "subagent_spawned":
        this.onSpawn(data.address);  // follow the child at once: its events are live only
        this.children.set(data.address, { id: data.agent_id, address: data.address, task: data.task, status: "running" });
        this.add(h("li", { class: "note" }, `subagent ${data.agent_id} started: ${data.task}`));
        break;
      case "subagent_completed": case "subagent_failed": case "subagent_closed": {
        const child = this.children.get(data.address);
        if (child && kind !== "subagent_closed") child.status = kind === "subagent_completed" ? "done" : "failed";
        if (child && kind === "subagent_closed" && child.status === "running") child.status = "closed";
        break;
      }
      case "events_missed":
        this.add(h("li", { class: "alert warn" }, `${data.missed} live events skipped (replayed from the store)`));
        break;
      default:
        break;
    }
  }

  openAssistant() {
    if (this.current) return this.current;
    const body = h("div", { class: "md" });
    const thinking = h("details", { class: "reasoning", hidden: true }, h("summary", {}, "Reasoning"), h("div", { class: "md" }));
    const meta = h("div", { class: "who" }, "assistant");
    const node = this.add(h("li", { class: "assistant streaming" }, meta, thinking, body));
    this.current = { node, body, thinking, meta, text: "", reasoning: "", painted: 0 };
    return this.current;
  }

  paintAssistant(final) {
    const block = this.current;
    const now = performance.now();
    if (!final && now - block.painted < 60) {
      if (!block.timer) block.timer = setTimeout(() => { block.timer = null; if (this.current === block) this.paintAssistant(false); }, 60);
      return;
    }
    block.painted = now;
    block.body.innerHTML = Render.markdown(block.text);
    if (block.reasoning) {
      block.thinking.hidden = false;
      block.thinking.lastChild.innerHTML = Render.markdown(block.reasoning);
    }
    if (final) {
      block.node.classList.remove("streaming");
      block.meta.textContent = `assistant · iteration ${block.iteration}`;
      if (!block.text) block.body.remove();
    }
  }

  closeAssistant() {
    if (this.current) { this.current.node.classList.remove("streaming"); this.current = null; }
  }

  toolStart(data) {
    this.processing = true;
    this.closeAssistant();
    this.running += 1;
    const args = data.arguments || {};
    const diff = Render.toolDiff(data.tool_name, args);
    const summary = args.command ?? args.file_path ?? args.path ?? args.pattern ?? args.task ?? "";
    const output = h("pre", { class: "output" });
    const more = h("button", { class: "more", type: "button", hidden: true }, "show all");
    const node = this.add(h("li", { class: "tool running", "data-call": data.call_id },
      h("details", { class: "tool-head" },
        h("summary", {}, h("span", { class: "tool-name" }, data.tool_name), " ", h("code", {}, String(summary).slice(0, 200))),
        h("pre", { class: "args" }, JSON.stringify(args, null, 2))),
      diff ? h("pre", { class: "diff" , html: diff }) : null,
      output, more));
    const tool = { node, output, more, live: "", done: false, expanded: false };
    more.addEventListener("click", () => { tool.expanded = !tool.expanded; this.paintOutput(tool, tool.text ?? tool.live); });
    this.tools.set(data.call_id, tool);
  }

  toolEnd(data) {
    let tool = this.tools.get(data.call_id);
    if (!tool) { this.toolStart({ call_id: data.call_id, tool_name: data.tool_name, arguments: {} }); this.running += 0; tool = this.tools.get(data.call_id); }
    this.running = Math.max(0, this.running - 1);
    tool.done = true;
    tool.text = data.output;
    tool.node.classList.remove("running");
    if (data.is_error) tool.node.classList.add("failed");
    this.paintOutput(tool, data.output);
  }

  paintOutput(tool, text) {
    const lines = text.split("\n");
    const long = lines.length > OUTPUT_LINES;
    tool.output.textContent = long && !tool.expanded ? lines.slice(0, OUTPUT_LINES).join("\n") : text;
    tool.more.hidden = !long;
    tool.more.textContent = tool.expanded ? "show less" : `show all ${lines.length} lines`;
  }

  approvalRequest(data) {
    this.approvals.set(data.request_id, data);
    if (!this.node.querySelector(`[data-approval="${CSS.escape(data.request_id)}"]`)) {
      this.add(h("li", { class: "note warn", "data-approval": data.request_id }, `approval asked: ${data.action} ${data.subject}`));
    }
  }
}

// -- the app -----------------------------------------------------------------------

class App {
  constructor() {
    this.streams = new Map();   // subscribed key -> Stream
    this.sessions = [];
    this.filter = "";
    this.view = null;
    this.link = new Link((frame) => this.onEvent(frame), () => this.onOpen());
    addEventListener("hashchange", () => this.route());
    this.route();
  }

  async onOpen() {
    // Resume every open view from its cursor: replay what was missed, then live.
    for (const stream of this.streams.values()) this.subscribe(stream);
    this.route();
  }

  subscribe(stream) {
    stream.liveSeq = stream.cursor;  // a restarted server may reuse live-only numbers
    return this.link.request("subscribe", { session: stream.key, after_seq: stream.cursor })
      .catch((error) => {
        // A subagent that is gone cannot be followed (the server keeps no replay of it).
        if (stream.key.includes("/agents/")) stream.gone = true;
        else toast(`subscribe ${stream.key}: ${error.message}`);
      });
  }

  stream(key) {
    let stream = this.streams.get(key);
    if (!stream) {
      stream = new Stream(key);
      stream.onChange = (changed) => this.changed(changed);
      stream.onSpawn = (address) => this.stream(address);
      this.streams.set(key, stream);
      if (this.link.open) stream.subscribed = this.subscribe(stream);
    }
    return stream;
  }

  onEvent(frame) {
    const stream = this.streams.get(frame.session);
    if (stream) stream.push(frame);
  }

  route() {
    if (this.view === "session") this.currentKey = null;
    const hash = location.hash || "#/";
    for (const link of document.querySelectorAll("[data-nav]")) {
      link.classList.toggle("active", hash.startsWith("#/environments") ? link.dataset.nav === "environments" : link.dataset.nav === "sessions");
    }
    const main = $("#main");
    if (hash.startsWith("#/s/")) this.showSession(main, decodeURIComponent(hash.slice(4)));
    else if (hash.startsWith("#/environments")) this.showEnvironments(main);
    else this.showList(main);
  }

  // -- session list ---------------------------------------------------------------

  async showList(main) {
    this.view = "list";
    if (!main.querySelector(".sessions-page")) {
      main.replaceChildren(h("section", { class: "sessions-page" },
        h("div", { class: "bar" },
          h("h1", {}, "Sessions"),
          h("input", { id: "search", type: "search", placeholder: "Filter by task, id, model, state…", "aria-label": "Filter sessions",
            value: this.filter, oninput: (e) => { this.filter = e.target.value; this.paintList(); } }),
          h("button", { type: "button", class: "primary", onclick: () => this.toggleNewForm() }, "New session")),
        h("div", { id: "new-session", hidden: true }),
        h("div", { id: "session-table" })));
    }
    await this.refreshList();
    clearInterval(this.listTimer);
    this.listTimer = setInterval(() => { if (this.view === "list") this.refreshList(); }, 2000);
  }

  async refreshList() {
    if (!this.link.open) return;
    try {
      this.sessions = (await this.link.request("list_sessions")).sessions;
      this.paintList();
    } catch (error) { /* reconnecting */ }
  }

  sessionState(info) {
    if (info.status === "closed" || info.state === "closed") return "closed";
    if (info.activity === "awaiting_approval") return "awaiting approval";
    if (info.activity === "running_tool") return "running a tool";
    if (info.state === "processing") return "thinking";
    if (info.interrupted) return "interrupted";
    return "idle";
  }

  paintList() {
    const table = $("#session-table");
    if (!table) return;
    const words = this.filter.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = [...this.sessions].sort((a, b) => b.updated - a.updated).filter((info) => {
      const hay = `${info.task} ${info.session_id} ${info.model} ${info.environment} ${this.sessionState(info)}`.toLowerCase();
      return words.every((word) => hay.includes(word));
    });
    if (!rows.length) {
      table.replaceChildren(h("p", { class: "empty" }, this.sessions.length ? "No session matches the filter." : "No sessions yet. Start one with New session."));
      return;
    }
    table.replaceChildren(h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, ["Task", "State", "Model", "Environment", "Iter.", "Tokens in/out", "Updated"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.map((info) => {
        const state = this.sessionState(info);
        return h("tr", { "data-session": info.session_id },
          h("td", { class: "task" }, h("a", { href: `#/s/${encodeURIComponent(info.session_id)}` }, info.task || "(no input yet)"), h("div", { class: "sub" }, info.session_id)),
          h("td", {}, h("span", { class: `state ${state.replace(/ /g, "-")}` }, state)),
          h("td", {}, info.model),
          h("td", { class: "env" }, info.environment),
          h("td", { class: "num" }, info.iterations),
          h("td", { class: "num" }, `${info.input_tokens.toLocaleString()} / ${info.output_tokens.toLocaleString()}`),
          h("td", { class: "when" }, ago(info.updated)));
      }))));
  }

  async toggleNewForm() {
    const holder = $("#new-session");
    holder.hidden = !holder.hidden;
    if (holder.hidden) return;
    let environments = [];
    try { environments = (await this.link.request("list_environments")).environments; } catch (error) { /* offline */ }
    holder.replaceChildren(h("form", { class: "new-form", onsubmit: (e) => { e.preventDefault(); this.createSession(e.target); } },
      h("label", { class: "wide" }, "Task", h("textarea", { name: "task", rows: 3, required: true, placeholder: "What should the agent do?" })),
      h("label", {}, "Profile", h("select", { name: "profile" }, h("option", { value: "" }, "server default"), ["openai", "anthropic", "gemini"].map((p) => h("option", { value: p }, p)))),
      h("label", {}, "Environment", h("select", { name: "environment" }, environments.map((env) => h("option", { value: env.address }, `${env.address} (${env.kind})`)))),
      h("label", {}, "Working directory", h("input", { name: "working_dir", placeholder: "local path (optional)" })),
      h("label", {}, "Model", h("input", { name: "model", placeholder: "profile default" })),
      h("label", {}, "Reasoning effort", h("select", { name: "effort" }, ["", "low", "medium", "high"].map((v) => h("option", { value: v }, v || "default")))),
      h("label", {}, "Max turns", h("input", { name: "max_turns", type: "number", min: 0, value: 0 })),
      h("div", { class: "actions wide" }, h("button", { class: "primary", type: "submit" }, "Start session"))));
    holder.querySelector("textarea").focus();
  }

  async createSession(form) {
    const data = new FormData(form);
    const config = { max_turns: Number(data.get("max_turns") || 0) };
    if (data.get("model")) config.model = data.get("model");
    if (data.get("effort")) config.reasoning_effort = data.get("effort");
    const fields = { config };
    if (data.get("profile")) fields.profile = data.get("profile");
    if (data.get("working_dir")) fields.working_dir = data.get("working_dir");
    else if (data.get("environment")) fields.environment = data.get("environment");
    try {
      const created = await this.link.request("create_session", fields);
      const id = created.session.session_id;
      await this.stream(id).subscribed;  // follow before it starts: deltas are live only
      await this.link.request("submit", { session: id, text: data.get("task") });
      location.hash = `#/s/${encodeURIComponent(id)}`;
    } catch (error) { toast(error.message); }
  }

  // -- session view -----------------------------------------------------------------

  showSession(main, key) {
    this.view = "session";
    const root = key.includes("/agents/") ? key.split("/agents/")[0].replace("/sessions/", "") : key;
    const stream = this.stream(key);
    const rootStream = this.stream(root);
    const page = h("section", { class: "session-page" },
      h("div", { class: "session-head" },
        h("a", { href: "#/", class: "back" }, "← Sessions"),
        h("h1", { id: "session-title" }, key),
        h("span", { id: "session-state", class: "state" }),
        h("span", { id: "session-meta", class: "meta" })),
      h("div", { id: "approvals" }),
      h("div", { class: "session-body" },
        h("div", { class: "stream-holder", id: "stream-holder" }, stream.node),
        h("aside", { class: "tree", "aria-label": "Agents" }, h("h2", {}, "Agents"), h("ul", { id: "tree" }))),
      this.composer(key));
    main.replaceChildren(page);
    this.currentKey = key;
    this.rootKey = root;
    this.paintSession(stream, rootStream);
    this.follow(stream, true);
    $("#composer-text").focus();
  }

  changed(stream) {
    // One repaint per frame, however many slices of events were applied meanwhile.
    if (stream.key === this.currentKey) this.currentChanged = true;
    if (this.paintPending) return;
    this.paintPending = true;
    requestAnimationFrame(() => {
      this.paintPending = false;
      const follow = this.currentChanged;
      this.currentChanged = false;
      this.repaint(follow);
    });
  }

  repaint(follow) {
    if (this.view !== "session") return;
    const current = this.streams.get(this.currentKey);
    const root = this.streams.get(this.rootKey);
    if (!current || !root) return;
    this.paintSession(current, root);
    if (follow) this.follow(current);
  }

  follow(stream, force = false) {
    const holder = $("#stream-holder");
    if (!holder) return;
    const near = holder.scrollHeight - holder.scrollTop - holder.clientHeight < 160;
    if (force || near) holder.scrollTop = holder.scrollHeight;
  }

  composer(key) {
    const input = h("textarea", { id: "composer-text", rows: 2, placeholder: "Message the agent: Enter sends (steers while it works), Shift+Enter adds a line", "aria-label": "Message" });
    const send = async (kind) => {
      const text = input.value.trim();
      if (!text && (kind === "send" || kind === "follow_up")) return;
      const stream = this.streams.get(key);
      try {
        if (kind === "send") {
          const busy = stream && (stream.processing || stream.state !== "idle" && stream.state !== "interrupted");
          await this.link.request(busy ? "steer" : "submit", { session: key, text });
        } else if (kind === "follow_up") {
          await this.link.request("follow_up", { session: key, text });
        }
        input.value = "";
      } catch (error) { toast(error.message); }
    };
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); send("send"); }
      if (e.key === "Escape") { e.preventDefault(); this.link.request("interrupt", { session: key, immediate: true }).catch((err) => toast(err.message)); }
    });
    const act = (label, cls, fn, title) => h("button", { type: "button", class: cls, title, onclick: fn }, label);
    return h("div", { class: "composer" }, input,
      h("div", { class: "buttons" },
        act("Send", "primary", () => send("send"), "Submit, or steer while it works (Enter)"),
        act("Follow-up", "", () => send("follow_up"), "Queue after the current input"),
        act("Interrupt", "", () => this.link.request("interrupt", { session: key, immediate: true }).catch((e) => toast(e.message)), "Stop now, running commands included; the session stays open (Esc)"),
        act("Extend limit", "", () => this.extendLimit(key), "Allow more turns"),
        act("Abort", "danger", () => { if (confirm("Abort this session? It will be closed.")) this.link.request("abort", { session: key, reason: "aborted from the web page" }).catch((e) => toast(e.message)); }, "Cancel and close the session")));
  }

  async extendLimit(key) {
    const stream = this.streams.get(key);
    try {
      const info = (await this.link.request("get_session", { session: key })).session;
      const current = info.config.max_turns || 0;
      const next = current ? current + 20 : 0;
      await this.link.request("update_config", { session: key, max_turns: next });
      toast(next ? `max turns now ${next}` : "no turn limit", "ok");
    } catch (error) { toast(error.message); }
    return stream;
  }

  paintSession(stream, rootStream) {
    const state = $("#session-state");
    if (!state) return;
    state.textContent = stream.state;
    state.className = `state ${stream.state.replace(/ /g, "-")}`;
    $("#session-meta").textContent = `iteration ${stream.iterations} · tokens ${stream.usage.input.toLocaleString()} in / ${stream.usage.output.toLocaleString()} out`;
    const task = stream.task || rootStream.children.get(stream.key)?.task || "";
    if (task) $("#session-title").textContent = task.split("\n")[0].slice(0, 120);
    this.paintApprovals(stream);
    this.paintTree(rootStream, stream.key);
  }

  paintApprovals(stream) {
    const holder = $("#approvals");
    const shown = new Set([...holder.children].map((n) => n.dataset.request));
    for (const node of [...holder.children]) if (!stream.approvals.has(node.dataset.request)) node.remove();
    for (const [id, request] of stream.approvals) {
      if (shown.has(id)) continue;
      const message = h("input", { type: "text", placeholder: "Message for the agent (optional, with Deny)", "aria-label": "Deny message" });
      const answer = (approved, scope) => this.link.request("resolve_approval", {
        session: stream.key, request_id: id, approved, scope, message: message.value || null,
      }).catch((e) => toast(e.message));
      holder.append(h("div", { class: "approval", role: "alertdialog", "aria-label": "Approval needed", "data-request": id },
        h("div", { class: "ask" }, h("strong", {}, `Approve ${request.action}?`)),
        h("pre", { class: "subject" }, request.subject),
        h("div", { class: "answer" },
          h("button", { type: "button", class: "primary", onclick: () => answer(true, "once") }, "Approve once"),
          h("button", { type: "button", onclick: () => answer(true, "session") }, "Approve for session"),
          message,
          h("button", { type: "button", class: "danger", onclick: () => answer(false, "once") }, "Deny"))));
    }
  }

  paintTree(rootStream, currentKey) {
    const tree = $("#tree");
    const item = (key, label, status) => h("li", { class: key === currentKey ? "current" : "" },
      h("a", { href: `#/s/${encodeURIComponent(key)}` }, label), " ", h("span", { class: `state ${status.replace(/ /g, "-")}` }, status));
    const items = [item(rootStream.key, "main agent", rootStream.state)];
    const children = h("ul", {});
    for (const child of rootStream.children.values()) {
      const childStream = this.stream(child.address);
      let status = child.status;
      if (status === "running" && childStream.cursor) status = childStream.state === "idle" ? "running" : childStream.state;
      const node = item(child.address, `${child.id}: ${child.task.slice(0, 60)}`, status);
      const last = childStream.lastLine();
      if (last) node.append(h("div", { class: "child-tail" }, last));
      children.append(node);
    }
    if (children.children.length) items[0].append(children);
    tree.replaceChildren(...items);
  }

  // -- environments ------------------------------------------------------------------

  async showEnvironments(main) {
    this.view = "environments";
    main.replaceChildren(h("section", { class: "env-page" },
      h("h1", {}, "Environments"),
      h("div", { id: "env-list" }, "loading…"),
      h("h2", {}, "Add an SSH host"),
      h("form", { class: "new-form", onsubmit: (e) => { e.preventDefault(); this.addHost(e.target); } },
        h("label", {}, "Name", h("input", { name: "name", required: true, placeholder: "build-box" })),
        h("label", {}, "Target", h("input", { name: "target", required: true, placeholder: "ssh://user@host:22 or an ssh config alias" })),
        h("label", {}, "Working directory", h("input", { name: "working_dir", placeholder: "remote path (optional)" })),
        h("label", {}, "Known hosts file", h("input", { name: "known_hosts", placeholder: "~/.ssh/known_hosts" })),
        h("label", {}, "Client key file", h("input", { name: "client_key", placeholder: "~/.ssh/id_ed25519 (optional)" })),
        h("div", { class: "actions wide" }, h("button", { class: "primary", type: "submit" }, "Connect")))));
    await this.paintEnvironments();
  }

  async paintEnvironments() {
    const list = $("#env-list");
    if (!list || !this.link.open) return;
    let environments = [];
    try { environments = (await this.link.request("list_environments")).environments; } catch (error) { list.textContent = error.message; return; }
    list.replaceChildren(h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, h("th", {}, "Address"), h("th", {}, "Kind"), h("th", {}, "State"), h("th", {}, ""))),
      h("tbody", {}, environments.map((env) => h("tr", { "data-environment": env.address },
        h("td", {}, env.address), h("td", {}, env.kind), h("td", {}, h("span", { class: "state idle" }, "connected")),
        h("td", {}, env.kind === "ssh" ? h("button", { type: "button", class: "danger", onclick: () => this.removeHost(env.address) }, "Remove") : ""))))));
  }

  async addHost(form) {
    const data = new FormData(form);
    const fields = { name: data.get("name"), target: data.get("target") };
    if (data.get("working_dir")) fields.working_dir = data.get("working_dir");
    if (data.get("known_hosts")) fields.known_hosts = data.get("known_hosts");
    if (data.get("client_key")) fields.client_keys = [data.get("client_key")];
    try { await this.link.request("add_ssh_environment", fields); form.reset(); toast("connected", "ok"); } catch (error) { toast(error.message); }
    await this.paintEnvironments();
  }

  async removeHost(address) {
    try { await this.link.request("remove_environment", { environment: address }); } catch (error) { toast(error.message); }
    await this.paintEnvironments();
  }
}

Stream.prototype.lastLine = function lastLine() {
  const last = this.node.lastElementChild;
  return last ? last.textContent.replace(/\s+/g, " ").slice(0, 90) : "";
};

window.troupe = new App();
