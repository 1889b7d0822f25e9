#!/usr/bin/env python3
"""End-to-end: the copse-hooks shim inside real Claude Code, Gemini CLI, Codex and
GitHub Copilot CLI.

For each agent, in a fresh HOME, against the fake model server (fake_model.py):
  1. `copse-hooks install --agent NAME [--adopt]` into the agent's own config;
  2. a prompt blocked by a Copse-native hook never reaches the model;
  3. a shell command denied by a Copse-native hook, and one denied by a hook in the
     agent's own format (adopted; for Gemini, a Claude-format hook honoured through
     `"shim": {"gemini": {"also": ["claude"]}}`), never runs;
     (Copilot: its own hook file in ~/.copilot/hooks/ is adopted, and the shim's file is
     ~/.copilot/hooks/copse-hooks.json);
  4. an allowed command runs, and the after-tool and stop hooks are recorded in the
     audit log under the agent's own session id;
  5. context injected at session start reaches the model;
  6. `copse-hooks uninstall` leaves the agent's config byte-identical (Copilot: every file
     in ~/.copilot/hooks/);
  7. Copilot only: the project-scope shim (.github/hooks/) denies in a folder Copilot
     trusts, and Copilot skips it in one it does not.
The shim forwards every call to the user daemon it starts on demand (checked: the calls
were served by the daemon); the in-process fallback is tested by the Rust tests
(crates/copse-hooks-cli/tests/it/shim.rs).
Blocked prompts exit 0 in every agent, so the checks look at what fired and what the
model received, never at exit codes.

Usage: e2e.py --bin target/debug/copse-hooks --agents-bin DIR [--only NAME ...]
(NAME: claude, gemini, codex, copilot; `tests/agents/run.sh --only copilot` passes it on)
Standard library only.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CTX = "CTX-MARKER-7d1f"
TIMEOUT = 120

COPSE_HOOKS = {
    "version": 1,
    "hooks": {
        "toolGate": [{
            "command": "grep -q copse-forbidden && printf '%s' '{\"decision\":\"deny\",\"agentMessage\":\"denied by a copse e2e hook\"}' || true",
            "matcher": "^run_shell$",
        }],
        "beforeSubmitPrompt": [{
            "command": "grep -q BLOCKME && printf '%s' '{\"haltRun\":{\"reason\":\"prompt blocked by a copse e2e hook\"}}' || true",
        }],
        "sessionStart": [{"command": "cat >/dev/null"}],
        "afterToolUse": [{"command": "cat >/dev/null", "onFailure": "open"}],
        "stop": [{"command": "cat >/dev/null", "onFailure": "open"}],
    },
}

# A hook in Claude's (and Codex's) own format: denies by exit 2, and injects context at
# session start.
CLAUDE_FORMAT_HOOKS = {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command",
        "command": "grep -q adopted-forbidden && { echo 'denied by an adopted hook' >&2; exit 2; } || true",
    }]}],
    "SessionStart": [{"hooks": [{
        "type": "command",
        "command": "printf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"" + CTX + "\"}}'",
    }]}],
}


# A hook file in GitHub Copilot CLI's own format (version 1): denies by a JSON answer, and
# injects context at session start.
COPILOT_FORMAT_HOOKS = {
    "version": 1,
    "hooks": {
        "preToolUse": [{
            "type": "command",
            "bash": "grep -q adopted-forbidden && printf '%s' '{\"permissionDecision\":\"deny\","
                    "\"permissionDecisionReason\":\"denied by an adopted hook\"}' || true",
        }],
        "sessionStart": [{
            "type": "command",
            "bash": "cat >/dev/null; printf '%s' '{\"additionalContext\":\"" + CTX + "\"}'",
        }],
    },
}


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print(f"    ok: {what}")


class Model:
    def __init__(self, tmp):
        self.log = tmp / "model.jsonl"
        self.log.touch()
        port_file = tmp / "model.port"
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "fake_model.py"), "--port-file", str(port_file), "--log", str(self.log)])
        deadline = time.time() + 20
        while not port_file.exists():
            if time.time() > deadline or self.proc.poll() is not None:
                raise Failure("the fake model server did not start")
            time.sleep(0.05)
        self.port = int(port_file.read_text())
        self.url = f"http://127.0.0.1:{self.port}"

    def mark(self):
        return len(self.log.read_text().splitlines())

    def since(self, mark):
        return [json.loads(l) for l in self.log.read_text().splitlines()[mark:]]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)


class Agent:
    name = ""
    adopt = True
    adopted_dialect = "claude"  # the format of the agent's own hooks in this test
    own_hooks_via_copse = True  # the agent's own-format hooks run through copse (adopted / "also")

    def __init__(self, args, tmp, model):
        self.args, self.tmp, self.model = args, tmp, model
        self.home = tmp / "home"
        self.proj = tmp / "proj"
        self.copse = self.home / ".copse"
        for d in (self.home, self.proj, self.copse, tmp / "tmp"):
            d.mkdir(parents=True, exist_ok=True)
        self.env = {
            "HOME": str(self.home),
            "COPSE_DIR": str(self.copse),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "TMPDIR": str(tmp / "tmp"),
            "LANG": "C.UTF-8",
        }

    def more(self):
        """Checks of this agent's own, after the common scenario."""

    def copse_hooks(self):
        """The Copse-native hooks of the run ($COPSE_DIR/hooks.json)."""
        return COPSE_HOOKS

    def snapshot(self):
        """The agent's hook config as bytes, to compare before install and after uninstall."""
        return self.config.read_bytes()

    def installed_hooks(self):
        """The `hooks` tables of the agent's hook config(s) after install."""
        return [json.loads(self.config.read_text())["hooks"]]

    def cli(self, *argv):
        r = subprocess.run([self.args.bin, *argv], env=self.env, cwd=self.proj,
                           capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise Failure(f"copse-hooks {' '.join(argv)} failed: {r.stderr}")
        return r.stdout

    def runs(self):
        out = self.cli("--json", "log", "--limit", "1000")
        return json.loads(out)["runs"]

    def prompt(self, text, flags=()):
        cmd, extra = self.command(text)
        cmd += list(flags)
        env = dict(self.env, **extra)
        r = subprocess.run(cmd, env=env, cwd=self.proj, capture_output=True, text=True,
                           timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        (self.tmp / "agent.log").open("a").write(
            f"$ {cmd}\nrc={r.returncode}\n--- stdout\n{r.stdout}\n--- stderr\n{r.stderr}\n")
        return r

    def session_ids_in_home(self):
        """Every file name and content under the agent's home dirs, for id lookups."""
        return self.home

    def id_known(self, sid):
        for p in self.home.rglob("*"):
            if p.is_file() and ".copse" not in p.parts:
                if sid in p.name:
                    return True
                try:
                    if p.stat().st_size < 5_000_000 and sid in p.read_text(errors="replace"):
                        return True
                except OSError:
                    pass
        return False


class Claude(Agent):
    name = "claude"

    def setup(self):
        self.config = self.home / ".claude" / "settings.json"
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(json.dumps({"env": {"DISABLE_AUTOUPDATER": "1"}, "hooks": CLAUDE_FORMAT_HOOKS}, indent=2) + "\n")

    def command(self, text):
        return ([str(self.args.agents_bin / "claude"), "-p", text, "--allowedTools", "Bash",
                 "--output-format", "json"],
                {"ANTHROPIC_API_KEY": "sk-ant-dummy", "ANTHROPIC_BASE_URL": self.model.url,
                 "CLAUDE_CODE_MAX_RETRIES": "0", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                 "CLAUDE_CODE_TMPDIR": str(self.tmp / "tmp"), "IS_SANDBOX": "1"})


class Codex(Agent):
    name = "codex"

    def setup(self):
        codex_home = self.home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(
            'model_provider = "mock"\nmodel = "mock-model"\n\n[model_providers.mock]\nname = "mock"\n'
            f'base_url = "{self.model.url}/v1"\nenv_key = "OPENAI_API_KEY"\nwire_api = "responses"\n'
            'request_max_retries = 0\nstream_max_retries = 0\nsupports_websockets = false\n')
        self.config = codex_home / "hooks.json"
        self.config.write_text(json.dumps({"hooks": CLAUDE_FORMAT_HOOKS}, indent=2) + "\n")

    def command(self, text):
        return ([str(self.args.agents_bin / "codex"), "exec", "--dangerously-bypass-hook-trust",
                 "-s", "workspace-write", "--skip-git-repo-check", text],
                {"OPENAI_API_KEY": "sk-dummy", "CODEX_HOME": str(self.home / ".codex")})


class Gemini(Agent):
    name = "gemini"
    adopt = False  # no Gemini dialect on this branch: a Claude-format hook stands in

    def setup(self):
        self.config = self.home / ".gemini" / "settings.json"
        self.config.parent.mkdir(parents=True, exist_ok=True)
        self.config.write_text(json.dumps({
            "general": {"retryFetchErrors": False, "maxAttempts": 1},
            "security": {"auth": {"selectedType": "gemini-api-key"}},
        }, indent=2) + "\n")
        claude = self.home / ".claude" / "settings.json"
        claude.parent.mkdir(parents=True, exist_ok=True)
        claude.write_text(json.dumps({"hooks": CLAUDE_FORMAT_HOOKS}, indent=2) + "\n")
        (self.copse / "settings.json").write_text(json.dumps({"shim": {"gemini": {"also": ["claude"]}}}))

    def command(self, text):
        return ([str(self.args.agents_bin / "gemini"), "-m", "gemini-2.5-flash", "-p", text, "--yolo"],
                {"GEMINI_API_KEY": "dummy", "GOOGLE_GEMINI_BASE_URL": self.model.url,
                 "GEMINI_CLI_TRUST_WORKSPACE": "true"})


class Copilot(Agent):
    """GitHub Copilot CLI, offline: its BYOK provider (type "anthropic") is the fake model,
    and COPILOT_OFFLINE=true keeps it off GitHub (no sign-in needed).

    `install --agent copilot --adopt` moves the user's own Copilot hook file out of
    ~/.copilot/hooks/ into copse's care: copse runs it (logged under Copilot's session)
    and uninstall puts it back byte-identical; the context comes from a Copse-native
    prompt hook through the shim (a Copse sessionStart answer carries no context)."""
    name = "copilot"
    adopt = True
    adopted_dialect = "copilot"
    own_hooks_via_copse = True

    def setup(self):
        self.hooks_dir = self.home / ".copilot" / "hooks"
        self.hooks_dir.mkdir(parents=True, exist_ok=True)
        own = COPILOT_FORMAT_HOOKS
        if not self.adopt:
            own = dict(own, hooks={"preToolUse": own["hooks"]["preToolUse"]})
        (self.hooks_dir / "guard.json").write_text(json.dumps(own, indent=2) + "\n")
        self.config = self.hooks_dir / "copse-hooks.json"

    def copse_hooks(self):
        if self.adopt:
            return COPSE_HOOKS
        context = {"command": "cat >/dev/null; printf '%s' '{\"injectContext\":\"" + CTX + "\"}'"}
        prompt = COPSE_HOOKS["hooks"]["beforeSubmitPrompt"] + [context]
        return dict(COPSE_HOOKS, hooks=dict(COPSE_HOOKS["hooks"], beforeSubmitPrompt=prompt))

    def snapshot(self):
        return {p.name: p.read_bytes() for p in sorted(self.hooks_dir.iterdir())}

    def more(self):
        """The project-scope shim (.github/hooks/copse-hooks.json): Copilot runs a project's
        hooks only in a folder the user trusts (--trust-folder here), so the same deny holds
        there and nowhere else."""
        print("  project install (.github/hooks), with and without Copilot's folder trust")
        self.cli("install", "--agent", "copilot", "--project")
        entry = self.proj / ".github" / "hooks" / "copse-hooks.json"
        check("shim --agent copilot" in entry.read_text(), "the shim is in .github/hooks/copse-hooks.json")
        for trusted in (True, False):
            label = "trusted" if trusted else "untrusted"
            target = self.proj / f"project-{label}.txt"
            mark = self.model.mark()
            self.prompt(f"RUN: echo hi > {target.name} # copse-forbidden END",
                        flags=["--trust-folder"] if trusted else [])
            calls = model_calls(self.model.since(mark))
            if trusted:
                check(not target.exists() and "denied by a copse e2e hook" in json.dumps(calls[-1]["body"]),
                      "in a trusted folder the project shim denies and the model gets the reason")
            else:
                check(target.exists(), "in an untrusted folder Copilot skips the project's hooks (the command ran)")
        self.cli("uninstall", "--agent", "copilot", "--project")
        check(not entry.exists(), "uninstall --project removed the file it wrote")

    def installed_hooks(self):
        return [json.loads(p.read_text())["hooks"] for p in sorted(self.hooks_dir.glob("*.json"))]

    def command(self, text):
        return ([str(self.args.agents_bin / "copilot"), "-p", text, "--allow-all-tools", "--no-color"],
                {"COPILOT_PROVIDER_BASE_URL": self.model.url, "COPILOT_PROVIDER_TYPE": "anthropic",
                 "COPILOT_PROVIDER_API_KEY": "sk-dummy", "COPILOT_MODEL": "claude-sonnet-4.6",
                 "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false"})


def model_calls(reqs):
    return [r for r in reqs if any(k in r["path"] for k in ("/messages", "enerateContent", "/responses"))
            and not r["path"].endswith("count_tokens")]


def scenario(agent):
    agent.setup()
    (agent.copse / "hooks.json").write_text(json.dumps(agent.copse_hooks(), indent=2))
    pristine = agent.snapshot()

    print("  install")
    agent.cli("install", "--agent", agent.name, *(["--adopt"] if agent.adopt else []))
    installed = agent.installed_hooks()
    check(any("shim --agent " + agent.name in json.dumps(v) for hooks in installed for v in hooks.values()),
          "the shim is in the agent's config")
    if agent.adopt:
        check((agent.copse / "adopted" / agent.name).is_dir(), "the agent's hooks were adopted")
        check(all("adopted-forbidden" not in json.dumps(v) for hooks in installed for v in hooks.values()),
              "only shim entries are left in the agent's config")

    print("  blocked prompt")
    mark = agent.model.mark()
    agent.prompt("BLOCKME please say hello")
    check(model_calls(agent.model.since(mark)) == [], "the model received nothing")
    denies = [r for r in agent.runs() if r["canonical"] == "beforeSubmitPrompt" and r["outcome"] == "deny"]
    check(len(denies) == 1, "the Copse prompt hook's deny is in the audit log")

    for label, marker, who, reason in (
            ("copse-denied", "copse-forbidden", "dialect copse", "denied by a copse e2e hook"),
            ("adopted-denied", "adopted-forbidden", f"dialect {agent.adopted_dialect}",
             "denied by an adopted hook")):
        if label == "adopted-denied" and not agent.own_hooks_via_copse:
            who = f"the agent's own {agent.adopted_dialect} hook, beside the shim"
        print(f"  denied command ({who})")
        target = agent.proj / f"{label}.txt"
        mark = agent.model.mark()
        agent.prompt(f"RUN: echo hi > {label}.txt # {marker} END")
        calls = model_calls(agent.model.since(mark))
        check(len(calls) >= 2 and reason in json.dumps(calls[-1]["body"]),
              "the model asked for the command and got the deny's reason back")
        check(not target.exists(), f"{label}.txt never appeared")
        logged = any(r["outcome"] == "deny" and r["canonical"] == "toolGate" and marker in r["command"]
                     for r in agent.runs())
        if label == "adopted-denied" and not agent.own_hooks_via_copse:
            check(not logged, "the agent ran its own hook itself (not in the audit log)")
        else:
            check(logged, "the deny is in the audit log")

    print("  denied command (the built-in guard, no hook of the user objects)")
    key = agent.home / ".ssh" / "id_ed25519"
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\ne2e-not-a-key\n")
    target = agent.proj / "leaked.txt"
    mark = agent.model.mark()
    agent.prompt("RUN: cat ~/.ssh/id_ed25519 > leaked.txt END")
    calls = model_calls(agent.model.since(mark))
    check(len(calls) >= 2 and "copse guard rule" in json.dumps(calls[-1]["body"]),
          "the model asked for the read and got the guard's reason back")
    check(not target.exists(), "leaked.txt never appeared")
    check(any(r["kind"] == "guard" and r["decision"] == "deny" and r["command"].startswith("guard rule secrets.")
              for r in agent.runs()), "the guard's refusal is in the audit log as a run of kind guard")

    print("  allowed command, after-tool and stop hooks, injected context")
    mark = agent.model.mark()
    before = {r["run_id"] for r in agent.runs()}
    agent.prompt("RUN: echo ok > allowed.txt END")
    check((agent.proj / "allowed.txt").exists(), "the allowed command ran")
    new = [r for r in agent.runs() if r["run_id"] not in before]
    starts = [r for r in new if r["canonical"] == "sessionStart"]
    check(len(starts) >= 1, "session start hooks ran")
    sid = starts[0]["session_id"]
    check(agent.id_known(sid), f"the audit log's session id {sid} is the agent's own")
    check(any(r["canonical"] == "afterToolUse" and r["session_id"] == sid for r in new),
          "the after-tool hook is recorded under that session id")
    check(any(r["canonical"] == "stop" and r["session_id"] == sid for r in new),
          "the stop hook is recorded under that session id")
    check(any(CTX in json.dumps(c["body"]) for c in model_calls(agent.model.since(mark))),
          "the session-start context reached the model" if agent.own_hooks_via_copse
          else "the prompt hook's context reached the model")

    served = json.loads((agent.copse / "shim" / "served" / f"{agent.name}.json").read_text())
    check(served["path"] == "daemon",
          f"the shim's calls were served by the daemon it started (served: {served})")
    check(json.loads(agent.cli("--json", "daemon", "status"))["status"] == "running",
          "the daemon runs")

    print("  uninstall")
    agent.cli("uninstall", "--agent", agent.name)
    check(agent.snapshot() == pristine, "the agent's config is byte-identical to before")
    agent.more()


AGENTS = (Claude, Gemini, Codex, Copilot)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True, type=Path)
    ap.add_argument("--agents-bin", required=True, type=Path)
    ap.add_argument("--only", action="append")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    args = ap.parse_args()
    args.bin = args.bin.resolve()
    failed = []
    unknown = set(args.only or ()) - {cls.name for cls in AGENTS}
    if unknown:
        ap.error(f"unknown agent(s): {', '.join(sorted(unknown))} (known: {', '.join(c.name for c in AGENTS)})")
    for cls in AGENTS:
        if args.only and cls.name not in args.only:
            continue
        tmp = Path(tempfile.mkdtemp(prefix=f"copse-e2e-{cls.name}-"))
        print(f"{cls.name} ({tmp})")
        model = Model(tmp)
        started = time.time()
        try:
            scenario(cls(args, tmp, model))
            print(f"  PASS {cls.name} in {time.time() - started:.1f}s")
        except (Failure, subprocess.TimeoutExpired) as e:
            failed.append(cls.name)
            print(f"  FAIL {cls.name}: {e}")
            log = tmp / "agent.log"
            if log.exists():
                print(log.read_text()[-4000:])
        finally:
            model.stop()
            # The daemon the shim started on demand (HOME and COPSE_DIR are this run's).
            subprocess.run([args.bin, "daemon", "stop"], capture_output=True, timeout=30,
                           env={"HOME": str(tmp / "home"), "COPSE_DIR": str(tmp / "home" / ".copse"),
                                "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
            if not args.keep and cls.name not in failed:
                shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        print(f"FAILED: {', '.join(failed)}")
        sys.exit(1)
    print("all agents passed")


if __name__ == "__main__":
    main()
