// The page's one WebSocket: the hello, request ids matched to replies, events handed
// on, and reconnecting with a growing delay when the server goes away.
import { status } from "./dom.js";

const WAIT_FOR_CONNECTION = 10_000;  // ms a request made while connecting waits

export class Link {
  constructor(onEvent, onOpen) {
    this.onEvent = onEvent;
    this.onOpen = onOpen;
    this.nextId = 1;
    this.waiting = new Map();
    this.socket = null;
    this.delay = 250;
    this.welcomed = false;
    this.ready = [];   // requests made while (re)connecting: sent once welcomed
    this.connect();
  }

  connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/`);
    this.socket = socket;
    this.welcomed = false;
    socket.onopen = () => socket.send(JSON.stringify({ type: "hello", version: 1, client: "web" }));
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (!this.welcomed) {
        if (frame.type !== "welcome") { status(`refused: ${frame.message || frame.type}`, "bad"); return; }
        this.welcomed = true;
        this.delay = 250;
        status("connected", "ok");
        for (const send of this.ready.splice(0)) send();
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
      this.welcomed = false;
      for (const pending of this.waiting.values()) pending.reject(new Error("disconnected"));
      this.waiting.clear();
      status("reconnecting…", "bad");
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 4000);
    };
  }

  get open() { return this.welcomed && this.socket.readyState === WebSocket.OPEN; }

  async request(type, fields = {}) {
    if (!this.open) await this.connected();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.socket.send(JSON.stringify({ type, id, ...fields }));
    });
  }

  connected() {
    // A click while the page is (re)connecting is sent once it is connected, unless
    // that takes longer than the user would wait for an answer.
    return new Promise((resolve, reject) => {
      const send = () => { clearTimeout(timer); resolve(); };
      const timer = setTimeout(() => {
        this.ready.splice(this.ready.indexOf(send), 1);
        reject(new Error("not connected"));
      }, WAIT_FOR_CONNECTION);
      this.ready.push(send);
    });
  }
}
