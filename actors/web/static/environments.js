// The environments page: every environment and its state; add an SSH host or a
// Docker container, remove one that was added.
// Methods of the App (see app.js).
import { $, h, toast } from "./dom.js";

export class EnvironmentsView {
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
        h("div", { class: "actions wide" }, h("button", { class: "primary", type: "submit" }, "Connect"))),
      h("h2", {}, "Add a Docker container"),
      h("form", { class: "new-form", onsubmit: (e) => { e.preventDefault(); this.addContainer(e.target); } },
        h("label", {}, "Container name", h("input", { name: "name", required: true, placeholder: "py" })),
        h("label", {}, "Image", h("input", { name: "image", required: true, placeholder: "python:3.12" })),
        h("label", {}, "Workspace", h("input", { name: "workspace", required: true, placeholder: "a directory of the server's machine, bind-mounted" })),
        h("label", {}, "Docker host", h("input", { name: "docker_host", placeholder: "DOCKER_HOST, else unix:///var/run/docker.sock" })),
        h("div", { class: "actions wide" }, h("button", { class: "primary", type: "submit" }, "Add container")))));
    await this.paintEnvironments();
  }

  async paintEnvironments() {
    // Listed at once, then again with each host probed (a few seconds at most).
    await this.listEnvironments(false);
    await this.listEnvironments(true);
  }

  async listEnvironments(check) {
    const list = $("#env-list");
    if (!list || !this.link.open) return;
    let environments = [];
    try { environments = (await this.link.request("list_environments", { check })).environments; } catch (error) { list.textContent = error.message; return; }
    if (!$("#env-list")) return;
    const state = (env) => env.state === "unchecked" ? "checking…" : env.state;
    list.replaceChildren(h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, ["Address", "Kind", "State", "Working directory", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, environments.map((env) => h("tr", { "data-environment": env.address },
        h("td", { class: "env" }, env.address),
        h("td", {}, env.kind),
        h("td", { class: "env-state" }, h("span", { class: `state ${env.state}` }, state(env)),
          env.error ? h("div", { class: "sub error" }, env.error) : null),
        h("td", { class: "env" }, env.working_directory || "", env.platform ? h("div", { class: "sub" }, env.platform) : null),
        h("td", {}, env.kind !== "local" ? h("button", { type: "button", class: "danger", "aria-label": `Remove ${env.address}`, onclick: () => this.removeHost(env.address) }, "Remove") : ""))))),
      h("button", { type: "button", class: "recheck", onclick: () => this.listEnvironments(true) }, "Check again"));
  }

  async addHost(form) {
    const data = new FormData(form);
    const spec = { kind: "ssh", target: data.get("target") };
    if (data.get("working_dir")) spec.working_dir = data.get("working_dir");
    if (data.get("known_hosts")) spec.known_hosts = data.get("known_hosts");
    if (data.get("client_key")) spec.client_keys = [data.get("client_key")];
    try { await this.link.request("add_environment", { name: data.get("name"), spec }); form.reset(); toast("connected", "ok"); } catch (error) { toast(error.message); }
    await this.paintEnvironments();
  }

  async addContainer(form) {
    const data = new FormData(form);
    const spec = { kind: "docker", image: data.get("image"), workspace: data.get("workspace") };
    if (data.get("docker_host")) spec.docker_host = data.get("docker_host");
    try { await this.link.request("add_environment", { name: data.get("name"), spec }); form.reset(); toast("added", "ok"); } catch (error) { toast(error.message); }
    await this.paintEnvironments();
  }

  async removeHost(address) {
    try { await this.link.request("remove_environment", { environment: address }); } catch (error) { toast(error.message); }
    await this.paintEnvironments();
  }
}
