#!/usr/bin/env node
// A tiny agent loop whose hooks run through copse-hooks (see README.md).

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { Client } from "../../../clients/typescript/src/index.js";

// What the pretend model wants to do, turn after turn.
const PLAN = [
  ["run_shell", { command: "ls" }],
  ["run_shell", { command: "rm -rf /" }],
  ["run_shell", { command: "echo done" }],
];

const { values } = parseArgs({
  options: {
    binary: { type: "string", default: "copse-hooks" },
    workspace: { type: "string", default: "." },
    daemon: { type: "boolean", default: false },
  },
});
const root = resolve(values.workspace);
const client = values.daemon
  ? await Client.connect({ workspaceRoots: [root], enabled: true, trusted: true })
  : await Client.spawn({ binary: values.binary, workspaceRoots: [root], enabled: true, trusted: true });
try {
  client.onQueueMessage((m) => console.log(`  (a hook queued: ${JSON.stringify(m.text)})`));
  const session = await client.openSession({ conversationId: "example-typescript" });
  let prompt = "tidy up the workspace";
  for (let turn = 0; turn < 3; turn++) {
    console.log(`user: ${prompt}`);
    const submitted = await session.submitPrompt(prompt);
    if (submitted.decision === "deny") {
      console.log(`  prompt blocked: ${submitted.agent_message}`);
      break;
    }
    for (const [tool, input] of PLAN) {
      const verdict = await session.gate(tool, input);
      if (verdict.decision === "deny") {
        console.log(`  ${tool} ${JSON.stringify(input)} denied: ${verdict.agent_message}`);
        continue;
      }
      // A toy: the tool is never really run (the plan includes `rm -rf /`).
      const output = `(pretend output of ${input.command})`;
      console.log(`  ${tool} ${JSON.stringify(input)} allowed`);
      await session.afterToolUse(tool, input, output);
    }
    await session.stop();
    const { messages } = await session.drain();
    if (messages.length === 0) break;
    prompt = messages[0].text;
  }
} finally {
  await client.close();
}
