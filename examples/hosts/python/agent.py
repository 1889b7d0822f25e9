#!/usr/bin/env python3
"""A tiny agent loop whose hooks run through copse-hooks (see README.md)."""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "clients", "python"))

from copse_hooks_client import Client  # noqa: E402

# What the pretend model wants to do, turn after turn.
PLAN = [
    ("run_shell", {"command": "ls"}),
    ("run_shell", {"command": "rm -rf /"}),
    ("run_shell", {"command": "echo done"}),
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="copse-hooks")
    parser.add_argument("--workspace", default=".")
    parser.add_argument("--daemon", action="store_true", help="use the daemon instead of a private server")
    args = parser.parse_args()
    root = os.path.abspath(args.workspace)
    if args.daemon:
        client = Client.connect([root], enabled=True, trusted=True)
    else:
        client = Client.spawn([root], binary=args.binary, enabled=True, trusted=True)
    with client:
        client.on_queue_message(lambda m: print(f"  (a hook queued: {m['text']!r})"))
        session = client.open_session("example-python")
        prompt = "tidy up the workspace"
        for turn in range(3):
            print(f"user: {prompt}")
            verdict = session.submit_prompt(prompt)
            if verdict["decision"] == "deny":
                print(f"  prompt blocked: {verdict['agent_message']}")
                break
            for tool, tool_input in PLAN:
                verdict = session.gate(tool, tool_input)
                if verdict["decision"] == "deny":
                    print(f"  {tool} {tool_input} denied: {verdict['agent_message']}")
                    continue
                # A toy: the tool is never really run (the plan includes `rm -rf /`).
                output = f"(pretend output of {tool_input['command']})"
                print(f"  {tool} {tool_input} allowed")
                session.after_tool_use(tool, tool_input, output)
            session.stop()
            ready = session.drain()["messages"]
            if not ready:
                break
            prompt = ready[0]["text"]
    return 0


if __name__ == "__main__":
    sys.exit(main())
