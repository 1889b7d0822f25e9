#!/usr/bin/env node
// guard-shell: the policy of examples/copse/hooks/guard-shell.sh as a persistent hook.
// Denies deleting / or the home directory, denies piping a download into a shell, asks
// before a force push. Persistent with --persistent (one process serves every event),
// per call without it: the same function serves both.

// The SDK lives in clients/typescript of the copse-hooks repository; with the package
// installed, import from "copse-hooks-client/hook" instead.
import { runHook } from "../../../clients/typescript/src/hook.js";

function verdict(command) {
  if (command === "rm -rf /" || command.startsWith("rm -rf / ") || command.includes("rm -rf ~") || command.includes("rm -rf $HOME")) {
    return {
      decision: "deny",
      agentMessage: "Refusing to delete the root or home directory.",
      userMessage: "Blocked a recursive delete of / or your home directory.",
    };
  }
  for (const fetch of ["curl ", "wget "]) {
    const at = command.indexOf(fetch);
    const rest = at >= 0 ? command.slice(at + fetch.length) : "";
    if (at >= 0 && (rest.includes("| sh") || rest.includes("| bash"))) {
      return {
        decision: "deny",
        agentMessage: "Piping a download into a shell runs unreviewed code; download it, show it, then ask.",
        userMessage: "Blocked piping a download into a shell.",
      };
    }
  }
  if (command.includes("git push --force") || command.includes("git push -f")) {
    return {
      decision: "ask",
      agentMessage: "A force push rewrites the remote branch; the user must confirm it.",
      userMessage: "This command force-pushes. Confirm to continue.",
    };
  }
  return null;
}

/** @param {import("../../../clients/typescript/src/hook.js").CopsePayload} payload */
function guard(payload) {
  if (payload.hook_event_name !== "toolGate" || payload.tool_name !== "run_shell") return null;
  return verdict(String(payload.input?.command ?? ""));
}

await runHook(guard, { events: ["toolGate"] });
