// Rendering helpers for the Troupe page: safe Markdown, code highlighting, diffs.
// Everything escapes first; no HTML from the model ever reaches the DOM as markup.

export const Render = (() => {
  const escape = (text) => String(text)
    .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");

  const KEYWORDS = new Set((
    "and as assert async await break case catch class const continue def default del do " +
    "elif else enum except export extends false False finally fn for from func function " +
    "go if impl import in interface is lambda let match mod mut new nil None not null or " +
    "pass package pub raise return self static struct super switch this throw true True " +
    "try type typeof use var while with yield echo fi then done esac local"
  ).split(" "));

  // One pass over the code: strings, comments, numbers, keywords.
  const TOKEN = /(\/\/[^\n]*|#[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_][A-Za-z0-9_]*)\b/g;

  function highlight(code) {
    let out = "", last = 0, match;
    TOKEN.lastIndex = 0;
    while ((match = TOKEN.exec(code)) !== null) {
      out += escape(code.slice(last, match.index));
      const [text, comment, string, number, word] = match;
      if (comment) out += `<span class="tok-c">${escape(text)}</span>`;
      else if (string) out += `<span class="tok-s">${escape(text)}</span>`;
      else if (number) out += `<span class="tok-n">${escape(text)}</span>`;
      else if (word && KEYWORDS.has(word)) out += `<span class="tok-k">${escape(text)}</span>`;
      else out += escape(text);
      last = match.index + text.length;
    }
    return out + escape(code.slice(last));
  }

  function inline(text) {
    // Code spans first (their content is literal), then emphasis and links.
    return text.split(/(`[^`\n]+`)/).map((part) => {
      if (part.length > 1 && part.startsWith("`") && part.endsWith("`")) {
        return `<code>${escape(part.slice(1, -1))}</code>`;
      }
      return escape(part)
        .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
        .replace(/(^|[^*])\*([^*\n]+)\*/g, "$1<em>$2</em>")
        .replace(/\[([^\]]+)\]\((https?:\/\/[^)\s]+)\)/g,
          '<a href="$2" rel="noreferrer noopener" target="_blank">$1</a>');
    }).join("");
  }

  const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
  const isTableRow = (line) => /^\s*\|.*\|\s*$/.test(line) || (line.includes("|") && /\S\s*\|\s*\S/.test(line) && !/^\s*```/.test(line));
  function cells(line) {
    return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
  }

  function markdown(source) {
    const lines = String(source).split("\n");
    const html = [];
    let i = 0, list = null, paragraph = [];
    const flush = () => {
      if (paragraph.length) html.push(`<p>${inline(paragraph.join("\n"))}</p>`);
      paragraph = [];
    };
    const closeList = () => { if (list) { html.push(`</${list}>`); list = null; } };
    while (i < lines.length) {
      const line = lines[i];
      const fence = line.match(/^\s*```\s*([\w+-]*)/);
      if (fence) {
        flush(); closeList();
        const body = [];
        i++;
        while (i < lines.length && !/^\s*```/.test(lines[i])) body.push(lines[i++]);
        i++;
        const lang = fence[1] ? `<span class="lang">${escape(fence[1])}</span>` : "";
        html.push(`<pre class="code">${lang}<code>${highlight(body.join("\n"))}</code></pre>`);
        continue;
      }
      if (isTableRow(line) && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
        // A GitHub-style table: a header row, a |---|:---:| rule, then body rows.
        flush(); closeList();
        const aligns = cells(lines[i + 1]).map((c) => (/^:-+:$/.test(c) ? "center" : /-:$/.test(c) ? "right" : ""));
        const cell = (tag, text, n) => `<${tag}${aligns[n] ? ` class="align-${aligns[n]}"` : ""}>${inline(text)}</${tag}>`;
        const head = cells(line).map((c, n) => cell("th", c, n)).join("");
        const rows = [];
        i += 2;
        while (i < lines.length && isTableRow(lines[i])) rows.push(`<tr>${cells(lines[i++]).map((c, n) => cell("td", c, n)).join("")}</tr>`);
        html.push(`<table class="md-table"><thead><tr>${head}</tr></thead><tbody>${rows.join("")}</tbody></table>`);
        continue;
      }
      const heading = line.match(/^(#{1,4})\s+(.*)$/);
      const bullet = line.match(/^\s*[-*+]\s+(.*)$/);
      const numbered = line.match(/^\s*\d+[.)]\s+(.*)$/);
      if (heading) {
        flush(); closeList();
        const level = heading[1].length + 2;
        html.push(`<h${level}>${inline(heading[2])}</h${level}>`);
      } else if (bullet || numbered) {
        flush();
        const kind = bullet ? "ul" : "ol";
        if (list !== kind) { closeList(); html.push(`<${kind}>`); list = kind; }
        html.push(`<li>${inline((bullet || numbered)[1])}</li>`);
      } else if (/^\s*>/.test(line)) {
        flush(); closeList();
        html.push(`<blockquote>${inline(line.replace(/^\s*>\s?/, ""))}</blockquote>`);
      } else if (!line.trim()) {
        flush(); closeList();
      } else {
        closeList();
        paragraph.push(line);
      }
      i++;
    }
    flush(); closeList();
    return html.join("");
  }

  function diffLines(lines) {
    return lines.map(([sign, text]) => {
      const cls = sign === "+" ? "add" : sign === "-" ? "del" : sign === "@" ? "hunk" : "ctx";
      return `<span class="d-${cls}">${escape(text)}</span>`;
    }).join("\n");
  }

  // A call's diff, from its arguments named by `fields` (the tool's declared diff
  // fields: path, new, old, patch), as the terminal and ACP draw it; null when the
  // tool declares none or the arguments are not text.
  function toolDiff(fields, args) {
    if (!fields) return null;
    const path = String(args[fields.path] ?? args.path ?? "");
    if (fields.patch != null) {
      const patch = args[fields.patch] ?? args.input;
      if (typeof patch !== "string") return null;
      const lines = patch.split("\n").map((line) => {
        if (line.startsWith("*** ")) return ["@", line];
        if (line.startsWith("@@")) return ["@", line];
        if (line.startsWith("+")) return ["+", line];
        if (line.startsWith("-")) return ["-", line];
        return [" ", line];
      });
      return diffLines(lines);
    }
    const text = args[fields.new];
    if (typeof text !== "string") return null;
    if (fields.old != null) {
      const old = args[fields.old];
      if (typeof old !== "string") return null;
      const lines = [["@", path]];
      for (const l of old.split("\n")) lines.push(["-", "-" + l]);
      for (const l of text.split("\n")) lines.push(["+", "+" + l]);
      return diffLines(lines);
    }
    const lines = [["@", `new content of ${path}`]];
    for (const l of text.split("\n")) lines.push(["+", "+" + l]);
    return diffLines(lines);
  }

  return { escape, highlight, markdown, toolDiff };
})();
