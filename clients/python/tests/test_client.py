"""The Python client against the real ``copse-hooks`` binary (``COPSE_HOOKS_BIN``)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from copse_hooks_client import CANCELLED, Client, RpcError  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BINARY = os.environ.get("COPSE_HOOKS_BIN") or os.path.join(HERE, "..", "..", "..", "target", "debug", "copse-hooks")
HANG = 60.0


class Workspace:
    """A temp home, copse dir and workspace with user Cursor hooks."""

    def __init__(self) -> None:
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="copse-py-"))
        self.home = os.path.join(self.root, "home")
        self.copse = os.path.join(self.root, "copse")
        self.ws = os.path.join(self.root, "ws")
        for d in (self.home + "/.cursor", self.copse, self.ws):
            os.makedirs(d)
        with open(os.path.join(self.copse, "settings.json"), "w") as f:
            json.dump({"sandboxWritablePaths": [self.root]}, f)
        slow = self.script(
            "slow.sh",
            f"cat >/dev/null\nread p _ </proc/self/stat; echo $p > {self.root}/hook.pid\n"
            f"while [ ! -e {self.root}/go ]; do sleep 0.02; done\necho '{{}}'",
        )
        deny = self.script("deny.sh", "cat >/dev/null\necho '{\"permission\":\"deny\",\"agent_message\":\"no force push\"}'")
        follow = self.script("follow.sh", "cat >/dev/null\necho '{\"followup_message\":\"now run the tests\"}'")
        dump = self.script("dump.sh", f"cat > {self.root}/dump.tmp; mv {self.root}/dump.tmp {self.root}/dump.json")
        hooks = {
            "version": 1,
            "hooks": {
                "beforeShellExecution": [
                    {"command": slow, "matcher": "slow"},
                    {"command": deny, "matcher": "push --force"},
                    {"command": dump, "matcher": "^dump"},
                ],
                "stop": [{"command": follow}],
            },
        }
        with open(os.path.join(self.home, ".cursor", "hooks.json"), "w") as f:
            json.dump(hooks, f)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "COPSE_DIR": self.copse,
        }

    def script(self, name: str, body: str) -> str:
        path = os.path.join(self.home, ".cursor", name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        return path

    def wait_file(self, name: str) -> str:
        path = os.path.join(self.root, name)
        deadline = time.monotonic() + HANG
        while time.monotonic() < deadline:
            if os.path.exists(path):
                with open(path) as f:
                    text = f.read()
                if text.endswith("\n"):
                    return text.strip()
            time.sleep(0.01)
        raise AssertionError(f"{name} never appeared")

    def cleanup(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def host_pids(script: str) -> list:
    """A hook has a /proc of its own (its pid there is not the host's), so the test finds
    the hook's processes in the host's /proc by the script path on their command line."""
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if script.encode() in f.read():
                    pids.append(name)
        except OSError:
            pass  # the process ended while we looked
    return pids


def gone(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.w = Workspace()
        self.client = Client.spawn([self.w.ws], binary=BINARY, enabled=True, env=self.w.env)

    def tearDown(self) -> None:
        self.client.close()
        self.w.cleanup()

    def test_gate_denies_and_allows(self) -> None:
        self.assertEqual(self.client.server_info["name"], "copse-hooks")
        session = self.client.open_session("conv-py")
        verdict = session.gate("run_shell", {"command": "git push --force origin main"})
        self.assertEqual(verdict["decision"], "deny")
        self.assertEqual(verdict["agent_message"], "no force push")
        self.assertEqual(verdict["runs"][0]["outcome"], "deny")
        verdict = session.gate("run_shell", {"command": "git status"})
        self.assertEqual((verdict["decision"], verdict["runs"]), ("allow", []))

    def test_host_fields_and_tool_use_id_reach_the_hooks(self) -> None:
        session = self.client.open_session(
            "conv-h", host={"hostVersion": "1.7.2", "userEmail": "dev@example.com", "transcriptPath": "/t/h.jsonl"}
        )
        dumped = os.path.join(self.w.root, "dump.json")

        def gate_and_read(**kwargs):
            if os.path.exists(dumped):
                os.remove(dumped)
            self.assertEqual(session.gate("run_shell", {"command": "dump"}, **kwargs)["decision"], "allow")
            with open(dumped) as f:
                return json.load(f)

        seen = gate_and_read(tool_use_id="toolu_py_1")
        self.assertEqual((seen["cursor_version"], seen["user_email"]), ("1.7.2", "dev@example.com"))
        self.assertEqual(seen["transcript_path"], "/t/h.jsonl")
        self.assertEqual(session.update(host={"userEmail": "other@example.com"}), {"updated": True})
        seen = gate_and_read()
        self.assertEqual((seen["cursor_version"], seen["user_email"]), ("1.7.2", "other@example.com"))

    def test_queue_message_notification_and_drain(self) -> None:
        got = threading.Event()
        seen = []

        def on_message(m):
            seen.append(m)
            got.set()

        self.client.on_queue_message(on_message)
        session = self.client.openSession("conv-q")
        self.assertEqual(session.stop()["detached"], True)
        self.assertTrue(got.wait(HANG))
        self.assertEqual(seen[0]["sessionId"], session.id)
        self.assertEqual(seen[0]["text"], "now run the tests")
        drained = session.drain()
        texts = [m["text"] for m in drained["messages"] + drained["pending"]]
        self.assertEqual(texts, ["now run the tests"])

    def test_out_of_order_and_cancellation(self) -> None:
        session = self.client.open_session("conv-c")
        slow = session.gate_async("run_shell", {"command": "slow"})
        self.w.wait_file("hook.pid")
        pids = host_pids(os.path.join(self.w.home, ".cursor", "slow.sh"))
        self.assertTrue(pids, "the slow hook's processes are visible from the host")
        fast = session.gate("run_shell", {"command": "ls"})
        self.assertEqual(fast["decision"], "allow")
        self.assertFalse(slow.done())
        self.client.cancel(slow)
        with self.assertRaises(RpcError) as ctx:
            slow.result(HANG)
        self.assertEqual(ctx.exception.code, CANCELLED)
        deadline = time.monotonic() + HANG
        while not all(gone(p) for p in pids):
            self.assertLess(time.monotonic(), deadline, "the hook outlived its cancelled request")
            time.sleep(0.01)

    def test_errors(self) -> None:
        with self.assertRaises(RpcError) as ctx:
            self.client.request("hooks/nope")
        self.assertEqual(ctx.exception.code, -32601)
        session = self.client.open_session()
        with self.assertRaises(RpcError) as ctx:
            session.fire("toolGate", tool=7)
        self.assertEqual(ctx.exception.code, -32602)
        self.assertIn("tool", ctx.exception.message)

    def test_mirrors_of_the_cli(self) -> None:
        session = self.client.open_session("conv-m")
        session.gate("run_shell", {"command": "git push --force"})
        listing = self.client.list_hooks()
        self.assertEqual(len(listing["hooks"]), 4)
        runs = self.client.log(limit=5)["runs"]
        self.assertEqual(runs[0]["session_id"], "conv-m")
        self.assertEqual(self.client.show(runs[0]["run_id"])["outcome"], "deny")
        self.assertTrue(self.client.doctor()["enablement"]["enabled"])


class SocketTest(unittest.TestCase):
    def test_two_clients_on_one_socket_server(self) -> None:
        w = Workspace()
        path = os.path.join(w.root, "run", "copse.sock")
        server = subprocess.Popen([BINARY, "serve", "--socket", path], env=w.env, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + HANG
            while not os.path.exists(path):
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.01)
            a = Client.connect([w.ws], socket_path=path, enabled=True)
            b = Client.connect([w.ws], socket_path=path, enabled=True)
            sa, sb = a.open_session("a"), b.open_session("b")
            with self.assertRaises(RpcError):
                b.request("queue/drain", {"sessionId": sa.id})
            self.assertEqual(sb.gate("run_shell", {"command": "git push --force"})["decision"], "deny")
            a.close()
            self.assertEqual(sb.gate("run_shell", {"command": "ls"})["decision"], "allow")
            b.close()
        finally:
            server.terminate()
            server.wait(HANG)
            w.cleanup()


if __name__ == "__main__":
    unittest.main()
