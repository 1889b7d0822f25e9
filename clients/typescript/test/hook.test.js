// runHook in real hook processes, per call and persistent.

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const hookModule = pathToFileURL(join(here, "..", "src", "hook.js")).href;
const HANG = 30_000;

const HOOK = `
import { block, runHook } from ${JSON.stringify(hookModule)};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

await runHook(async (payload) => {
  const command = payload.input?.command ?? "";
  if (command === "rm -rf /") return { decision: "deny", agentMessage: "no" };
  if (command === "block") return block("blocked: " + payload.conversation_id);
  if (command === "throw") throw new Error("boom");
  if (command === "pid") return { agentMessage: String(process.pid) };
  if (command.startsWith("sleep ")) {
    await sleep(Number(command.slice(6)));
    return { agentMessage: command };
  }
  return null;
}, { events: ["toolGate", "stop"] });
`;

function gate(command, conversation = "c1") {
  return {
    hook_event_name: "toolGate",
    conversation_id: conversation,
    generation_id: "g1",
    workspace_roots: ["/w"],
    tool_name: "run_shell",
    input: { command },
  };
}

function script() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "copse-ts-hook-")));
  const path = join(dir, "hook.mjs");
  writeFileSync(path, HOOK);
  return { dir, path };
}

function perCall(path, stdin) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path], { stdio: ["pipe", "pipe", "pipe"] });
    const out = [];
    const err = [];
    child.stdout.on("data", (c) => out.push(c));
    child.stderr.on("data", (c) => err.push(c));
    const timer = setTimeout(() => reject(new Error("hook hung")), HANG);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() });
    });
    child.stdin.end(stdin);
  });
}

test("per call: prints the answer, exits 2 to block, 1 on a failure", async () => {
  const { dir, path } = script();
  try {
    let r = await perCall(path, JSON.stringify(gate("rm -rf /")));
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { decision: "deny", agentMessage: "no" });

    r = await perCall(path, JSON.stringify(gate("ls")));
    assert.deepEqual([r.code, r.stdout], [0, ""]);

    r = await perCall(path, JSON.stringify(gate("block")));
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", "blocked: c1"]);

    r = await perCall(path, JSON.stringify(gate("throw")));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Error: boom/);

    r = await perCall(path, "{not json");
    assert.equal(r.code, 1);
    assert.match(r.stderr, /could not read its payload/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

function persistent(path, args, env = process.env) {
  const child = spawn(process.execPath, [path, ...args], { stdio: ["pipe", "pipe", "pipe"], env });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    assert.ok(!done, "the hook closed stdout");
    return JSON.parse(value);
  };
  const exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  return { child, next, exited };
}

test("persistent: hello, then pipelined requests answered by id, out of order when handlers finish out of order", async () => {
  const { dir, path } = script();
  try {
    const { child, next, exited } = persistent(path, ["--persistent"]);
    assert.deepEqual(await next(), { hello: { protocol: 1, events: ["toolGate", "stop"] } });
    const requests = [
      [1, gate("sleep 300")],
      [2, gate("rm -rf /")],
      [3, gate("ls")],
      [4, gate("block", "c2")],
      [5, gate("throw")],
      [6, gate("pid")],
      [7, gate("pid")],
    ];
    child.stdin.write(requests.map(([id, payload]) => JSON.stringify({ id, event: "toolGate", payload }) + "\n").join(""));
    const order = [];
    const replies = {};
    for (let i = 0; i < requests.length; i++) {
      const r = await next();
      order.push(r.id);
      replies[r.id] = r;
    }
    assert.equal(order.at(-1), 1, `the slow request is answered last: ${order}`);
    assert.deepEqual(replies[1], { id: 1, response: { agentMessage: "sleep 300" } });
    assert.deepEqual(replies[2], { id: 2, response: { decision: "deny", agentMessage: "no" } });
    assert.deepEqual(replies[3], { id: 3, response: null });
    assert.deepEqual(replies[4], { id: 4, exit: 2, stderr: "blocked: c2" });
    assert.equal(replies[5].exit, 1);
    assert.match(replies[5].stderr, /Error: boom/);
    assert.equal(replies[6].response.agentMessage, String(child.pid));
    assert.equal(replies[7].response.agentMessage, String(child.pid), "one process served every request");
    child.stdin.end();
    assert.equal(await exited, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("persistent: COPSE_HOOK_PERSISTENT=1 selects it too; a line that is not a request fails clearly", async () => {
  const { dir, path } = script();
  try {
    const { child, next, exited } = persistent(path, [], { ...process.env, COPSE_HOOK_PERSISTENT: "1" });
    assert.ok((await next()).hello);
    child.stdin.write(JSON.stringify({ id: 9, event: "toolGate", payload: gate("block") }) + "\n");
    assert.deepEqual(await next(), { id: 9, exit: 2, stderr: "blocked: c1" });
    const err = [];
    child.stderr.on("data", (c) => err.push(c));
    child.stdin.write("hello\n");
    assert.equal(await exited, 1);
    assert.match(Buffer.concat(err).toString(), /not a persistent-hook request/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("COPSE_EVENTS names exactly the events the engine sends to Copse hooks (its golden payloads)", async () => {
  const { COPSE_EVENTS } = await import(hookModule);
  const { readFileSync } = await import("node:fs");
  const golden = JSON.parse(readFileSync(join(here, "..", "..", "..", "crates", "copse-hooks", "tests", "fixtures", "wire-payloads.json"), "utf8"));
  const events = [...new Set(Object.values(golden.copse).map((p) => p.hook_event_name))].sort();
  assert.deepEqual([...COPSE_EVENTS].sort(), events);
});
