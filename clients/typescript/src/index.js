// A client for `copse-hooks serve`: the copse-hooks engine over JSON-RPC 2.0, one
// message per line. No runtime dependencies; types in index.d.ts.

import { spawn } from "node:child_process";
import { connect as netConnect } from "node:net";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

export const PROTOCOL_VERSION = "2026-12-01";
/** The JSON-RPC error code of a cancelled request. */
export const CANCELLED = -32800;

/** A JSON-RPC error answer. */
export class RpcError extends Error {
  /**
   * @param {number} code
   * @param {string} message
   * @param {unknown} [data]
   */
  constructor(code, message, data) {
    super(`${message} (${code})`);
    this.name = "RpcError";
    this.code = code;
    this.rpcMessage = message;
    this.data = data;
  }
}

/** One connection to a copse-hooks server. */
export class Client {
  /**
   * @param {import("node:stream").Readable} readable
   * @param {import("node:stream").Writable} writable
   * @param {{ process?: import("node:child_process").ChildProcess, socket?: import("node:net").Socket }} [owner]
   */
  constructor(readable, writable, owner = {}) {
    this.readable = readable;
    this.writable = writable;
    this.process = owner.process;
    this.socket = owner.socket;
    this.nextId = 1;
    /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
    this.pending = new Map();
    /** @type {Set<(m: any) => void>} */
    this.queueListeners = new Set();
    this.closed = false;
    this.serverInfo = undefined;
    this.capabilities = undefined;
    let buffer = "";
    readable.setEncoding("utf8");
    readable.on("data", (chunk) => {
      buffer += chunk;
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() !== "") this.#dispatch(JSON.parse(line));
      }
    });
    const gone = () => {
      this.closed = true;
      for (const p of this.pending.values()) p.reject(new Error("the copse-hooks server went away"));
      this.pending.clear();
    };
    readable.on("end", gone);
    readable.on("close", gone);
    readable.on("error", gone);
    writable.on("error", gone);
  }

  /**
   * Starts a private `copse-hooks serve` and initializes it.
   * @param {import("./index.d.ts").SpawnOptions} options
   */
  static async spawn(options) {
    const child = spawn(options.binary ?? "copse-hooks", ["serve"], {
      stdio: ["pipe", "pipe", "inherit"],
      env: options.env ?? process.env,
    });
    const client = new Client(child.stdout, child.stdin, { process: child });
    await client.initialize(options);
    return client;
  }

  /**
   * Connects to a server on a Unix socket (default: the daemon at
   * `$COPSE_DIR/daemon.sock`) and initializes the connection.
   * @param {import("./index.d.ts").ConnectOptions} options
   */
  static async connect(options) {
    const copseDir = process.env.COPSE_DIR || join(homedir(), ".copse");
    const path = options.socketPath ?? join(copseDir, "daemon.sock");
    const socket = netConnect(path);
    await new Promise((ok, fail) => {
      socket.once("connect", ok);
      socket.once("error", fail);
    });
    const client = new Client(socket, socket, { socket });
    await client.initialize(options);
    return client;
  }

  /** @param {any} message */
  #dispatch(message) {
    if (message.id !== undefined && message.id !== null && ("result" in message || "error" in message)) {
      const p = this.pending.get(message.id);
      if (!p) return;
      this.pending.delete(message.id);
      if (message.error) p.reject(new RpcError(message.error.code, message.error.message, message.error.data));
      else p.resolve(message.result);
    } else if (message.method === "queue/message") {
      for (const listener of this.queueListeners) listener(message.params);
    }
  }

  /** @param {object} message */
  #send(message) {
    this.writable.write(JSON.stringify(message) + "\n");
  }

  /**
   * Sends a request. The returned promise carries `requestId` for `cancel`.
   * @param {string} method
   * @param {object} [params]
   */
  request(method, params = {}) {
    if (this.closed) return Promise.reject(new Error("the copse-hooks connection is closed"));
    const id = this.nextId++;
    /** @type {any} */
    const promise = new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
    promise.requestId = id;
    this.#send({ jsonrpc: "2.0", id, method, params });
    return promise;
  }

  /**
   * @param {string} method
   * @param {object} [params]
   */
  notify(method, params = {}) {
    this.#send({ jsonrpc: "2.0", method, params });
  }

  /**
   * Cancels an in-flight request: its hooks are killed and its promise rejects with
   * an `RpcError` of code `CANCELLED`.
   * @param {Promise<unknown> & { requestId?: number }} request
   */
  cancel(request) {
    this.notify("$/cancelRequest", { id: request.requestId });
  }

  /** @param {import("./index.d.ts").InitializeOptions} options */
  async initialize(options) {
    /** @type {Record<string, unknown>} */
    const params = {
      workspaceRoots: options.workspaceRoots.map((r) => resolve(r)),
      clientInfo: { name: options.clientName ?? "copse-hooks-client-typescript", version: "0.1.0" },
      protocolVersion: PROTOCOL_VERSION,
    };
    if (options.enabled !== undefined) params.enabled = options.enabled;
    if (options.trusted !== undefined) params.trusted = options.trusted;
    const result = await this.request("initialize", params);
    this.serverInfo = result.serverInfo;
    this.capabilities = result.capabilities;
    return result;
  }

  /** @param {import("./index.d.ts").SessionIdentity} [identity] */
  async openSession(identity = {}) {
    const { sessionId } = await this.request("session/open", identity);
    return new Session(this, sessionId);
  }

  /**
   * Calls `listener` for every message a hook queues; returns an unsubscribe function.
   * @param {(m: import("./index.d.ts").QueuedMessage) => void} listener
   */
  onQueueMessage(listener) {
    this.queueListeners.add(listener);
    return () => this.queueListeners.delete(listener);
  }

  listHooks() {
    return this.request("hooks/list");
  }

  /**
   * @param {string} source
   * @param {string} event
   * @param {{ entry?: number, payload?: unknown }} [options]
   */
  testHook(source, event, options = {}) {
    return this.request("hooks/test", { source, event, ...options });
  }

  /** @param {Record<string, unknown>} [filters] */
  log(filters = {}) {
    return this.request("spine/log", filters);
  }

  /** @param {string} runId */
  show(runId) {
    return this.request("spine/show", { runId });
  }

  doctor() {
    return this.request("doctor");
  }

  /** Shuts the server down (a spawned one exits) and closes the connection. */
  async close() {
    if (!this.closed) {
      try {
        await this.request("shutdown");
        this.notify("exit");
      } catch {
        // already gone
      }
    }
    if (this.process) {
      const exited = new Promise((ok) => {
        if (this.process.exitCode !== null) ok(undefined);
        else this.process.once("exit", ok);
      });
      this.process.stdin.end();
      await exited;
    }
    if (this.socket) this.socket.end();
  }
}

/** One conversation on a connection. */
export class Session {
  /**
   * @param {Client} client
   * @param {string} id
   */
  constructor(client, id) {
    this.client = client;
    this.id = id;
  }

  /**
   * Fires a canonical event (`toolGate`, `stop`, …) with its camelCase fields.
   * @param {string} event
   * @param {Record<string, unknown>} [fields]
   */
  fire(event, fields = {}) {
    return this.client.request(`hooks/${event}`, { sessionId: this.id, ...fields });
  }

  /**
   * Gates a tool call: `decision` is `allow` (no hook objects), `ask` or `deny`.
   * @param {string} tool
   * @param {Record<string, unknown>} input
   * @param {{ fileContent?: string, toolUseId?: string }} [options] `toolUseId`: the
   *   host's id for the call (generated when absent).
   */
  gate(tool, input, options = {}) {
    return this.fire("toolGate", { tool, input, ...options });
  }

  /** @param {string} prompt */
  submitPrompt(prompt) {
    return this.fire("beforeSubmitPrompt", { prompt });
  }

  /**
   * @param {string} tool
   * @param {Record<string, unknown>} input
   * @param {string} output
   * @param {Record<string, unknown>} [fields]
   */
  afterToolUse(tool, input, output, fields = {}) {
    return this.fire("afterToolUse", { tool, input, output, ...fields });
  }

  /**
   * @param {string} filePath
   * @param {{ oldString: string, newString: string }[]} [edits]
   */
  afterFileEdit(filePath, edits = []) {
    return this.fire("afterFileEdit", { filePath, edits });
  }

  /** @param {string} [status] */
  stop(status = "completed") {
    return this.fire("stop", { status });
  }

  drain() {
    return this.client.request("queue/drain", { sessionId: this.id });
  }

  /**
   * `session/update`: only the fields given change (a new turn id, another model, a new
   * permission mode …); the next event's hooks see them.
   * @param {{ generationId?: string, model?: object, host?: object }} changes
   */
  update(changes) {
    return this.client.request("session/update", { sessionId: this.id, ...changes });
  }

  close() {
    return this.client.request("session/close", { sessionId: this.id });
  }
}
