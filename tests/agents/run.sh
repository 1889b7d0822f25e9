#!/usr/bin/env bash
# Installs the real agents (Claude Code, Gemini CLI, Codex, GitHub Copilot CLI; pinned,
# from the npm registry, cached between runs) and
# runs the shim's end-to-end suite against them. Called by .ci/run.
#   COPSE_AGENTS_CACHE  where the agents are installed (default ~/.cache/copse-hooks-agents)
#   COPSE_HOOKS_BIN     the copse-hooks binary (default: target/debug/copse-hooks, built here)
set -euo pipefail
cd "$(dirname "$0")/../.."

CLAUDE_CODE=2.1.332
GEMINI_CLI=0.61.0
CODEX=0.171.0
COPILOT=1.0.102
cache="${COPSE_AGENTS_CACHE:-$HOME/.cache/copse-hooks-agents}"
stamp="claude-code@$CLAUDE_CODE gemini-cli@$GEMINI_CLI codex@$CODEX copilot@$COPILOT"

need() { command -v "$1" >/dev/null 2>&1; }
if ! need node || ! need npm || ! need python3; then
    if need apt-get; then
        sudo_="" ; [ "$(id -u)" = 0 ] || sudo_="sudo"
        $sudo_ apt-get update -qq
        $sudo_ apt-get install -y -qq nodejs npm python3 >/dev/null
    else
        echo "tests/agents: node, npm and python3 are required" >&2
        exit 1
    fi
fi

if [ "$(cat "$cache/.installed" 2>/dev/null)" != "$stamp" ]; then
    echo "tests/agents: installing $stamp into $cache"
    mkdir -p "$cache"
    npm install --prefix "$cache" --no-audit --no-fund --loglevel=error \
        "@anthropic-ai/claude-code@$CLAUDE_CODE" "@google/gemini-cli@$GEMINI_CLI" "@openai/codex@$CODEX" \
        "@github/copilot@$COPILOT"
    echo "$stamp" > "$cache/.installed"
fi

bin="${COPSE_HOOKS_BIN:-}"
if [ -z "$bin" ]; then
    cargo build -q -p copse-hooks-cli
    bin=target/debug/copse-hooks
fi
exec python3 tests/agents/e2e.py --bin "$bin" --agents-bin "$cache/node_modules/.bin" "$@"
