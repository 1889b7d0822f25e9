"""``run_hook`` in real hook processes, per call and persistent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
HANG = 30.0

HOOK = textwrap.dedent(
    """
    import os, sys
    sys.path.insert(0, {client!r})
    from copse_hooks_client.hook import Block, Exit, run_hook

    def handler(payload):
        command = payload.get("input", {{}}).get("command", "")
        if command == "rm -rf /":
            return {{"decision": "deny", "agentMessage": "no"}}
        if command == "block":
            return Block("blocked: " + payload["conversation_id"])
        if command == "raise":
            raise RuntimeError("boom")
        if command == "pid":
            return {{"agentMessage": str(os.getpid())}}
        return None

    run_hook(handler, events=["toolGate", "stop"])
    """
)


def gate(command: str, conversation: str = "c1") -> dict:
    return {
        "hook_event_name": "toolGate",
        "conversation_id": conversation,
        "generation_id": "g1",
        "workspace_roots": ["/w"],
        "tool_name": "run_shell",
        "input": {"command": command},
    }


class HookTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = tempfile.TemporaryDirectory(prefix="copse-py-hook-")
        self.script = os.path.join(self.dir.name, "hook.py")
        with open(self.script, "w") as f:
            f.write(HOOK.format(client=os.path.realpath(CLIENT)))

    def tearDown(self) -> None:
        self.dir.cleanup()

    def per_call(self, payload: str, env: dict = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, self.script],
            input=payload.encode(),
            capture_output=True,
            timeout=HANG,
            env=env,
        )

    def test_per_call_prints_the_answer_and_exits(self) -> None:
        out = self.per_call(json.dumps(gate("rm -rf /")))
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout), {"decision": "deny", "agentMessage": "no"})

        out = self.per_call(json.dumps(gate("ls")))
        self.assertEqual((out.returncode, out.stdout), (0, b""))

        out = self.per_call(json.dumps(gate("block")))
        self.assertEqual((out.returncode, out.stdout, out.stderr), (2, b"", b"blocked: c1"))

        out = self.per_call(json.dumps(gate("raise")))
        self.assertEqual(out.returncode, 1)
        self.assertIn(b"RuntimeError: boom", out.stderr)

        out = self.per_call("{not json")
        self.assertEqual(out.returncode, 1)
        self.assertIn(b"could not read its payload", out.stderr)

    def persistent(self, argv: list, env: dict = None) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, self.script, *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )

    def test_persistent_says_hello_and_answers_pipelined_requests_by_id(self) -> None:
        proc = self.persistent(["--persistent"])
        hello = json.loads(proc.stdout.readline())
        self.assertEqual(hello, {"hello": {"protocol": 1, "events": ["toolGate", "stop"]}})
        requests = [
            (7, gate("rm -rf /")),
            (3, gate("ls")),
            (12, gate("block", "c2")),
            (4, gate("raise")),
            (5, gate("pid")),
            (6, gate("pid")),
        ]
        # All written before any answer is read: pipelined.
        proc.stdin.write(b"".join(json.dumps({"id": i, "event": "toolGate", "payload": p}).encode() + b"\n" for i, p in requests))
        proc.stdin.flush()
        replies = {}
        for _ in requests:
            reply = json.loads(proc.stdout.readline())
            replies[reply["id"]] = reply
        self.assertEqual(replies[7], {"id": 7, "response": {"decision": "deny", "agentMessage": "no"}})
        self.assertEqual(replies[3], {"id": 3, "response": None})
        self.assertEqual(replies[12], {"id": 12, "exit": 2, "stderr": "blocked: c2"})
        self.assertEqual(replies[4]["exit"], 1)
        self.assertIn("RuntimeError: boom", replies[4]["stderr"])
        # One process served them all.
        self.assertEqual(replies[5]["response"], replies[6]["response"])
        self.assertEqual(replies[5]["response"]["agentMessage"], str(proc.pid))
        proc.stdin.close()
        self.assertEqual(proc.wait(timeout=HANG), 0)
        self.assertEqual(proc.stdout.read(), b"")
        proc.stdout.close()
        proc.stderr.close()

    def test_the_environment_variable_selects_persistent_mode_too(self) -> None:
        env = dict(os.environ, COPSE_HOOK_PERSISTENT="1")
        proc = self.persistent([], env=env)
        self.assertIn("hello", json.loads(proc.stdout.readline()))
        proc.stdin.write(json.dumps({"id": 1, "event": "toolGate", "payload": gate("block")}).encode() + b"\n")
        proc.stdin.flush()
        self.assertEqual(json.loads(proc.stdout.readline()), {"id": 1, "exit": 2, "stderr": "blocked: c1"})
        proc.stdin.close()
        self.assertEqual(proc.wait(timeout=HANG), 0)
        proc.stdout.close()
        proc.stderr.close()

    def test_a_line_that_is_not_a_request_fails_the_process_clearly(self) -> None:
        proc = self.persistent(["--persistent"])
        proc.stdout.readline()
        _, err = proc.communicate(b"hello\n", timeout=HANG)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(b"not a persistent-hook request", err)


if __name__ == "__main__":
    unittest.main()


class TypesTest(unittest.TestCase):
    """The TypedDicts name every field the engine sends (its golden payloads)."""

    def test_every_golden_payload_field_is_typed(self) -> None:
        from copse_hooks_client import hook

        fixture = os.path.join(CLIENT, "..", "..", "crates", "copse-hooks", "tests", "fixtures", "wire-payloads.json")
        with open(fixture) as f:
            golden = json.load(f)
        types = {
            "copse": hook.CopsePayload,
            "claude": hook.ClaudePayload,
            "cursor": hook.CursorPayload,
            "gemini": hook.GeminiPayload,
            "codex": hook.CodexPayload,
            "copilot": hook.CopilotPayload,
        }
        self.assertEqual(sorted(golden), sorted(types))
        for dialect, payloads in golden.items():
            declared = set(types[dialect].__annotations__)
            for key, payload in payloads.items():
                missing = set(payload) - declared
                self.assertFalse(missing, f"{dialect} {key}: untyped fields {sorted(missing)}")
        events = sorted({p["hook_event_name"] for p in golden["copse"].values()})
        self.assertEqual(events, sorted(hook.COPSE_EVENTS))
