#!/usr/bin/env python3
"""guard-shell: the policy of examples/copse/hooks/guard-shell.sh as a persistent hook.

Denies deleting / or the home directory, denies piping a download into a shell, asks
before a force push. Persistent with --persistent (one process serves every event),
per call without it: the same function serves both.
"""

import os
import sys

# The SDK lives in clients/python of the copse-hooks repository; with the package
# installed (pip install clients/python) this line is not needed.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "clients", "python"))

from copse_hooks_client.hook import run_hook  # noqa: E402


def verdict(command):
    if command == "rm -rf /" or command.startswith("rm -rf / ") or "rm -rf ~" in command or "rm -rf $HOME" in command:
        return {
            "decision": "deny",
            "agentMessage": "Refusing to delete the root or home directory.",
            "userMessage": "Blocked a recursive delete of / or your home directory.",
        }
    for fetch in ("curl ", "wget "):
        at = command.find(fetch)
        if at >= 0 and ("| sh" in command[at + len(fetch):] or "| bash" in command[at + len(fetch):]):
            return {
                "decision": "deny",
                "agentMessage": "Piping a download into a shell runs unreviewed code; download it, show it, then ask.",
                "userMessage": "Blocked piping a download into a shell.",
            }
    if "git push --force" in command or "git push -f" in command:
        return {
            "decision": "ask",
            "agentMessage": "A force push rewrites the remote branch; the user must confirm it.",
            "userMessage": "This command force-pushes. Confirm to continue.",
        }
    return None


def guard(payload):
    if payload.get("tool_name") != "run_shell":
        return None
    return verdict(payload.get("input", {}).get("command", ""))


if __name__ == "__main__":
    run_hook(guard, events=["toolGate"])
