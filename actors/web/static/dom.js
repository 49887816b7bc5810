// Small DOM helpers every view shares: building elements, notices, times, money.

export const $ = (selector, root = document) => root.querySelector(selector);

export function h(tag, attrs = {}, ...children) {
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

export function ago(seconds) {
  const delta = Math.max(0, Date.now() / 1000 - seconds);
  if (delta < 60) return `${Math.round(delta)}s ago`;
  if (delta < 3600) return `${Math.round(delta / 60)}m ago`;
  if (delta < 86400) return `${Math.round(delta / 3600)}h ago`;
  return new Date(seconds * 1000).toLocaleDateString();
}

export function money(usd) {
  // The list price of a session's model calls; a dash when the catalog has no price.
  if (usd === null || usd === undefined) return "—";
  return usd > 0 && usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

export function status(text, kind) {
  const node = $("#link");
  node.textContent = text;
  node.className = `link ${kind}`;
}

export function toast(text, kind = "bad") {
  const node = h("div", { class: `toast ${kind}`, role: "alert" }, text);
  document.body.append(node);
  setTimeout(() => node.remove(), 5000);
}
