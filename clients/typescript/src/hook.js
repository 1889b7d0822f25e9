// Write hooks in Node: `runHook(handler, { events })` serves one function per call
// (stdin holds one payload; the answer is printed and the process exits) and
// persistent (`--persistent` among the arguments or COPSE_HOOK_PERSISTENT=1: the
// hello line, then one reply line per request line, until stdin closes). Handlers
// may be async; persistent replies are written as each completes, matched by id.
// No runtime dependencies; types in hook.d.ts.

import { createInterface } from "node:readline";

/** The persistent-hook protocol version (the hello line's `protocol`). */
export const HOOK_PROTOCOL = 1;
/** The argument that selects persistent mode. */
export const PERSISTENT_FLAG = "--persistent";
/** The environment variable that selects persistent mode when it is `1`. */
export const PERSISTENT_ENV = "COPSE_HOOK_PERSISTENT";

/** Every Copse event a hook can be registered for. */
export const COPSE_EVENTS = Object.freeze([
  "toolGate",
  "beforeSubmitPrompt",
  "afterFileEdit",
  "stop",
  "afterToolUse",
  "subagentStart",
  "subagentStop",
  "sessionStart",
  "sessionEnd",
  "preCompact",
  "afterAgentResponse",
  "afterAgentThought",
  "notification",
]);

const BLOCK = Symbol("copse-hooks.exit");

/**
 * Exit 2 with `reason` on stderr: blocks a gated event.
 * @param {string} reason
 */
export function block(reason) {
  return exit(2, reason);
}

/**
 * Exit with `code` and `stderr` (exit 1: the hook failed).
 * @param {number} code
 * @param {string} [stderr]
 */
export function exit(code, stderr = "") {
  return { [BLOCK]: true, code, stderr: String(stderr) };
}

/**
 * Whether the hook runs persistent.
 * @param {string[]} [argv]
 * @param {NodeJS.ProcessEnv} [env]
 */
export function isPersistent(argv = process.argv.slice(2), env = process.env) {
  return argv.includes(PERSISTENT_FLAG) || env[PERSISTENT_ENV] === "1";
}

async function call(handler, payload) {
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
    return exit(1, "the hook's payload is not a JSON object");
  }
  try {
    const out = await handler(payload);
    if (out === undefined || out === null || (typeof out === "object" && (out[BLOCK] || !Array.isArray(out)))) {
      return out ?? null;
    }
    return exit(1, `the hook answered ${typeof out}, not an object`);
  } catch (e) {
    return exit(1, `the hook failed: ${e && e.stack ? e.stack.split("\n")[0] : String(e)}`);
  }
}

/**
 * The reply (as an object) to one persistent request.
 * @param {{ id: number, event: string, payload: unknown }} request
 * @param {(payload: any) => unknown} handler
 */
export async function answer(request, handler) {
  const out = await call(handler, request.payload);
  if (out && out[BLOCK]) return { id: request.id, exit: out.code, stderr: out.stderr };
  return { id: request.id, response: out };
}

/**
 * Answers the one payload in `input`; resolves to the exit code.
 * @param {(payload: any) => unknown} handler
 * @param {string} input
 * @param {{ write(s: string): unknown }} stdout
 * @param {{ write(s: string): unknown }} stderr
 */
export async function servePerCall(handler, input, stdout, stderr) {
  let payload;
  try {
    payload = JSON.parse(input);
  } catch (e) {
    stderr.write(`the hook could not read its payload: ${e.message}`);
    return 1;
  }
  const out = await call(handler, payload);
  if (out && out[BLOCK]) {
    stderr.write(out.stderr);
    return out.code;
  }
  if (out !== null) stdout.write(JSON.stringify(out) + "\n");
  return 0;
}

/**
 * Says hello for `events`, then answers every request line of `input` on `output`;
 * resolves when `input` ends and every reply is written.
 * @param {(payload: any) => unknown} handler
 * @param {string[]} events
 * @param {import("node:stream").Readable} input
 * @param {import("node:stream").Writable} output
 */
export async function servePersistent(handler, events, input, output) {
  output.write(JSON.stringify({ hello: { protocol: HOOK_PROTOCOL, events: [...events] } }) + "\n");
  const pending = new Set();
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    let request;
    try {
      request = JSON.parse(line);
    } catch (e) {
      throw new Error(`not a persistent-hook request: ${e.message}: ${JSON.stringify(line.slice(0, 120))}`);
    }
    const p = answer(request, handler).then((reply) => {
      output.write(JSON.stringify(reply) + "\n");
      pending.delete(p);
    });
    pending.add(p);
  }
  await Promise.all(pending);
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Runs `handler` as a hook, per call or persistent, and sets the exit code.
 * @param {(payload: any) => unknown} handler
 * @param {{ events?: string[], persistent?: boolean }} [options]
 */
export async function runHook(handler, options = {}) {
  const events = options.events ?? ["toolGate"];
  const persistent = options.persistent ?? isPersistent();
  if (persistent) {
    try {
      await servePersistent(handler, events, process.stdin, process.stdout);
      process.exitCode = 0;
    } catch (e) {
      process.stderr.write(`${e.message}\n`);
      process.exitCode = 1;
      process.stdin.destroy();
    }
    return;
  }
  const input = await readAll(process.stdin);
  process.exitCode = await servePerCall(handler, input, process.stdout, process.stderr);
}
