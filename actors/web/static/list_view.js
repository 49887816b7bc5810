// The session list and the new-session form: methods of the App (see app.js).
import { $, ago, h, money, toast } from "./dom.js";

export class ListView {
  async showList(main) {
    this.view = "list";
    if (!main.querySelector(".sessions-page")) {
      const states = ["thinking", "running a tool", "awaiting approval", "idle", "interrupted", "closed"];
      main.replaceChildren(h("section", { class: "sessions-page" },
        h("div", { class: "bar" },
          h("h1", {}, "Sessions"),
          h("input", { id: "search", type: "search", placeholder: "Search task, id, model, directory…", "aria-label": "Filter sessions",
            value: this.filter, oninput: (e) => { this.filter = e.target.value; this.paintList(); } }),
          h("select", { id: "state-filter", "aria-label": "State filter", onchange: (e) => { this.stateFilter = e.target.value; this.paintList(); } },
            h("option", { value: "" }, "all states"), states.map((state) => h("option", { value: state, selected: state === this.stateFilter }, state))),
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
      const state = this.sessionState(info);
      if (this.stateFilter && state !== this.stateFilter) return false;
      const hay = `${info.task} ${info.session_id} ${info.model} ${info.profile} ${info.environment} ${info.working_dir || ""} ${state}`.toLowerCase();
      return words.every((word) => hay.includes(word));
    });
    if (!rows.length) {
      table.replaceChildren(h("p", { class: "empty" }, this.sessions.length ? "No session matches the filter." : "No sessions yet. Start one with New session."));
      return;
    }
    table.replaceChildren(h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, ["Task", "State", "Model", "Environment", "Iter.", "Tokens in/out", "Cost", "Updated"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, rows.map((info) => {
        const state = this.sessionState(info);
        return h("tr", { "data-session": info.session_id },
          h("td", { class: "task" }, h("a", { href: `#/s/${encodeURIComponent(info.session_id)}` }, info.task || "(no input yet)"), h("div", { class: "sub" }, info.session_id)),
          h("td", {}, h("span", { class: `state ${state.replace(/ /g, "-")}` }, state)),
          h("td", { class: "model" }, info.model, h("div", { class: "sub" }, info.profile)),
          h("td", { class: "env" }, info.environment, h("div", { class: "sub dir" }, info.working_dir || "its working directory")),
          h("td", { class: "num" }, info.iterations),
          h("td", { class: "num" }, `${info.input_tokens.toLocaleString()} / ${info.output_tokens.toLocaleString()}`),
          h("td", { class: "num cost", title: info.spend ? `${info.spend.calls} model calls, subagents and compactions included` : "" }, money(info.spend ? info.spend.cost_usd : info.cost_usd)),
          h("td", { class: "when" }, h("time", { datetime: new Date(info.updated * 1000).toISOString() }, ago(info.updated))));
      }))));
  }

  async toggleNewForm() {
    const holder = $("#new-session");
    holder.hidden = !holder.hidden;
    if (holder.hidden) return;
    let environments = [];
    try { environments = (await this.link.request("list_environments")).environments; } catch (error) { /* offline */ }
    const options = await this.serverOptions();
    const models = h("datalist", { id: "model-choices" });
    const model = h("input", { name: "model", list: "model-choices", autocomplete: "off" });
    const profile = h("select", { name: "profile", onchange: () => this.offerModels(options, profile.value, model, models) },
      options.profiles.map((p) => h("option", { value: p, selected: p === options.default_profile }, p)));
    holder.replaceChildren(h("form", { class: "new-form", onsubmit: (e) => { e.preventDefault(); this.createSession(e.target); } },
      h("label", { class: "wide" }, "Task", h("textarea", { name: "task", rows: 3, required: true, placeholder: "What should the agent do?" })),
      h("label", {}, "Profile", profile),
      h("label", {}, "Preset", h("select", { name: "policy" },
        options.policies.map((p) => h("option", { value: p, selected: p === options.default_policy }, p)))),
      h("label", {}, "Environment", h("select", { name: "environment" }, environments.map((env) => h("option", { value: env.address }, `${env.address} (${env.kind})`)))),
      h("label", {}, "Working directory", h("input", { name: "working_dir", placeholder: "local path (optional)" })),
      h("label", {}, "Model", model, models),
      h("label", {}, "Reasoning effort", h("select", { name: "effort" }, ["", ...options.reasoning_efforts].map((v) => h("option", { value: v }, v || "default")))),
      h("label", {}, "Max turns", h("input", { name: "max_turns", type: "number", min: 0, value: 0 })),
      h("div", { class: "actions wide" }, h("button", { class: "primary", type: "submit" }, "Start session"))));
    this.offerModels(options, profile.value, model, models);
    holder.querySelector("textarea").focus();
  }

  async serverOptions() {
    // The form's choices come from the server (get_server_options); asked once.
    if (!this.options) {
      try { this.options = await this.link.request("get_server_options"); } catch (error) {
        return { profiles: [], default_profile: "", profile_models: {}, policies: [], default_policy: "", models: [], reasoning_efforts: [] };
      }
    }
    return this.options;
  }

  offerModels(options, profile, input, list) {
    // The catalog's models of the profile's provider, each with its list price.
    const price = (m) => m.input_cost_per_million === null ? "price unknown" : `$${m.input_cost_per_million} / $${m.output_cost_per_million} per M tokens`;
    const mine = options.models.filter((m) => m.provider === profile);
    list.replaceChildren(...(mine.length ? mine : options.models).map((m) => h("option", { value: m.id }, `${m.display_name} · ${price(m)}`)));
    input.placeholder = `profile default: ${options.profile_models[profile] || "the server's"}`;
  }

  async createSession(form) {
    const data = new FormData(form);
    const config = { max_turns: Number(data.get("max_turns") || 0) };
    if (data.get("model")) config.model = data.get("model");
    if (data.get("effort")) config.reasoning_effort = data.get("effort");
    if (data.get("policy")) config.policy = data.get("policy");
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
}
