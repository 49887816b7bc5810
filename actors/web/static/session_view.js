// One session's page: its timeline, composer, approvals banner and agent tree.
// Methods of the App (see app.js).
import { $, h, money, toast } from "./dom.js";

const EXTEND_DOLLARS_BY = 1;    // dollars one click adds to a cost cap (max_cost, max_input_cost)
const EXTEND_BY = 20;         // turns, tool rounds or iterations one click of "Extend limit" adds
const EXTEND_TOKENS_BY = 50_000;  // ... or tokens, when a token budget stopped the input

export class SessionView {
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
        h("div", { class: "stream-holder", id: "stream-holder" }, stream.node, stream.queued),
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
          if (!busy) await this.link.request("submit", { session: key, text });
          else {
            // Shown as queued at once, before the server has it; gone again if refused.
            const queued = stream.queueSteer(text);
            try { await this.link.request("steer", { session: key, text }); } catch (error) { queued.remove(); throw error; }
          }
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
        act("Extend limit", "", () => this.extendLimit(key), "Raise the limit the last input stopped at and continue it"),
        act("Compact", "", () => this.compact(key, input), "Summarize the older part of the conversation now; text in the box is the summary's instructions"),
        act("Abort", "danger", () => { if (confirm("Abort this session? It will be closed.")) this.link.request("abort", { session: key, reason: "aborted from the web page" }).catch((e) => toast(e.message)); }, "Cancel and close the session")));
  }

  /** The protocol's compact: prune old tool outputs and summarize the older turns
   * (the composer's text, if any, is the summary's instructions). */
  async compact(key, input) {
    const instructions = input.value.trim() || null;
    try {
      const { outcome } = await this.link.request("compact", { session: key, instructions });
      if (instructions) input.value = "";
      const what = outcome.error || (outcome.kind === "none" ? "nothing old enough to compact yet"
        : `${outcome.kind}: context ~${outcome.tokens_before.toLocaleString()} → ~${outcome.tokens_after.toLocaleString()} tokens`);
      toast(`compaction: ${what}`, outcome.error ? undefined : "ok");
    } catch (error) { toast(error.message); }
  }

  /** "Rewind to here": the choice (the conversation, the code or both; a summary of
   * what is cut), then the protocol's rewind; the input's text comes back in the box. */
  rewindChooser(key, seq, node) {
    if (!node || node.querySelector(".rewind-choice")) return;
    const name = `rewind-${seq}`;
    const option = (value, label, checked) => h("label", {}, h("input", { type: "radio", name, value, checked }), ` ${label}`);
    const summarize = h("input", { type: "checkbox", name: "summarize" });
    const form = h("form", { class: "rewind-choice", "aria-label": "Rewind" },
      option("conversation", "the conversation", true), option("code", "the files", false),
      option("both", "both", false), h("label", {}, summarize, " keep a summary of what is cut"),
      h("button", { type: "submit", class: "primary" }, "Rewind"),
      h("button", { type: "button", onclick: () => form.remove() }, "Cancel"));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const mode = form.querySelector(`input[name="${name}"]:checked`).value;
      try {
        const { outcome } = await this.link.request("rewind", { session: key, to_seq: seq, mode, summarize: summarize.checked });
        form.remove();
        const input = $("#composer-text");
        if (mode !== "code" && input) { input.value = outcome.text; input.focus(); }
        const files = outcome.snapshot ? `; files: ${outcome.changed.length} changed, ${outcome.recreated.length} recreated, ${outcome.deleted.length} deleted` : "";
        toast(`rewound to before input ${seq}${files}`, "ok");
      } catch (error) { toast(error.message); }
    });
    node.append(form);
  }

  /** "Fork from here": a new session with the conversation up to this message. */
  async forkFrom(key, seq) {
    try {
      const { session, turns } = await this.link.request("fork", { session: key, at_seq: seq });
      toast(`forked: ${session.session_id} (${turns} turns)`, "ok");
      location.hash = `#/s/${encodeURIComponent(session.session_id)}`;
    } catch (error) { toast(error.message); }
  }

  /** The protocol's extend_limit: the session raises the limit its last input
   * stopped at and continues that same input (no new message is needed). */
  async extendLimit(key) {
    const stream = this.streams.get(key);
    const hit = stream?.limitHit || "";
    const by = hit.endsWith("token_budget") ? EXTEND_TOKENS_BY : hit.endsWith("_cost") ? EXTEND_DOLLARS_BY : EXTEND_BY;
    try {
      const { config } = await this.link.request("extend_limit", { session: key, by });
      const limit = stream?.limitHit;
      if (stream) stream.limitHit = null;
      toast(limit ? `${limit.replace(/_/g, " ")} now ${config[limit]}` : `limit raised by ${by}`, "ok");
    } catch (error) { toast(error.message); }
    return stream;
  }

  paintSession(stream, rootStream) {
    const state = $("#session-state");
    if (!state) return;
    state.textContent = stream.state;
    state.className = `state ${stream.state.replace(/ /g, "-")}`;
    const spend = stream.spend;
    const cost = spend ? `${money(spend.cost_usd)} (subagents and compactions included; ${spend.cache_read_tokens.toLocaleString()} cache read, ${spend.cache_write_tokens.toLocaleString()} cache write, ${spend.reasoning_tokens.toLocaleString()} reasoning tokens)` : money(stream.cost);
    $("#session-meta").textContent = `iteration ${stream.iterations} · tokens ${stream.usage.input.toLocaleString()} in / ${stream.usage.output.toLocaleString()} out · ${cost}`;
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
          // "Always" is exactly this call; a wider rule is its own answer and says what it allows.
          h("button", { type: "button", title: request.details?.always || "", onclick: () => answer(true, "command") }, "Always: this exact call"),
          request.details?.rule ? h("button", { type: "button", onclick: () => answer(true, "rule") }, `Always: ${request.details.rule}`) : null,
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
      if (child.background && status !== "closed") status = `${status} · background`;
      const node = item(child.address, `${child.id}: ${child.task.slice(0, 60)}`, status);
      const last = childStream.lastLine();
      if (last) node.append(h("div", { class: "child-tail" }, last));
      children.append(node);
    }
    if (children.children.length) items[0].append(children);
    tree.replaceChildren(...items);
  }
}
