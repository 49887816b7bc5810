// What the page knows of one subscribed session (or subagent), built from its events.
// The cursor (the last durable seq applied) is the resume point after a reconnect.
import { h } from "./dom.js";
import { Render } from "./render.js";
import { BUILTIN_DIFFS } from "./tool_diffs.js";

const OUTPUT_LINES = 8;
// Live-only kinds: never replayed, and a server restarted after a crash numbers its
// next events from the last *stored* one, so these must not move the resume cursor.
export const EPHEMERAL = new Set(["assistant_text_delta", "assistant_reasoning_delta",
  "tool_call_output_delta", "events_missed"]);

export class Stream {
  // What the page knows of one subscribed session (or subagent), built from events.
  constructor(key) {
    this.key = key;
    this.cursor = 0;          // the last durable seq applied: the resume point
    this.liveSeq = 0;
    this.node = h("ol", { class: "timeline", "aria-live": "off" });
    // Steers this page sent that the session has not applied yet: shown at once as
    // queued, below the timeline, until their steering_injected event arrives.
    this.queued = h("ol", { class: "queued-steers", "aria-label": "Queued steers" });
    this.tools = new Map();
    this.approvals = new Map();
    this.children = new Map();
    this.current = null;      // the assistant block being streamed
    this.iterations = 0;
    this.processing = false;
    this.interrupted = false;
    this.limitHit = null;     // the setting the last input stopped at (extend_limit raises it)
    this.closed = false;
    this.running = 0;
    this.usage = { input: 0, output: 0 };
    this.cost = 0;
    this.spend = null;  // the ledger of the last processing_end (subagents and compactions included)
    this.task = "";
    this.queue = [];
    this.scheduled = false;
    this.onChange = () => {};
    this.onSpawn = () => {};
    this.onRewind = null;  // (seq, node): "Rewind to here" on a user message (top-level sessions)
    this.onFork = null;    // (seq): "Fork from here" on a user or assistant message
    this.seq = 0;          // the seq of the event being applied: each item it adds carries it
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
      if (frame.seq === 0) { this.apply(frame.kind, frame.data, frame); continue; }  // a notice, out of sequence
      if (this.stale(frame)) continue;
      if (EPHEMERAL.has(frame.kind)) this.liveSeq = frame.seq;
      else if (!frame.resent) this.cursor = this.liveSeq = frame.seq;
      this.seq = frame.seq;
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

  add(node) {
    if (this.seq) node.dataset.seq = this.seq;
    this.node.append(node);
    return node;
  }

  actions(seq, user) {
    // Rewind (user messages) and fork (user and assistant messages), by event seq.
    if (!this.onFork) return null;
    const row = h("span", { class: "msg-actions" });
    if (user) row.append(h("button", { type: "button", onclick: (e) => this.onRewind(seq, e.target.closest("li")) }, "Rewind to here"));
    row.append(h("button", { type: "button", onclick: () => this.onFork(seq) }, "Fork from here"));
    return row;
  }

  rewound(data) {
    // The conversation was cut before input to_seq: what came from it on, up to
    // this event, stays on the page (the log keeps it) but is marked as cut.
    if (data.mode !== "code") {
      for (const item of this.node.children) {
        const seq = Number(item.dataset.seq || 0);
        if (seq >= data.to_seq && seq < this.seq) item.classList.add("rewound");
      }
    }
    const parts = [];
    if (data.mode !== "code") parts.push(`conversation ${data.turns_before} → ${data.turns_after} turns${data.summarized ? " (a summary stands for the rest)" : ""}`);
    if (data.snapshot) parts.push(`files: ${data.files_changed} changed, ${data.files_recreated} recreated, ${data.files_deleted} deleted`);
    this.add(h("li", { class: "note rewind" }, `rewound to before input ${data.to_seq}: ${parts.join("; ")}`));
  }

  queueSteer(text) {
    // Sent, not applied yet: the session takes steers before its next model call.
    const node = h("li", { class: "user steer queued", "data-text": text },
      h("div", { class: "who" }, "steer · queued (applies before the next model call)"),
      h("div", { class: "md", html: Render.markdown(text) }));
    this.queued.append(node);
    this.onChange(this);
    return node;
  }

  unqueueSteer(text) {
    // The oldest queued steer with this text was applied (the session keeps order).
    const node = [...this.queued.children].find((n) => n.dataset.text === text);
    if (node) node.remove();
  }

  apply(kind, data, frame) {
    switch (kind) {
      case "session_start":
        this.add(h("li", { class: "note" }, `session started · ${data.model} · ${data.working_directory}`));
        break;
      case "user_input":
        this.task = this.task || data.content;
        this.processing = true;
        this.interrupted = false;
        this.limitHit = null;
        this.add(h("li", { class: "user" }, h("div", { class: "who" }, "you", this.actions(frame.seq, true)), h("div", { class: "md", html: Render.markdown(data.content) })));
        break;
      case "rewind": this.rewound(data); break;
      case "forked_from":
        this.add(h("li", { class: "note" }, `forked from ${data.source} at ${data.at_seq || "its end"} (${data.turns} turns)${data.working_directory ? ` · its own tree in ${data.working_directory}` : ""}`));
        break;
      case "steering_injected":
        this.unqueueSteer(data.content);
        this.add(h("li", { class: "user steer applied" }, h("div", { class: "who" }, "steer · applied"), h("div", { class: "md", html: Render.markdown(data.content) })));
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
        // List-price cost; unknown (null) once one call had no price.
        this.cost = this.cost === null || data.cost_usd == null ? null : this.cost + data.cost_usd;
        block.iteration = this.iterations;
        this.paintAssistant(true);
        const actions = this.actions(frame.seq, false);
        if (actions) block.meta.append(actions);
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
        const reach = { command: " (exactly this call)", session: " (exactly this call)", rule: " (by rule)", tool: " (by rule)" }[data.scope];
        const verdict = data.approved ? (reach ? `approved for this session${reach}` : "approved") : "denied";
        this.add(h("li", { class: `note ${data.approved ? "okay" : "warn"}` },
          `approval ${verdict}${data.message ? `: ${data.message}` : ""}`));
        break;
      }
      case "agentic_start":
        this.add(h("li", { class: "note" }, `agentic mode: ${data.objective} (at most ${data.max_iterations} iterations)`));
        break;
      case "agentic_end":
        this.add(h("li", { class: `alert ${data.status === "success" ? "okay" : "warn"}` }, h("strong", {}, `Agentic ${data.status.replace(/_/g, " ")} `), data.result));
        break;
      case "warning": case "loop_detection":
        this.add(h("li", { class: "alert warn", role: "alert" }, h("strong", {}, "Warning "), data.message));
        break;
      case "turn_limit":
        this.limitHit = data.limit;
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
      case "compaction_end":
        this.add(h("li", { class: "note" }, data.error ? `compaction: ${data.error}` : `compaction (${data.compaction}): context ~${data.tokens_before.toLocaleString()} → ~${data.tokens_after.toLocaleString()} tokens`));
        break;
      case "processing_end":
        if (data.spend) this.spend = data.spend;
        this.processing = false;
        this.running = 0;
        if (data.interrupted) this.interrupted = true;
        this.closeAssistant();
        if (data.background_agents?.length) {
          // The input ended; these subagents go on, and report back as follow-ups.
          this.add(h("li", { class: "note background" },
            `still running in the background: ${data.background_agents.join(", ")} (each result comes back as a follow-up)`));
        }
        break;
      case "session_end":
        this.closed = true;
        this.queued.replaceChildren();  // a closed session applies nothing more
        this.processing = false;
        this.add(h("li", { class: "note" }, `session ended: ${data.reason}`));
        break;
      case "subagent_spawned":
        this.onSpawn(data.address);  // follow the child at once: its events are live only
        this.children.set(data.address, { id: data.agent_id, address: data.address, task: data.task, status: "running", background: Boolean(data.background) });
        this.add(h("li", { class: "note" }, `${data.background ? "background subagent" : "subagent"} ${data.agent_id} started: ${data.task}`));
        break;
      case "subagent_workspace": {
        const where = data.isolation === "container" ? `container ${data.container.slice(0, 12)}` : `branch ${data.branch}`;
        this.add(h("li", { class: "note" }, `subagent ${data.agent_id} ${data.isolation} ${data.state}: ${where}${data.detail ? ` (${data.detail})` : ""}`));
        break;
      }
      case "subagent_completed": case "subagent_failed": case "subagent_closed": {
        const child = this.children.get(data.address);
        if (child && kind !== "subagent_closed") child.status = kind === "subagent_completed" ? "done" : "failed";
        if (child && kind === "subagent_closed" && child.status === "running") child.status = "closed";
        break;
      }
      case "store_unavailable":
        this.add(h("li", { class: "alert warn" }, `the server's store cannot write (${data.message}): input stopped, new input refused until it can`));
        break;
      case "store_available":
        this.add(h("li", { class: "note" }, "the server's store writes again"));
        break;
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
    // The event names the arguments that show the call as a diff; one stored
    // before events did is looked up among the built-in tools.
    const fields = data.diff !== undefined ? data.diff : BUILTIN_DIFFS[data.tool_name];
    const diff = Render.toolDiff(fields ?? null, args);
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

  lastLine() {
    const last = this.node.lastElementChild;
    return last ? last.textContent.replace(/\s+/g, " ").slice(0, 90) : "";
  }
}
