// The TypeScript client against the real `copse-hooks` binary (COPSE_HOOKS_BIN).

import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { CANCELLED, Client, RpcError } from "../src/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const binary = process.env.COPSE_HOOKS_BIN || join(here, "..", "..", "..", "target", "debug", "copse-hooks");
const HANG = 60_000;

function workspace() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "copse-ts-")));
  const home = join(root, "home");
  const copse = join(root, "copse");
  const ws = join(root, "ws");
  for (const d of [join(home, ".cursor"), copse, ws]) mkdirSync(d, { recursive: true });
  writeFileSync(join(copse, "settings.json"), JSON.stringify({ sandboxWritablePaths: [root] }));
  const script = (name, body) => {
    const p = join(home, ".cursor", name);
    writeFileSync(p, `#!/bin/sh\n${body}\n`);
    chmodSync(p, 0o755);
    return p;
  };
  const slow = script("slow.sh", `cat >/dev/null\nread p _ </proc/self/stat; echo $p > ${root}/hook.pid\nwhile [ ! -e ${root}/go ]; do sleep 0.02; done\necho '{}'`);
  const deny = script("deny.sh", `cat >/dev/null\necho '{"permission":"deny","agent_message":"no force push"}'`);
  const follow = script("follow.sh", `cat >/dev/null\necho '{"followup_message":"now run the tests"}'`);
  const dump = script("dump.sh", `cat > ${root}/dump.tmp; mv ${root}/dump.tmp ${root}/dump.json`);
  writeFileSync(
    join(home, ".cursor", "hooks.json"),
    JSON.stringify({
      version: 1,
      hooks: {
        beforeShellExecution: [
          { command: slow, matcher: "slow" },
          { command: deny, matcher: "push --force" },
          { command: dump, matcher: "^dump" },
        ],
        stop: [{ command: follow }],
      },
    }),
  );
  const env = { PATH: process.env.PATH, HOME: home, COPSE_DIR: copse };
  return { root, ws, env, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

async function waitFor(check, what) {
  const deadline = Date.now() + HANG;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`${what} never happened`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

// A hook has a /proc of its own (its pid there is not the host's), so the test finds the
// hook's processes in the host's /proc by the script path on their command line.
function hostPids(script) {
  const pids = [];
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(script)) pids.push(name);
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

function gone(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 1).trim().startsWith("Z");
  } catch {
    return true;
  }
}

test("host fields from openSession and update reach the hooks", async () => {
  const w = workspace();
  const client = await Client.spawn({ binary, workspaceRoots: [w.ws], enabled: true, env: w.env });
  try {
    const session = await client.openSession({
      conversationId: "conv-h",
      host: { hostVersion: "1.7.2", userEmail: "dev@example.com", transcriptPath: "/t/h.jsonl" },
    });
    const dumped = join(w.root, "dump.json");
    const gateAndRead = async (options) => {
      rmSync(dumped, { force: true });
      assert.equal((await session.gate("run_shell", { command: "dump" }, options)).decision, "allow");
      return JSON.parse(readFileSync(dumped, "utf8"));
    };
    let seen = await gateAndRead({ toolUseId: "toolu_ts_1" });
    assert.deepEqual([seen.cursor_version, seen.user_email, seen.transcript_path], ["1.7.2", "dev@example.com", "/t/h.jsonl"]);
    assert.deepEqual(await session.update({ host: { userEmail: "other@example.com" } }), { updated: true });
    seen = await gateAndRead();
    assert.deepEqual([seen.cursor_version, seen.user_email], ["1.7.2", "other@example.com"]);
  } finally {
    await client.close();
    w.cleanup();
  }
});

test("gate, queue notification, drain, mirrors", async () => {
  const w = workspace();
  const client = await Client.spawn({ binary, workspaceRoots: [w.ws], enabled: true, env: w.env });
  try {
    assert.equal(client.serverInfo.name, "copse-hooks");
    const session = await client.openSession({ conversationId: "conv-ts" });
    let verdict = await session.gate("run_shell", { command: "git push --force origin main" });
    assert.equal(verdict.decision, "deny");
    assert.equal(verdict.agent_message, "no force push");
    verdict = await session.gate("run_shell", { command: "git status" });
    assert.deepEqual([verdict.decision, verdict.runs], ["allow", []]);

    const queued = new Promise((resolve) => client.onQueueMessage(resolve));
    const stopped = await session.stop();
    assert.equal(stopped.detached, true);
    const message = await queued;
    assert.equal(message.sessionId, session.id);
    assert.equal(message.text, "now run the tests");
    const drained = await session.drain();
    assert.deepEqual([...drained.messages, ...drained.pending].map((m) => m.text), ["now run the tests"]);

    const listing = await client.listHooks();
    assert.equal(listing.hooks.length, 4);
    const { runs } = await client.log({ limit: 5 });
    assert.equal(runs[0].session_id, "conv-ts");
    assert.equal((await client.show(runs[0].run_id)).run_id, runs[0].run_id);
    assert.equal((await client.doctor()).enablement.enabled, true);
  } finally {
    await client.close();
    w.cleanup();
  }
});

test("out-of-order completion and cancellation kill the hook", async () => {
  const w = workspace();
  const client = await Client.spawn({ binary, workspaceRoots: [w.ws], enabled: true, env: w.env });
  try {
    const session = await client.openSession();
    const slow = session.gate("run_shell", { command: "slow" });
    const slowOutcome = slow.then(
      () => "resolved",
      (e) => e,
    );
    await waitFor(() => {
      const p = join(w.root, "hook.pid");
      return existsSync(p) && readFileSync(p, "utf8").endsWith("\n");
    }, "the slow hook");
    const pids = hostPids(join(w.root, "home", ".cursor", "slow.sh"));
    assert.ok(pids.length > 0, "the slow hook's processes are visible from the host");
    const fast = await session.gate("run_shell", { command: "ls" });
    assert.equal(fast.decision, "allow");
    client.cancel(slow);
    const error = await slowOutcome;
    assert.ok(error instanceof RpcError, String(error));
    assert.equal(error.code, CANCELLED);
    await waitFor(() => pids.every(gone), "the hook's death");
  } finally {
    await client.close();
    w.cleanup();
  }
});

test("errors name the method and the field", async () => {
  const w = workspace();
  const client = await Client.spawn({ binary, workspaceRoots: [w.ws], enabled: true, env: w.env });
  try {
    await assert.rejects(client.request("hooks/nope"), (e) => e.code === -32601);
    const session = await client.openSession();
    await assert.rejects(session.fire("toolGate", { tool: 7 }), (e) => e.code === -32602 && e.rpcMessage.includes("tool"));
  } finally {
    await client.close();
    w.cleanup();
  }
});

test("two clients on one socket server", async () => {
  const w = workspace();
  const path = join(w.root, "run", "copse.sock");
  const server = spawn(binary, ["serve", "--socket", path], { env: w.env, stdio: "ignore" });
  try {
    await waitFor(() => existsSync(path), "the socket");
    const a = await Client.connect({ socketPath: path, workspaceRoots: [w.ws], enabled: true });
    const b = await Client.connect({ socketPath: path, workspaceRoots: [w.ws], enabled: true });
    const sa = await a.openSession({ conversationId: "a" });
    const sb = await b.openSession({ conversationId: "b" });
    await assert.rejects(b.request("queue/drain", { sessionId: sa.id }), (e) => e.code === -32001);
    assert.equal((await sb.gate("run_shell", { command: "git push --force" })).decision, "deny");
    await a.close();
    assert.equal((await sb.gate("run_shell", { command: "ls" })).decision, "allow");
    await b.close();
  } finally {
    const exited = new Promise((ok) => server.once("exit", ok));
    server.kill("SIGTERM");
    await exited;
    w.cleanup();
  }
});
