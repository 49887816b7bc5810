// The page's one WebSocket: the hello, request ids matched to replies, events handed
// on, and reconnecting with a growing delay when the server goes away.
import { status } from "./dom.js";

export class Link {
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
