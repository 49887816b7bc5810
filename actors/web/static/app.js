// The Troupe page: one more client of the WebSocket protocol (docs/protocol.md).
// The login cookie authenticates the WebSocket; every view resumes from its cursor
// (the last seq it applied) after a reconnect, so nothing is missed or doubled.
// No build step: native ES modules, each with one job, all shipped in the package.
import { $, toast } from "./dom.js";
import { EnvironmentsView } from "./environments.js";
import { Link } from "./link.js";
import { ListView } from "./list_view.js";
import { SessionView } from "./session_view.js";
import { Stream } from "./stream.js";

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
    this.refresh();
  }

  refresh() {
    // A (re)connect repaints the view on show without building it again, so a form
    // or a message the user is typing survives it; a view not built yet is built.
    if (this.view === "environments" && $(".env-page")) this.paintEnvironments();
    else if (this.view === "session" && $(".session-page")) this.repaint(true);
    else this.route();
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
      if (!key.includes("/agents/")) {  // a subagent's conversation is its parent's business
        stream.onRewind = (seq, node) => this.rewindChooser(key, seq, node);
        stream.onFork = (seq) => this.forkFrom(key, seq);
      }
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
}

// Each view's methods live in its own module and act on the one App.
for (const view of [ListView, SessionView, EnvironmentsView]) {
  for (const name of Object.getOwnPropertyNames(view.prototype)) {
    if (name !== "constructor") Object.defineProperty(App.prototype, name, Object.getOwnPropertyDescriptor(view.prototype, name));
  }
}

window.troupe = new App();
