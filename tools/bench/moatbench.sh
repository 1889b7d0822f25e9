#!/usr/bin/env bash
# tools/bench/moatbench.sh — score copse-hooks against the peer benchmark MoatBench.
#
# MoatBench ships in the `openmoat` crate: `openmoat bench --hook CMD --host H`
# sends its bundled scenarios to any hook command as host H's hook payloads and
# reads the replies by H's hook protocol; `openmoat bench --host H` scores
# OpenMoat's own default policy the same way. This script only runs the
# benchmark and counts: nothing of OpenMoat's scenarios or rules is kept here.
#
# Usage:
#   tools/bench/moatbench.sh [--hosts claude-code,codex,...] [--out DIR]
#
#   COPSE_HOOKS_BIN     the copse-hooks binary to score (default: target/release/copse-hooks
#                       of this checkout; the script builds nothing, so build it first:
#                       `cargo build --release -p copse-hooks`)
#   COPSE_BENCH_CACHE   where openmoat is installed and the runs live
#                       (default: ~/.cache/copse-hooks-bench; must not be under /tmp)
#   --hosts a,b         only these hosts (default: all five below)
#   --out DIR           also keep the raw `openmoat bench --format json` reports in DIR
#
# openmoat is installed once per pinned version with
#   cargo install openmoat --locked --version $OPENMOAT_VERSION --root $CACHE/openmoat
# (CARGO_TARGET_DIR=$CACHE/target, so no checkout's target/ is touched; a few minutes of CPU).
#
# The bench gives the hook only PATH, HOME (its throw-away, the home its payloads'
# paths are under) and USERPROFILE. The hook command keeps that HOME, as an agent's
# hook would, and carries its own COPSE_DIR: a throw-away directory made here in which
# `copse-hooks enable` has turned external hooks on (one per host, see below). For copilot-cli it also sets
# COPSE_HOOKS_EVENT=preToolUse, as the entry `copse-hooks install --agent copilot` writes
# does. The hook commands used are printed on stderr.
#
# Columns: blocked / asked are runs (one scenario on one host) whose strictest
# answer, as the host reads it, was a block / an ask; caught = blocked + asked, out
# of the threat scenarios (every category but `benign` and `workflows`). FP = benign
# runs answered stricter than allow or passthrough (the bench's false positives).
# errors = runs whose strictest answer was a failed hook (non-protocol exit, bad
# output, timeout), in any category. workflow asks = asks in the everyday-development
# workflows against the asks the benchmark expects there. OpenMoat's "sandboxed" runs
# (allowed by its hook, held by the host OS sandbox it installs) are not counted as
# caught; they are shown in their own column. For OpenMoat the bench counts the verdicts
# its audit log records (and lists as mismatches any reply the host would read otherwise);
# for a --hook it counts the host's reading of the reply.
set -euo pipefail

OPENMOAT_VERSION=0.12.1
ALL_HOSTS=(claude-code codex gemini-cli cursor copilot-cli)

die() { echo "moatbench.sh: $*" >&2; exit 1; }

agent_for() {
    case "$1" in
        claude-code) echo claude ;;
        codex) echo codex ;;
        gemini-cli) echo gemini ;;
        cursor) echo cursor ;;
        copilot-cli) echo copilot ;;
        *) return 1 ;;
    esac
}

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
hosts=("${ALL_HOSTS[@]}")
out_dir=

while [ $# -gt 0 ]; do
    case "$1" in
        --hosts) [ $# -ge 2 ] || die "--hosts needs a comma-separated list"
                 IFS=, read -r -a hosts <<<"$2"; shift 2 ;;
        --hosts=*) IFS=, read -r -a hosts <<<"${1#--hosts=}"; shift ;;
        --out) [ $# -ge 2 ] || die "--out needs a directory"; out_dir=$2; shift 2 ;;
        --out=*) out_dir=${1#--out=}; shift ;;
        -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $1 (see --help)" ;;
    esac
done
[ ${#hosts[@]} -gt 0 ] || die "--hosts is empty"
for h in "${hosts[@]}"; do
    agent_for "$h" >/dev/null || die "unknown host '$h' (known: ${ALL_HOSTS[*]})"
done
command -v python3 >/dev/null || die "python3 is needed to read the reports"

# --- the binary under test -------------------------------------------------------
bin=${COPSE_HOOKS_BIN:-$repo_root/target/release/copse-hooks}
case "$bin" in /*) ;; *) bin=$PWD/$bin ;; esac
[ -x "$bin" ] || die "no copse-hooks binary at $bin: build it first (cargo build --release -p copse-hooks) or point COPSE_HOOKS_BIN at one"

# --- openmoat, installed once per pinned version -----------------------------------
cache=${COPSE_BENCH_CACHE:-$HOME/.cache/copse-hooks-bench}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd -P)
case "$cache/" in /tmp/*) die "COPSE_BENCH_CACHE ($cache) is under /tmp, where OpenMoat refuses to install its hooks" ;; esac
om=$cache/openmoat/bin/openmoat
installed=$("$om" --version 2>/dev/null | awk '{print $2}' || true)
if [ "$installed" != "$OPENMOAT_VERSION" ]; then
    command -v cargo >/dev/null || die "cargo is needed to install openmoat $OPENMOAT_VERSION"
    echo "moatbench.sh: installing openmoat $OPENMOAT_VERSION into $cache/openmoat (a few minutes)" >&2
    CARGO_TARGET_DIR=$cache/target cargo install openmoat --locked --force \
        --version "$OPENMOAT_VERSION" --root "$cache/openmoat" >&2
    installed=$("$om" --version | awk '{print $2}')
    [ "$installed" = "$OPENMOAT_VERSION" ] || die "installed openmoat reports version '$installed', wanted $OPENMOAT_VERSION"
fi

# --- a throw-away home with external hooks on --------------------------------------
mkdir -p "$cache/runs" "$cache/work"
run=$(mktemp -d "$cache/runs/run.XXXXXX")
trap 'rm -rf "$run"' EXIT
home=$run/home
mkdir -p "$home"
# One COPSE_DIR per host: each bench run has a home of its own, and the user daemon a
# COPSE_DIR starts keeps the HOME of the call that started it (as one user's agents
# share one HOME, an agent's environment cannot move the daemon's).
enable_in() {
    env -i PATH="$PATH" HOME="$home" COPSE_DIR="$1" "$bin" enable >"$run/enable.log" 2>&1 \
        || { cat "$run/enable.log" >&2; die "'$bin enable' failed in the throw-away home"; }
}
stop_daemon() {
    env -i PATH="$PATH" HOME="$home" COPSE_DIR="$1" "$bin" daemon stop >/dev/null 2>&1 || true
}

# --- the runs -------------------------------------------------------------------------
# openmoat runs from a directory under the cache (not /tmp); its own `init` would
# refuse a binary under /tmp, which is why it is installed under the cache too.
cd "$cache/work"
for h in "${hosts[@]}"; do
    agent=$(agent_for "$h")
    # Copilot's payload names no event, so the entry `copse-hooks install --agent copilot`
    # writes sets COPSE_HOOKS_EVENT for it (without it the shim fails closed: exit 2).
    event=
    [ "$agent" = copilot ] && event=' COPSE_HOOKS_EVENT=preToolUse'
    copse_dir=$run/copse-$h
    enable_in "$copse_dir"
    hook=$(printf 'env COPSE_DIR=%q%s %q shim --agent %q' "$copse_dir" "$event" "$bin" "$agent")
    echo "$h: $hook" >>"$run/hooks.txt"
    echo "moatbench.sh: $h: copse-hooks (--agent $agent)" >&2
    "$om" bench --hook "$hook" --host "$h" --format json >"$run/ours-$h.json" \
        || die "openmoat bench --hook ... --host $h failed"
    stop_daemon "$copse_dir"
    echo "moatbench.sh: $h: openmoat default policy" >&2
    "$om" bench --host "$h" --format json >"$run/theirs-$h.json" \
        || die "openmoat bench --host $h failed"
done
sed 's/^/moatbench.sh: hook for /' "$run/hooks.txt" >&2
if [ -n "$out_dir" ]; then
    mkdir -p "$out_dir"
    cp "$run"/ours-*.json "$run"/theirs-*.json "$run/hooks.txt" "$out_dir"/
fi

# --- the table --------------------------------------------------------------------------
python3 - "$run" "$OPENMOAT_VERSION" "$bin" "${hosts[@]}" <<'PY'
import json, sys

run, version, binary, hosts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
NOT_THREATS = {"benign", "workflows"}

def load(side, host):
    with open(f"{run}/{side}-{host}.json") as f:
        return json.load(f)

def summary(report):
    cats = report["categories"]
    threat = [r for c, r in cats.items() if c not in NOT_THREATS]
    wf = report.get("workflows", {}).values()
    return {
        "threats": sum(r["runs"] for r in threat),
        "blocked": sum(r["blocked"] for r in threat),
        "asked": sum(r["asked"] for r in threat),
        "sandboxed": sum(r["sandboxed"] for r in threat),
        "fp": len(report.get("false_positives", [])),
        "errors": sum(r["error"] for r in cats.values()),
        "wf_asks": sum(t["asks"] for t in wf),
        "wf_expected": sum(t["expected_asks"] for t in report.get("workflows", {}).values()),
        "mismatches": len(report.get("mismatches", [])),
    }

def caught(row):
    return row["blocked"] + row["asked"]

ours = {h: load("ours", h) for h in hosts}
theirs = {h: load("theirs", h) for h in hosts}

print(f"MoatBench (openmoat {version}) — ours: `{binary}`; theirs: OpenMoat's default policy\n")
print("| host | ours blocked | ours asked | ours caught | ours FP | ours errors | ours workflow asks | "
      "theirs blocked | theirs asked | theirs caught | theirs sandboxed | theirs FP | theirs errors | theirs workflow asks |")
print("|---" * 14 + "|")
tot = {"o": {}, "t": {}}
for h in hosts:
    o, t = summary(ours[h]), summary(theirs[h])
    for side, s in (("o", o), ("t", t)):
        for k, v in s.items():
            tot[side][k] = tot[side].get(k, 0) + v
    def cells(s, sandbox):
        c = [str(s["blocked"]), str(s["asked"]), f'{s["blocked"] + s["asked"]}/{s["threats"]}']
        if sandbox:
            c.append(str(s["sandboxed"]))
        return c + [str(s["fp"]), str(s["errors"]), f'{s["wf_asks"]}/{s["wf_expected"]}']
    print("| " + " | ".join([h] + cells(o, False) + cells(t, True)) + " |")
if len(hosts) > 1:
    o, t = tot["o"], tot["t"]
    print("| **total** | " + " | ".join(
        [str(o["blocked"]), str(o["asked"]), f'{o["blocked"] + o["asked"]}/{o["threats"]}',
         str(o["fp"]), str(o["errors"]), f'{o["wf_asks"]}/{o["wf_expected"]}',
         str(t["blocked"]), str(t["asked"]), f'{t["blocked"] + t["asked"]}/{t["threats"]}',
         str(t["sandboxed"]), str(t["fp"]), str(t["errors"]), f'{t["wf_asks"]}/{t["wf_expected"]}']) + " |")

cats = sorted({c for h in hosts for side in (ours, theirs) for c in side[h]["categories"]},
              key=lambda c: (c in NOT_THREATS, c))
print("\nCaught (blocked + asked) per category, ours / theirs, out of the runs:\n")
print("| category | " + " | ".join(hosts) + (" | total |" if len(hosts) > 1 else " |"))
print("|---" * (len(hosts) + 1 + (len(hosts) > 1)) + "|")
for c in cats:
    row, to, tt, tr = [], 0, 0, 0
    for h in hosts:
        ro = ours[h]["categories"].get(c)
        rt = theirs[h]["categories"].get(c)
        if ro is None and rt is None:
            row.append("–")
            continue
        runs = (ro or rt)["runs"]
        co = caught(ro) if ro else 0
        ct = caught(rt) if rt else 0
        to, tt, tr = to + co, tt + ct, tr + runs
        row.append(f"{co} / {ct} of {runs}")
    if len(hosts) > 1:
        row.append(f"{to} / {tt} of {tr}")
    name = c if c not in NOT_THREATS else f"{c} (not a threat)"
    print(f"| {name} | " + " | ".join(row) + " |")

print("\nMismatches against the scenarios' expectations (from the bench's report): "
      + ", ".join(f"{h} ours {summary(ours[h])['mismatches']} / theirs {summary(theirs[h])['mismatches']}"
                  for h in hosts))
PY
