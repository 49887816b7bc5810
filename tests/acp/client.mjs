// An ACP client built on the official SDK (@agentclientprotocol/sdk), driving
// `troupe acp` as an editor would. Usage: node client.mjs PLAN_JSON
// The plan: {sdk, command: [...], cwd, prompts: [text...], cancelWhenExists: path,
//            loadSessionId, permissions: ["reject_once" | "allow_once" | ...],
//            buffers: {absolute path: text}, malformed: [raw lines],
//            forkPrompts: [text...] (then session/fork and these prompts in the fork),
//            forkCwd: the fork's cwd (default: cwd)}
// The client is also a conformance probe: every message on the wire is checked
// against the SDK's own schemas (its zod validators): the agent's answers to the
// client's requests, its requests and its updates; what does not conform is
// listed in `schemaErrors`. Requests the client answered with an error are in
// `failedRequests`. With `malformed`, those lines are written first, raw; the
// agent's answers with a null id are in `invalidAnswers`.
// With `buffers`, the client offers its file system (fs.readTextFile and
// fs.writeTextFile): reads are answered from the buffers (a path not there is
// "resource not found"), writes go into them; the disk is never touched.
// With `terminal: true`, it offers terminals: each runs as a real process (its
// own process group), released terminals are killed, as an editor's would be.
// Prints one JSON object: what the agent answered and every update it streamed.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const plan = JSON.parse(process.argv[2]);
// The SDK is installed in .npm-tools/ (see .ci/run); plan.sdk is its entry file.
const acp = await import(pathToFileURL(plan.sdk).href);
const child = spawn(plan.command[0], plan.command.slice(1), {
  stdio: ["pipe", "pipe", "inherit"],
});
const validate = await import(new URL("./schema/zod.gen.js", pathToFileURL(plan.sdk)).href);
const responseSchemas = {
  initialize: validate.zInitializeResponse,
  authenticate: validate.zAuthenticateResponse,
  "session/new": validate.zNewSessionResponse,
  "session/load": validate.zLoadSessionResponse,
  "session/prompt": validate.zPromptResponse,
  "session/fork": validate.zForkSessionResponse,
};
const requestSchemas = {
  "session/request_permission": validate.zRequestPermissionRequest,
  "fs/read_text_file": validate.zReadTextFileRequest,
  "fs/write_text_file": validate.zWriteTextFileRequest,
  "terminal/create": validate.zCreateTerminalRequest,
  "terminal/output": validate.zTerminalOutputRequest,
  "terminal/release": validate.zReleaseTerminalRequest,
  "terminal/wait_for_exit": validate.zWaitForTerminalExitRequest,
  "terminal/kill": validate.zKillTerminalRequest,
};
const notificationSchemas = { "session/update": validate.zSessionNotification };
const schemaErrors = [];
const failedRequests = [];
const invalidAnswers = [];
const clientSent = new Map(); // request id -> method, the client's requests
const agentSent = new Map(); // request id -> method, the agent's requests

function check(schema, value, what) {
  if (!schema) {
    schemaErrors.push({ what, error: "no such method in ACP v1" });
    return;
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    schemaErrors.push({ what, value, error: String(parsed.error) });
  }
}

function fromAgent(message) {
  if (message && typeof message === "object" && "method" in message) {
    if ("id" in message) {
      agentSent.set(message.id, message.method);
      check(requestSchemas[message.method], message.params, `request ${message.method}`);
    } else {
      check(notificationSchemas[message.method], message.params, `notification ${message.method}`);
    }
  } else if (message && message.id === null) {
    invalidAnswers.push(message);
  } else if (message && clientSent.has(message.id)) {
    const method = clientSent.get(message.id);
    if (!("error" in message)) {
      check(responseSchemas[method], message.result, `answer to ${method}`);
    }
  }
}

function fromClient(message) {
  if (message && "method" in message && "id" in message) {
    clientSent.set(message.id, message.method);
  } else if (message && "error" in message && agentSent.has(message.id)) {
    failedRequests.push({ method: agentSent.get(message.id), error: message.error });
  }
}

for (const line of plan.malformed || []) {
  await new Promise((resolve) => child.stdin.write(line + "\n", resolve));
}
const wire = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const tap = (inspect) => new TransformStream({
  transform(message, controller) {
    inspect(message);
    controller.enqueue(message);
  },
});
const outgoing = tap(fromClient);
void outgoing.readable.pipeTo(wire.writable).catch(() => { /* the agent has gone */ });
const stream = { readable: wire.readable.pipeThrough(tap(fromAgent)), writable: outgoing.writable };
const updates = [];
const permissionRequests = [];
const answers = [...(plan.permissions || [])];
let sessionId = null;
let connection = null;
const buffers = plan.buffers ? { ...plan.buffers } : null;
const fsRequests = [];
const terminals = new Map();
const terminalRequests = [];

function killGroup(terminal) {
  if (terminal && terminal.exitStatus === null) {
    try { process.kill(-terminal.child.pid, "SIGKILL"); } catch { /* already gone */ }
  }
}

class Client {
  async requestPermission(params) {
    permissionRequests.push(params);
    const optionId = answers.shift() || "reject_once";
    return { outcome: { outcome: "selected", optionId } };
  }
  async sessionUpdate(params) {
    updates.push(params.update);
    if (plan.cancelWhenExists && params.update.sessionUpdate === "tool_call") {
      // Cancel once the tool's command has begun (it writes this file).
      const { existsSync } = await import("node:fs");
      while (!existsSync(plan.cancelWhenExists)) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await connection.cancel({ sessionId: params.sessionId });
    }
  }
  async readTextFile(params) {
    fsRequests.push({ method: "read", ...params });
    if (!buffers || !(params.path in buffers)) {
      throw acp.RequestError.resourceNotFound(params.path);
    }
    return { content: buffers[params.path] };
  }
  async createTerminal(params) {
    terminalRequests.push({ method: "create", ...params });
    const env = { ...process.env };
    for (const { name, value } of params.env || []) env[name] = value;
    const child = spawn(params.command, params.args || [], {
      cwd: params.cwd || undefined, env, detached: true, stdio: ["ignore", "pipe", "pipe"],
    });
    const terminal = { child, output: "", truncated: false, exitStatus: null };
    const limit = params.outputByteLimit ?? Infinity;
    const keep = (chunk) => {
      terminal.output += chunk.toString();
      while (Buffer.byteLength(terminal.output) > limit) {
        terminal.output = terminal.output.slice(1);
        terminal.truncated = true;
      }
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    terminal.exited = new Promise((resolve) => child.on("exit", (exitCode, signal) => {
      terminal.exitStatus = { exitCode, signal };
      resolve(terminal.exitStatus);
    }));
    const terminalId = `term-${terminals.size + 1}`;
    terminals.set(terminalId, terminal);
    return { terminalId };
  }
  async terminalOutput(params) {
    terminalRequests.push({ method: "output", ...params });
    const t = terminals.get(params.terminalId);
    return { output: t.output, truncated: t.truncated, exitStatus: t.exitStatus };
  }
  async waitForTerminalExit(params) {
    terminalRequests.push({ method: "wait_for_exit", ...params });
    return await terminals.get(params.terminalId).exited;
  }
  async killTerminal(params) {
    terminalRequests.push({ method: "kill", ...params });
    killGroup(terminals.get(params.terminalId));
    return {};
  }
  async releaseTerminal(params) {
    terminalRequests.push({ method: "release", ...params });
    killGroup(terminals.get(params.terminalId));
    terminals.delete(params.terminalId);
    return {};
  }
  async writeTextFile(params) {
    fsRequests.push({ method: "write", ...params });
    buffers[params.path] = params.content;
    return {};
  }
}

connection = new acp.ClientSideConnection(() => new Client(), stream);
const result = { prompts: [] };
try {
  result.initialize = await connection.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: Boolean(buffers), writeTextFile: Boolean(buffers) },
      terminal: Boolean(plan.terminal),
    },
  });
  if (plan.loadSessionId) {
    result.loaded = await connection.loadSession({
      sessionId: plan.loadSessionId, cwd: plan.cwd, mcpServers: [],
    });
    sessionId = plan.loadSessionId;
    result.loadedUpdates = updates.length;
  } else {
    const session = await connection.newSession({ cwd: plan.cwd, mcpServers: plan.mcpServers || [] });
    sessionId = session.sessionId;
  }
  result.sessionId = sessionId;
  for (const text of plan.prompts) {
    const answer = await connection.prompt({ sessionId, prompt: [{ type: "text", text }] });
    result.prompts.push({ stopReason: answer.stopReason });
  }
  if (plan.forkPrompts) {  // session/fork (unstable in ACP), then prompts in the fork
    const forked = await connection.unstable_forkSession({
      sessionId, cwd: plan.forkCwd || plan.cwd, mcpServers: [],
    });
    result.forkSessionId = forked.sessionId;
    for (const text of plan.forkPrompts) {
      const answer = await connection.prompt({ sessionId: forked.sessionId, prompt: [{ type: "text", text }] });
      result.prompts.push({ stopReason: answer.stopReason, fork: true });
    }
  }
} catch (error) {
  result.error = String(error && (error.message || JSON.stringify(error)));
}
result.updates = updates;
result.permissionRequests = permissionRequests;
result.buffers = buffers;
result.fsRequests = fsRequests;
result.terminalRequests = terminalRequests;
result.schemaErrors = schemaErrors;
result.failedRequests = failedRequests;
result.invalidAnswers = invalidAnswers;
child.stdin.end();
const code = await new Promise((resolve) => child.on("exit", resolve));
result.exitCode = code;
process.stdout.write(JSON.stringify(result) + "\n");
