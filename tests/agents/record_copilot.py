#!/usr/bin/env python3
"""Records the real GitHub Copilot CLI's hook payloads and answers, offline.

Registers a logging hook for every Copilot hook event in a throwaway HOME
($HOME/.copilot/hooks/record.json) and in the project (.github/hooks/record.json),
drives `copilot -p` against the fake model server (fake_model.py, Copilot's BYOK
provider type "anthropic") through a shell command, file view / create / edit, a failing
tool, a sub-agent, a model error and a permission prompt, then tries each answer a hook
can give and notes what happened (did the tool run, what text reached the model, the
exit code). Writes the result, machine paths scrubbed to placeholders, as JSON:
crates/copse-hooks/tests/fixtures/copilot-recorded.json. A human summary lives in that
file's "notes".

Usage: record_copilot.py --copilot DIR/copilot [--out FILE] [--keep]
(run.sh installs copilot into ~/.cache/copse-hooks-agents/node_modules/.bin).
Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import e2e  # noqa: E402  (Model, the fake model server's handle)

EVENTS = ["sessionStart", "sessionEnd", "userPromptSubmitted", "preToolUse", "postToolUse",
          "postToolUseFailure", "permissionRequest", "agentStop", "subagentStart",
          "subagentStop", "errorOccurred", "notification", "preCompact"]

# Writes its stdin and environment to $REC_OUT/<ns>-<scope>-<event>.{json,env}; answers
# with $REC_RESPOND/<scope>-<event>.out (stdout; removed after one use if .once exists),
# .err (stderr), .sleep (seconds, after the answer) and .rc (exit code).
HOOK_SH = r"""#!/bin/bash
event=$1 scope=$2
base="$REC_OUT/$(date +%s%N)-$scope-$event"
cat > "$base.json"
env > "$base.env"
pwd > "$base.cwd"
resp="$REC_RESPOND/$scope-$event"
if [ -f "$resp.out" ]; then cat "$resp.out"; [ -f "$resp.once" ] && rm -f "$resp.out" "$resp.once"; fi
[ -f "$resp.err" ] && cat "$resp.err" >&2
[ -f "$resp.sleep" ] && sleep "$(cat "$resp.sleep")"
[ -f "$resp.rc" ] && exit "$(cat "$resp.rc")"
exit 0
"""


class Recorder:
    def __init__(self, copilot, tmp):
        self.copilot = str(copilot)
        self.tmp = tmp
        self.home = tmp / "home"
        self.proj = tmp / "proj"
        self.out = tmp / "out"
        self.respond = tmp / "respond"
        self.hook = tmp / "hook.sh"
        for d in (self.home, self.out, self.respond, tmp / "tmp"):
            d.mkdir(parents=True, exist_ok=True)
        self.hook.write_text(HOOK_SH)
        self.hook.chmod(0o755)
        self.model = e2e.Model(tmp)
        user_hooks = self.home / ".copilot" / "hooks"
        user_hooks.mkdir(parents=True)
        (user_hooks / "record.json").write_text(json.dumps(self.config("user"), indent=2))

    def config(self, scope):
        return {"version": 1, "hooks": {
            e: [{"type": "command", "bash": f"{self.hook} {e} {scope}", "timeoutSec": 30}]
            for e in EVENTS}}

    def env(self, extra=None):
        env = {
            "HOME": str(self.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8", "TMPDIR": str(self.tmp / "tmp"),
            "REC_OUT": str(self.out), "REC_RESPOND": str(self.respond),
            "COPILOT_PROVIDER_BASE_URL": self.model.url, "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "sk-dummy", "COPILOT_MODEL": "claude-sonnet-4.6",
            "COPILOT_OFFLINE": "true",
        }
        env.update(extra or {})
        return env

    def run(self, prompt, flags=("--allow-all-tools",), answers=None, project_hooks=False,
            seed=None, env=None, timeouts=None, extra=None):
        """One fresh project and session; returns what happened."""
        shutil.rmtree(self.proj, ignore_errors=True)
        self.proj.mkdir()
        for name, text in (seed or {}).items():
            (self.proj / name).write_text(text)
        if project_hooks:
            (self.proj / ".github" / "hooks").mkdir(parents=True)
            config = self.config("project")
            for event, secs in (timeouts or {}).items():
                config["hooks"][event][0]["timeoutSec"] = secs
            (self.proj / ".github" / "hooks" / "record.json").write_text(json.dumps(config))
        user_config = self.config("user")
        for event, secs in (timeouts or {}).items():
            user_config["hooks"][event][0]["timeoutSec"] = secs
        for event, fields in (extra or {}).items():
            hook = user_config["hooks"][event][0]
            for k, v in fields.items():
                if v is None:
                    hook.pop(k, None)
                else:
                    hook[k] = str(self.hook) if v == "<HOOK>" else v
        (self.home / ".copilot" / "hooks" / "record.json").write_text(json.dumps(user_config))
        for d in (self.out, self.respond):
            shutil.rmtree(d)
            d.mkdir()
        for name, value in (answers or {}).items():
            (self.respond / name).write_text(value)
        mark = self.model.mark()
        r = subprocess.run([self.copilot, "-p", prompt, "--no-color", *flags],
                           env=self.env(env), cwd=self.proj, capture_output=True, text=True,
                           timeout=180, stdin=subprocess.DEVNULL)
        fired = []
        for f in sorted(self.out.glob("*.json")):
            _, scope, event = f.stem.split("-", 2)
            fired.append({"scope": scope, "event": event, "payload": json.loads(f.read_text()),
                          "env": env_of(f.with_suffix(".env")),
                          "cwd": f.with_suffix(".cwd").read_text().strip()})
        requests = [q["body"] for q in self.model.since(mark) if q["path"].endswith("/messages")]
        return {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr, "fired": fired,
                "requests": requests, "files": sorted(p.name for p in self.proj.iterdir())}


def env_of(path):
    env = {}
    for line in path.read_text().splitlines():
        if "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    return env


def last_tool_result(requests):
    """The text of the last tool_result the model received, if any."""
    for body in reversed(requests):
        for block in reversed(body["messages"][-1]["content"]):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                content = block.get("content")
                if isinstance(content, list):
                    content = " ".join(c.get("text", "") for c in content if isinstance(c, dict))
                return content
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--copilot", required=True, type=Path)
    ap.add_argument("--out", type=Path,
                    default=HERE.parent.parent / "crates/copse-hooks/tests/fixtures/copilot-recorded.json")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="copse-copilot-rec-"))
    rec = Recorder(args.copilot.resolve(), tmp)
    try:
        record(rec, args)
    finally:
        rec.model.stop()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def record(rec, args):
    version = subprocess.run([str(rec.copilot), "--version"], env=rec.env(), capture_output=True,
                             text=True, timeout=60).stdout.splitlines()[0].strip()
    proj = str(rec.proj)
    events, orders, answers = {}, {}, {}

    def keep(run, name, event, scope="user", nth=0, where=None):
        hits = [f for f in run["fired"] if f["event"] == event and f["scope"] == scope
                and (where is None or where(f["payload"]))]
        if len(hits) <= nth:
            raise SystemExit(f"record_copilot: {name}: no {scope} {event} hook fired "
                             f"(fired: {[f['event'] for f in run['fired']]})")
        events[name] = hits[nth]["payload"]
        return hits[nth]

    # 1. A shell command, with user and (trusted) project hooks.
    run = rec.run("RUN: echo hi > a.txt END", flags=("--allow-all-tools", "--trust-folder"),
                  project_hooks=True)
    orders["shell command, --allow-all-tools --trust-folder"] = [
        f"{f['scope']}:{f['event']}" for f in run["fired"]]
    for e in ("sessionStart", "userPromptSubmitted", "preToolUse", "permissionRequest",
              "postToolUse", "agentStop", "sessionEnd"):
        keep(run, e, e)
    pre_user = next(f for f in run["fired"] if f["event"] == "preToolUse" and f["scope"] == "user")
    pre_proj = next(f for f in run["fired"] if f["event"] == "preToolUse" and f["scope"] == "project")
    hook_env = {"user": pre_user["env"], "project": pre_proj["env"]}
    hook_cwd = {"user": pre_user["cwd"], "project": pre_proj["cwd"]}
    for scope, env in hook_env.items():
        env["PATH"] = "<PATH, as copilot got it>"
        hook_env[scope] = dict(sorted(env.items()))

    # 2. File tools and a failing tool.
    seed = {"f.txt": "line one\nline two\n"}
    run = rec.run(f'TOOL: view {{"path": "{proj}/f.txt"}} END', seed=seed)
    keep(run, "preToolUse/view", "preToolUse")
    keep(run, "postToolUse/view", "postToolUse")
    orders["view"] = [f["event"] for f in run["fired"]]
    run = rec.run(f'TOOL: create {{"path": "{proj}/new.txt", "file_text": "created\\n"}} END', seed=seed)
    keep(run, "preToolUse/create", "preToolUse")
    keep(run, "permissionRequest/create", "permissionRequest")
    keep(run, "postToolUse/create", "postToolUse")
    run = rec.run(f'TOOL: edit {{"path": "{proj}/f.txt", "old_str": "line two", "new_str": "line 2"}} END',
                  seed=seed)
    keep(run, "preToolUse/edit", "preToolUse")
    keep(run, "permissionRequest/edit", "permissionRequest")
    keep(run, "postToolUse/edit", "postToolUse")
    run = rec.run(f'TOOL: view {{"path": "{proj}/missing.txt"}} END')
    keep(run, "postToolUseFailure", "postToolUseFailure")
    run = rec.run("RUN: echo failing >&2; exit 3 END")
    keep(run, "postToolUse/shell-exit-3", "postToolUse")

    # 3. No --allow-all-tools: the permission prompt that -p cannot show.
    run = rec.run("RUN: echo hi > a.txt END", flags=())
    keep(run, "notification", "notification")
    keep(run, "permissionRequest/no-allow-all", "permissionRequest")
    answers["no hook answer, no --allow-all-tools"] = outcome(run, "a.txt")

    # 4. A sub-agent that runs a shell command.
    run = rec.run('TOOL: task {"description": "probe subagent", "prompt": "RUN\\u003a echo sub > sub.txt END", '
                  '"agent_type": "general-purpose", "name": "probe"} END')
    orders["sub-agent (task tool) running a shell command"] = [f["event"] for f in run["fired"]]
    keep(run, "subagentStart", "subagentStart")
    keep(run, "subagentStop", "subagentStop")
    keep(run, "preToolUse/task", "preToolUse", where=lambda p: p.get("toolName") == "task")
    keep(run, "userPromptSubmitted/subagent", "userPromptSubmitted", where=lambda p: "agentId" in p)
    keep(run, "preToolUse/subagent", "preToolUse", where=lambda p: "agentId" in p)
    keep(run, "permissionRequest/subagent", "permissionRequest", where=lambda p: "agentId" in p)
    keep(run, "agentStop/subagent", "agentStop", where=lambda p: "agentId" in p)

    # 5. A model error.
    run = rec.run("MODEL-ERROR-PLEASE")
    keep(run, "errorOccurred", "errorOccurred")
    orders["model error"] = [f["event"] for f in run["fired"]]

    # 6. Answers.
    deny = '{"permissionDecision":"deny","permissionDecisionReason":"REASON-1"}'
    cases = [
        ("preToolUse: deny JSON", {"user-preToolUse.out": deny}, {}),
        ("preToolUse: exit 2, stderr", {"user-preToolUse.err": "STDERR-2", "user-preToolUse.rc": "2"}, {}),
        ("preToolUse: exit 1", {"user-preToolUse.rc": "1"}, {}),
        ("preToolUse: exit 1 with deny JSON", {"user-preToolUse.out": deny, "user-preToolUse.rc": "1"}, {}),
        ("preToolUse: stdout not JSON", {"user-preToolUse.out": "not json"}, {}),
        ("preToolUse: ask", {"user-preToolUse.out": '{"permissionDecision":"ask","permissionDecisionReason":"REASON-ASK"}'}, {}),
        ("preToolUse: deny JSON, then sleeps past timeoutSec 2",
         {"user-preToolUse.out": deny, "user-preToolUse.sleep": "5"}, {"timeouts": {"preToolUse": 2}}),
        ("preToolUse: allow, no --allow-all-tools", {"user-preToolUse.out": '{"permissionDecision":"allow"}'},
         {"flags": ()}),
        ("preToolUse: allow with modifiedArgs",
         {"user-preToolUse.out": '{"permissionDecision":"allow","modifiedArgs":{"command":"echo modified > b.txt","description":"x"}}'}, {}),
        ("preToolUse: exit 2 with deny JSON", {"user-preToolUse.out": deny, "user-preToolUse.rc": "2"}, {}),
        ("preToolUse: deny JSON, matcher \"view|edit\" (a bash call)", {"user-preToolUse.out": deny},
         {"extra": {"preToolUse": {"matcher": "view|edit"}}}),
        ("preToolUse: deny JSON, matcher \"bas\" (a bash call)", {"user-preToolUse.out": deny},
         {"extra": {"preToolUse": {"matcher": "bas"}}}),
        ("preToolUse: deny JSON, matcher \"bash\"", {"user-preToolUse.out": deny},
         {"extra": {"preToolUse": {"matcher": "bash"}}}),
        ("preToolUse: deny JSON, hook given as exec + args", {"user-preToolUse.out": deny},
         {"extra": {"preToolUse": {"bash": None, "exec": "<HOOK>", "args": ["preToolUse", "user"]}}}),
        ("permissionRequest: deny", {"user-permissionRequest.out": '{"behavior":"deny","message":"MESSAGE-3"}'}, {}),
        ("permissionRequest: deny with interrupt", {"user-permissionRequest.out":
                                                    '{"behavior":"deny","message":"MESSAGE-3","interrupt":true}'}, {}),
        ("permissionRequest: exit 2", {"user-permissionRequest.rc": "2"}, {}),
        ("permissionRequest: exit 1", {"user-permissionRequest.rc": "1"}, {}),
        ("permissionRequest: allow, no --allow-all-tools", {"user-permissionRequest.out": '{"behavior":"allow"}'},
         {"flags": ()}),
        ("postToolUse: modifiedResult and additionalContext",
         {"user-postToolUse.out": '{"modifiedResult":{"resultType":"success","textResultForLlm":"MODIFIED-4"},"additionalContext":"CONTEXT-5"}'}, {}),
        ("user allows, project denies", {"user-preToolUse.out": '{"permissionDecision":"allow"}',
                                         "project-preToolUse.out": deny},
         {"flags": ("--allow-all-tools", "--trust-folder"), "project_hooks": True}),
        ("user denies, project allows", {"user-preToolUse.out": deny,
                                         "project-preToolUse.out": '{"permissionDecision":"allow"}'},
         {"flags": ("--allow-all-tools", "--trust-folder"), "project_hooks": True}),
        ("project hooks without folder trust", {"project-preToolUse.out": deny},
         {"project_hooks": True}),
        ("project hooks, COPILOT_ALLOW_ALL=true", {"project-preToolUse.out": deny},
         {"project_hooks": True, "flags": (), "env": {"COPILOT_ALLOW_ALL": "true"}}),
    ]
    for label, files, opts in cases:
        run = rec.run("RUN: echo hi > a.txt END", answers=files, **opts)
        answers[label] = outcome(run, "a.txt")
        if label.startswith("preToolUse: allow with modifiedArgs"):
            answers[label]["b.txt exists"] = "b.txt" in run["files"]

    run = rec.run("say hello", answers={"user-userPromptSubmitted.out": '{"decision":"block","reason":"REASON-6"}'})
    answers["userPromptSubmitted: decision block"] = outcome(run, None)
    run = rec.run("say hello", answers={"user-userPromptSubmitted.err": "STDERR-7", "user-userPromptSubmitted.rc": "2"})
    answers["userPromptSubmitted: exit 2, stderr"] = outcome(run, None)
    run = rec.run("say hello", answers={"user-sessionStart.out": '{"additionalContext":"CONTEXT-8"}',
                                        "user-userPromptSubmitted.out": '{"additionalContext":"CONTEXT-9"}'})
    answers["sessionStart and userPromptSubmitted: additionalContext"] = outcome(run, None, look_for=("CONTEXT-8", "CONTEXT-9"))
    run = rec.run("say hello", answers={"user-agentStop.out": '{"decision":"block","reason":"CONTINUE-10"}',
                                        "user-agentStop.once": ""})
    answers["agentStop: decision block (once)"] = outcome(run, None, look_for=("CONTINUE-10",))
    keep(run, "agentStop/continued", "agentStop", nth=1)
    run = rec.run('TOOL: task {"description": "probe subagent", "prompt": "say hi", '
                  '"agent_type": "general-purpose", "name": "probe"} END',
                  answers={"user-subagentStop.out": '{"decision":"block","reason":"CONTINUE-11"}',
                           "user-subagentStop.once": ""})
    answers["subagentStop: decision block (once)"] = outcome(run, None, look_for=("CONTINUE-11",))

    scrub = Scrubber(rec)
    doc = {
        "agent": "GitHub Copilot CLI",
        "package": "@github/copilot@" + version.split()[-1].rstrip("."),
        "version_output": version,
        "recorded": datetime.date.today().isoformat(),
        "recorder": "tests/agents/record_copilot.py (real binary, offline, against tests/agents/fake_model.py)",
        "placeholders": scrub.legend,
        "driven_with": {
            "argv": ["copilot", "-p", "<prompt>", "--no-color", "--allow-all-tools"],
            "env": {k: v for k, v in rec.env().items() if k.startswith("COPILOT_")} | {"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:<port>"},
            "user hooks": "<HOME>/.copilot/hooks/record.json",
            "project hooks": "<PROJECT>/.github/hooks/record.json (loaded only with --trust-folder or COPILOT_ALLOW_ALL=true)",
        },
        "notes": [
            "Payloads are camelCase with no event name in them (notification alone adds hook_event_name "
            "\"Notification\"; permissionRequest adds hookName); timestamp is milliseconds since the epoch.",
            "preToolUse toolArgs is an object; permissionRequest has toolInput, and names create and edit both \"edit\" "
            "with {file_path, diff}; a read-only view gets no permissionRequest.",
            "Inside a sub-agent, preToolUse, userPromptSubmitted and agentStop carry the sub-agent's id as sessionId "
            "(plus agentId, agentType, parentAgentId); permissionRequest and subagentStart/Stop carry the parent's.",
            "preToolUse fails closed on a non-zero exit (2 or other) and open on a timeout or on stdout that is not JSON.",
            "User hooks ($HOME/.copilot/hooks/*.json) always load; project hooks (.github/hooks/*.json) only in a trusted "
            "folder. User hooks run first, then project hooks, one after the other.",
        ],
        "events": events,
        "order": orders,
        "hook_env": hook_env,
        "hook_cwd": hook_cwd,
        "answers": answers,
    }
    doc = scrub(doc)
    args.out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {args.out}: {len(events)} payloads, {len(answers)} answers ({version})")


def outcome(run, marker, look_for=()):
    out = {"copilot exit code": run["rc"], "model calls": len(run["requests"]),
           "hooks fired": [f"{f['scope']}:{f['event']}" for f in run["fired"]]}
    if marker:
        out["tool ran"] = marker in run["files"]
        out["model saw"] = last_tool_result(run["requests"])
    for text in look_for:
        out[f"{text} reached the model"] = any(text in json.dumps(b) for b in run["requests"])
    shown = [line for line in (run["stdout"] + run["stderr"]).splitlines() if line.startswith(("!", "✗", "  └"))]
    if shown:
        out["printed"] = shown
    return out


class Scrubber:
    """Machine paths and ids to placeholders, the same everywhere in the document."""

    def __init__(self, rec):
        self.pairs = [(str(rec.proj), "<PROJECT>"), (str(rec.hook), "<HOOK>"),
                      (str(rec.home), "<HOME>"), (str(rec.tmp), "<TMP>"),
                      (rec.model.url, "http://127.0.0.1:<port>")]
        self.ids = {}
        self.legend = {"<PROJECT>": "the session's working directory",
                       "<HOME>": "the throwaway $HOME", "<HOOK>": "the recording hook script",
                       "<TMP>": "the recorder's scratch directory",
                       "<SESSION-n>": "a session id (a UUID), numbered in order of appearance",
                       "<AGENT-n>": "a sub-agent id (a UUID)"}

    def __call__(self, value, key=None):
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, str):
            for real, placeholder in self.pairs:
                value = value.replace(real, placeholder)
            return self.uuids(value, key)
        return value

    def uuids(self, text, key):
        def repl(m):
            u = m.group(0)
            if u not in self.ids:
                kind = "AGENT" if key == "agentId" else "SESSION"
                n = sum(1 for v in self.ids.values() if v.startswith(f"<{kind}-")) + 1
                self.ids[u] = f"<{kind}-{n}>"
            return self.ids[u]
        return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", repl, text)


if __name__ == "__main__":
    main()
